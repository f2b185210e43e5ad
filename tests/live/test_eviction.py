"""Issue 33 item 3: the receiver's memory bound. Mechanisms only (the RSS figures are the soak
benchmark's, ``bench/live_soak.py``): held spans are packed bytes, scored conversations past the
bound go to ``OUT/live-evicted.sqlite`` and come back whole, and ingest's read caches of closed
conversations are released."""

from __future__ import annotations

from pathlib import Path

import pytest
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions import _history_cache as history_cache
from agent_eval.ingest.conventions._messages import _read_message_json, read_message
from agent_eval.live._buffer import HELD_TRACE_BYTES, SpanBuffer
from agent_eval.live._evicted import EVICTED_NAME, EvictedStore
from agent_eval.live._receiver import ReceiverLimits
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge
from .agent import DONE, live_receiver, provider, run_agent, run_chat_turn, text


def _span(trace: int, span: int, parent: int | None = None) -> SpanRecord:
    return SpanRecord(
        trace_id=f"{trace:032x}",
        span_id=f"{span:016x}",
        parent_span_id=None if parent is None else f"{parent:016x}",
        name="chat",
        attributes={"padding": "p" * 400},
    )


def test_held_spans_are_packed_and_read_back_equal(tmp_path: Path) -> None:
    buffer = SpanBuffer(max_bytes=10_000, store=EvictedStore(tmp_path / EVICTED_NAME))
    spans = [_span(1, 1), _span(1, 2, parent=1)]
    buffer.add(spans, 1000)
    [held] = buffer.pending.values()
    assert all(type(blob) is bytes for blob in held.packed)
    assert held.items == spans


def test_each_trace_is_charged_its_own_objects_once(tmp_path: Path) -> None:
    buffer = SpanBuffer(max_bytes=100_000)
    assert buffer.cost([_span(1, 1), _span(2, 2)], 1000) == 1000 + 2 * HELD_TRACE_BYTES
    buffer.add([_span(1, 1)], 500)
    assert buffer.pending_bytes == 500 + HELD_TRACE_BYTES
    assert buffer.cost([_span(1, 2), _span(2, 3)], 1000) == 1000 + HELD_TRACE_BYTES  # 1 is held
    buffer.add([_span(1, 2)], 500)
    assert buffer.pending_bytes == buffer.pending[f"{1:032x}"].size == 1000 + HELD_TRACE_BYTES


def test_a_conversation_past_the_bound_is_evicted_to_disk_and_read_back_whole(
    tmp_path: Path,
) -> None:
    store = EvictedStore(tmp_path / EVICTED_NAME)
    now = [0.0]
    buffer = SpanBuffer(max_bytes=3000, idle_seconds=1, store=store, clock=lambda: now[0])
    first = [_span(1, 1), _span(1, 2, parent=1)]
    buffer.add(first, 2000)
    now[0] = 5
    closed = buffer.due()
    assert buffer.retain("conv-1", closed) == 0
    assert buffer.admit(2000)  # 2000 + 2000 > 3000: conv-1 leaves memory for the file
    assert "conv-1" not in buffer.retained and store.holds("conv-1")
    assert buffer.retained_bytes == 0 and buffer.stats.evicted_conversations == 1
    assert "conv-1" not in buffer.revisions  # its counter went with it
    assert (tmp_path / EVICTED_NAME).stat().st_size > 0
    late = _span(1, 3, parent=1)  # a late span of its trace: read back whole, re-opened
    buffer.add([late], 500)
    assert not store.holds("conv-1") and buffer.stats.read_back_conversations == 1
    [held] = buffer.pending.values()
    assert held.items == [*first, late] and held.new_spans == 1
    now[0] = 10
    assert buffer.retain("conv-1", buffer.due()) == 1  # its next revision, not a new 0


def test_a_scored_conversation_evicted_by_the_receiver_is_rescored_whole(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Its next turn arrives after it left memory: the revision reads both turns from disk."""
    script_goal_judge(fake_server)
    limits = ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1, max_buffer_bytes=12_000)
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        tracer = sdk.get_tracer("t")
        run_agent(tracer, "kept", [("please book it", "on it")])
        live.wait_idle()
        bare: list[dict[str, object]] = [text("system", "You are a helpful agent.")]
        first_bare = run_chat_turn(tracer, bare, "hi " + "h" * 500, "hello")
        live.wait_idle()
        for n in range(8):  # others push both out of memory
            run_agent(tracer, f"other-{n}", [("x" * 1500, "y")])
            live.wait_idle()
        assert live.receiver.buffer.stats.evicted_conversations >= 2
        store = live.receiver.evicted
        assert store.holds("kept") and store.holds(first_bare)
        assert (tmp_path / "out" / EVICTED_NAME).is_file()
        run_agent(tracer, "kept", [("and?", f"booked {DONE}")])
        live.wait_idle()
        second_bare = run_chat_turn(tracer, bare, "book", f"booked {DONE}")
        live.wait_idle()
        sdk.shutdown()
        assert live.receiver.buffer.stats.read_back_conversations >= 2
    assert not (tmp_path / "out" / EVICTED_NAME).exists()  # removed on stop
    rows = {(r.conversation_id, r.revision): r for r in load_results(tmp_path / "out")}
    kept = rows["kept", 1]
    assert len(kept.trace_ids) == 2 and kept.verdict == "1"
    assert kept.note is not None and "only later spans were read" not in kept.note
    folded = rows[first_bare, 1]  # the bare chat's next turn continues it, from disk
    assert folded.trace_ids == (first_bare, second_bare) and folded.verdict == "1"


def test_closing_conversations_releases_ingest_read_caches(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """The leak of a long-running receiver: per-conversation history arrays and messages."""
    script_goal_judge(fake_server)
    history_cache.clear_history_cache()
    read_message({"role": "user", "content": "warm"})
    assert _read_message_json.cache_info().currsize > 0
    with live_receiver(fake_server, tmp_path / "out") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        long = "a long history message " * 20
        run_agent(sdk.get_tracer("t"), "conv", [(long, "ok"), (long + "2", "ok")])
        sdk.shutdown()
        live.wait_idle()
        assert "conv" not in history_cache._scoped
        assert _read_message_json.cache_info().currsize == 0
    assert len(load_results(tmp_path / "out")) == 1


def test_forget_history_scopes_forgets_only_those(tmp_path: Path) -> None:
    history_cache.clear_history_cache()
    for scope in ("a", "b"):
        array = '[{"role": "user", "content": "%s"}]' % (scope * 300)
        with history_cache.history_scope(scope):
            history_cache.read_history(array, None, lambda data, role: ())
    assert {"a", "b"} <= set(history_cache._scoped)
    assert history_cache.forget_history_scopes(["a", "nope"]) == 1
    assert "a" not in history_cache._scoped and "b" in history_cache._scoped
    history_cache.forget_history_scopes([], everything=True)
    assert not history_cache._entries


def test_the_sqlite_files_serve_keeps_open_have_bounded_page_caches(tmp_path: Path) -> None:
    """SQLite's default page cache is 2,000 KiB per connection, filled as a file grows: serve
    keeps three files open for as long as it runs (issue 33 item 3)."""
    from types import SimpleNamespace

    from agent_eval.cli._serve_cmds import _bound_page_caches
    from agent_eval.live._evicted import PAGE_CACHE_KIB
    from agent_eval.run._cache import JudgeCache
    from agent_eval.run._judge_stack import JudgeStack
    from agent_eval.run._store import ResultStore

    def size(db: object) -> int:
        return int(db.execute("PRAGMA cache_size").fetchone()[0])  # type: ignore[attr-defined]

    evicted = EvictedStore(tmp_path / EVICTED_NAME)
    assert size(evicted._db) == -PAGE_CACHE_KIB
    evicted.close()
    store, cache = ResultStore(tmp_path / "out"), JudgeCache(tmp_path / "cache.db")
    assert size(store._db) == size(cache._db) == -2000  # SQLite's default, for score
    session = SimpleNamespace(stack=JudgeStack(judge=None, cache=cache))  # type: ignore[arg-type]
    _bound_page_caches(session, store)  # type: ignore[arg-type]
    assert size(store._db) == size(cache._db) == -PAGE_CACHE_KIB
    store.close()
    cache.close()


def test_requests_admitted_during_one_sync_stay_within_the_bound(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Regression (issue 33 item 3): room was made before the acknowledgement log's sync, so
    requests admitted while one sync ran were all held after it, each counted against a
    buffer without the others: 9.0 MB held under an 8 MiB bound at the end of a soak."""
    import threading
    import time

    import orjson
    import requests

    from agent_eval.live import _ack_log

    script_goal_judge(fake_server)
    real = _ack_log._fsync
    monkeypatch.setattr(_ack_log, "_fsync", lambda *a: (time.sleep(0.5), real(*a))[1])
    limits = ReceiverLimits(idle_seconds=30, after_root_seconds=0.1)
    with live_receiver(fake_server, tmp_path / "out", limits, ack_log=tmp_path / "log") as live:
        sdk = provider(OTLPSpanExporter(endpoint=f"{live.url}/v1/traces"))
        run_agent(sdk.get_tracer("t"), "kept", [("please book it " * 100, "on it")])
        sdk.shutdown()
        live.wait_idle()
        buffer = live.receiver.buffer
        retained = buffer.retained_bytes
        assert retained > 0 and "kept" in buffer.retained

        def body(n: int) -> bytes:  # a child span (no root: it stays pending, 30 s idle)
            pad = {"key": "pad", "value": {"stringValue": "p" * 3000}}
            span = {"traceId": f"{n:032x}", "spanId": f"{n:016x}", "parentSpanId": "1" * 16,
                    "name": "chat", "attributes": [pad]}  # fmt: skip
            return orjson.dumps({"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]})

        size = len(body(7))
        buffer.max_bytes = int(retained + 1.5 * size)  # room for one more request, not two
        headers = {"Content-Type": "application/json"}
        posts = [
            threading.Thread(
                target=requests.post,
                args=(f"{live.url}/v1/traces",),
                kwargs={"data": body(n), "headers": headers, "timeout": 30},
            )
            for n in (7, 8)
        ]
        for post in posts:
            post.start()
        for post in posts:
            post.join()
        assert len(buffer.pending) == 2  # both acknowledged and held
        assert buffer.held_bytes <= buffer.max_bytes
        assert "kept" not in buffer.retained  # evicted to make room for the second


def test_the_receiver_hands_freed_heap_memory_back_periodically(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    import time

    from agent_eval.live._trim import trim

    trims_here = trim()  # True where there is a malloc_trim (glibc), else nothing is done
    limits = ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1, trim_seconds=0.05)
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        time.sleep(0.5)
        trims = live.receiver.counters["heap_trims"]
    assert trims >= 2 if trims_here else trims == 0
