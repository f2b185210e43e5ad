"""``score`` streams its conversations through a :class:`TraceSpool` (trial 8 row 4, issue 15).

Before, ``read_inputs`` returned ``list(ingest(...))``: every conversation of the input stayed
alive for the whole run (1.10 GB RSS for a 723 MB file whose ingest alone peaks at 150 MB).
These tests pin what replaces it: the spool gives the same traces back, in order, as often as
asked, keeps no trace alive once its consumer moved on (nor does the render cache), and still
renders each conversation once per formatter across passes.
"""

from __future__ import annotations

import gc
import weakref
from collections import Counter
from pathlib import Path
from typing import ClassVar

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.cli._score_inputs import read_inputs
from agent_eval.formatting import Formatter, NoParams
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest import ingest
from agent_eval.run import _spool as spool_module
from agent_eval.run._artifacts import (
    read_renderings,
    render_all,
    write_rendering_items,
    write_renderings,
)
from agent_eval.run._rendering import RenderCache
from agent_eval.run._spool import TraceSpool

ROOT = Path(__file__).resolve().parents[2]
FIXTURES = ROOT / "fixtures" / "otel"


class Counting(Formatter[NoParams]):
    """``transcript@1``'s text, counting its calls by conversation id."""

    name = "spool-counting"
    version = 1
    calls: ClassVar[Counter[str]] = Counter()

    def render(self, trace: AgentTrace) -> str:
        Counting.calls[trace.conversation_id] += 1
        return get_formatter("transcript@1").render(trace)


def _trace(cid: str, text: str) -> AgentTrace:
    return AgentTrace(
        conversation_id=cid,
        messages=(UserMessage(content=text), AssistantMessage(content=f"re: {text}")),
    )


@pytest.mark.parametrize("budget", [0, 60, None])  # on disk / moved there midway / held
def test_spool_gives_the_ingested_traces_back_in_order_every_time(budget: int | None) -> None:
    expected = list(ingest([str(FIXTURES)]))
    spool = TraceSpool.collect(ingest([str(FIXTURES)]), memory_messages=budget)
    try:
        assert spool.on_disk is (budget is not None)  # the fixtures hold 27 x ~10 messages
        assert len(spool) == len(expected) == 27
        assert spool.conversation_ids == [t.conversation_id for t in expected]
        for _ in range(2):  # every pass reads the same traces, exactly (fields set included)
            back = list(spool)
            assert back == expected
            assert [t.model_dump_json() for t in back] == [t.model_dump_json() for t in expected]
    finally:
        spool.close()


def test_a_pass_keeps_no_trace_alive_once_its_consumer_moved_on(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(spool_module, "MEMORY_MESSAGES", 0)  # past the budget: on disk
    renderings = RenderCache()
    spool, _ = read_inputs([str(FIXTURES)], "auto", renderings)
    assert spool.on_disk
    formatter = get_formatter("transcript@1")
    try:
        for _ in range(2):  # the second pass gets the renderings seeded: still none pinned
            seen: list[weakref.ref[AgentTrace]] = []
            for trace in spool:
                renderings.render(trace, formatter)
                gc.collect()
                assert [ref() for ref in seen] == [None] * len(seen)  # a list kept them all
                seen.append(weakref.ref(trace))
            del trace
            gc.collect()
            assert len(seen) == 27 and seen[-1]() is None
            assert len(renderings) == 0  # the cache drops a rendering with its trace
    finally:
        spool.close()


@pytest.mark.parametrize("budget", [0, 3, None])  # on disk / moved there midway / held
def test_each_trace_is_rendered_once_per_formatter_across_passes(
    tmp_path: Path, budget: int | None
) -> None:
    from agent_eval.formatting import formatters
    from agent_eval.formatting._registry import register

    register(Counting, replace=True)
    Counting.calls.clear()
    counting, transcript = get_formatter("spool-counting@1"), get_formatter("transcript@1")
    traces = [_trace("b", "first b"), _trace("a", "only a"), _trace("b", "second b")]
    renderings = RenderCache()
    spool = TraceSpool.collect(traces, renderings, memory_messages=budget)
    try:
        assert spool.on_disk is (budget is not None)
        for _ in range(3):  # plan, renderings.jsonl, engine: one rendering each
            texts = [renderings.render(t, counting) for t in spool]
        assert Counting.calls == Counter({"b": 2, "a": 1})  # two traces share the id "b"
        assert texts == [transcript.render(t) for t in traces]
        for trace in spool:  # a second formatter made in a later pass is kept too
            renderings.render(trace, transcript)
        identities = [transcript.identity, counting.identity]
        items = list(spool.sorted_renderings(identities))
        assert Counting.calls == Counter({"b": 2, "a": 1})  # read back, not rendered again
        # what render_all + write_renderings give: sorted keys, the last trace of an id wins
        write_rendering_items(tmp_path / "streamed", items)
        write_renderings(tmp_path / "whole", render_all(traces, identities))
        streamed = (tmp_path / "streamed" / "renderings.jsonl").read_bytes()
        assert streamed == (tmp_path / "whole" / "renderings.jsonl").read_bytes()
        assert read_renderings(tmp_path / "streamed")[("b", counting.identity)] == (
            transcript.render(traces[2])
        )
        assert [key for key, _ in items] == sorted(key for key, _ in items)
    finally:
        spool.close()
        formatters.unregister("spool-counting@1")


def test_rewrite_streams_a_change_into_a_new_spool() -> None:
    spool = TraceSpool.collect([_trace("a", "x"), _trace("b", "y")])
    changed = spool.rewrite(
        lambda traces: (
            t.model_copy(update={"reference": f"ref {t.conversation_id}"}) for t in traces
        )
    )
    try:
        assert [t.reference for t in changed] == ["ref a", "ref b"]
        assert changed.conversation_ids == ["a", "b"]
    finally:
        changed.close()


def test_a_small_run_stays_in_memory_and_a_large_one_moves_to_disk() -> None:
    traces = [_trace(f"c{i}", f"turn {i}") for i in range(10)]  # 2 messages each
    held = TraceSpool.collect(traces, memory_messages=20)
    moved = TraceSpool.collect(traces, memory_messages=19)
    try:
        assert not held.on_disk and moved.on_disk
        assert all(a is b for a, b in zip(held, traces, strict=True))  # the same objects
        back = list(moved)
        assert back == traces and not any(a is b for a, b in zip(back, traces, strict=True))
        assert moved.conversation_ids == held.conversation_ids == [f"c{i}" for i in range(10)]
    finally:
        held.close()
        moved.close()
