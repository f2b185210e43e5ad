"""The judge-call cache: keys, storage, modes, concurrency, and no secrets in the file."""

from __future__ import annotations

import asyncio
import sqlite3
from pathlib import Path

import pytest

from agent_eval.errors import JudgeTransportError, StoreError
from agent_eval.run._cache import CachedJudge, CacheEntry, JudgeCache, request_key

from .fakes import CountingJudge, Verdict, request


def test_key_is_canonical_and_sensitive_to_every_sent_part() -> None:
    assert request_key({"a": 1, "b": [1, 2]}) == request_key({"b": [1, 2], "a": 1})
    judge = CachedJudge(CountingJudge(), None, mode="off")
    base = judge.key(request("hello"))
    assert len(base) == 64
    assert judge.key(request("hello")) == base
    variants = [
        judge.key(request("hello!")),
        judge.key(request("hello", temperature=0.5)),
        judge.key(request("hello", max_tokens=10)),
        judge.key(request("hello", seed=1)),
        CachedJudge(CountingJudge(model="other"), None, mode="off").key(request("hello")),
        CachedJudge(CountingJudge(), None, "off", {"mode": "tools"}).key(request("hello")),
    ]
    assert len({base, *variants}) == len(variants) + 1


def test_entries_round_trip_and_survive_reopening(tmp_path: Path) -> None:
    entry = CacheEntry("m", '{"x": 1}', 10, 2, "raw")
    with JudgeCache(tmp_path / "c.db") as cache:
        assert cache.get("k") is None
        cache.put("k", entry)
        assert cache.get("k") == entry
    with JudgeCache(tmp_path / "c.db") as cache:
        assert cache.get("k") == entry
        assert len(cache) == 1
    mode = sqlite3.connect(tmp_path / "c.db").execute("PRAGMA journal_mode").fetchone()[0]
    assert mode == "wal"


def test_put_many_stores_a_batch_in_one_transaction_or_none_of_it(tmp_path: Path) -> None:
    path = tmp_path / "c.db"
    entries = [(f"k{i}", CacheEntry("m", f'{{"x": {i}}}', 10 + i, 2, "raw")) for i in range(5)]
    with JudgeCache(path) as cache:
        cache.put_many(entries)
        assert len(cache) == 5 and cache.get("k3") == entries[3][1]
        with pytest.raises(StoreError, match="judge-call cache error"):
            cache.put_many([("k9", entries[0][1]), ("k10", CacheEntry("m", None, 1, 1, "r"))])  # type: ignore[arg-type]
        assert cache.get("k9") is None and len(cache) == 5  # rolled back whole
    with JudgeCache(path) as again:  # durable
        assert again.get("k4") == entries[4][1]


def test_unusable_file_is_a_store_error(tmp_path: Path) -> None:
    bad = tmp_path / "not-a-db"
    bad.write_bytes(b"this is not sqlite" * 100)
    with pytest.raises(StoreError, match="not-a-db"):
        JudgeCache(bad)


async def test_second_identical_run_makes_zero_calls(tmp_path: Path) -> None:
    texts = [f"conversation {i}" for i in range(20)]
    inner = CountingJudge()
    with JudgeCache(tmp_path / "c.db") as cache:
        first = await asyncio.gather(*(CachedJudge(inner, cache).ask(request(t)) for t in texts))
        assert len(inner.calls) == 20
        judge = CachedJudge(inner, cache)
        second = await asyncio.gather(*(judge.ask(request(t)) for t in texts))
    assert len(inner.calls) == 20
    assert (judge.hits, judge.misses) == (20, 0)
    assert [r.output for r in second] == [r.output for r in first]
    assert all(isinstance(r.output, Verdict) for r in second)
    hit = second[0]
    assert (hit.cached, hit.attempts, hit.input_tokens, hit.output_tokens) == (True, 0, 0, 0)
    assert hit.raw_reply == first[0].raw_reply and hit.model == first[0].model


async def test_refresh_calls_again_and_off_bypasses(tmp_path: Path) -> None:
    inner = CountingJudge()
    with JudgeCache(tmp_path / "c.db") as cache:
        await CachedJudge(inner, cache).ask(request("a"))
        refresh = CachedJudge(inner, cache, mode="refresh")
        reply = await refresh.ask(request("a"))
        assert not reply.cached and len(inner.calls) == 2
        again = await refresh.ask(request("a"))  # refreshed once per run, then reused
        assert again.cached and len(inner.calls) == 2
        off = CachedJudge(inner, cache, mode="off")
        await off.ask(request("b"))
        assert len(inner.calls) == 3 and len(cache) == 1
    with pytest.raises(ValueError, match="needs a JudgeCache"):
        CachedJudge(inner, None, mode="use")


async def test_use_mode_keeps_no_key_per_call(tmp_path: Path) -> None:
    """Regression (issue 33): the set of keys written grew by 64 hex per judge call for a
    long-running ``serve``; only ``refresh`` reads it (tested above), so only it keeps it."""
    with JudgeCache(tmp_path / "c.db") as cache:
        judge = CachedJudge(CountingJudge(), cache)
        await asyncio.gather(*(judge.ask(request(f"conversation {i}")) for i in range(30)))
        assert judge.misses == 30 and len(cache) == 30
        assert not judge._written
        refresh = CachedJudge(CountingJudge(), cache, mode="refresh")
        await refresh.ask(request("conversation 0"))
        assert len(refresh._written) == 1


def test_page_caches_are_bounded_on_request(tmp_path: Path) -> None:
    with JudgeCache(tmp_path / "c.db") as cache:
        assert cache._db.execute("PRAGMA cache_size").fetchone()[0] == -2000  # SQLite's
        cache.bound_page_cache(256)
        assert cache._db.execute("PRAGMA cache_size").fetchone()[0] == -256
        with pytest.raises(ValueError, match="at least 1"):
            cache.bound_page_cache(0)


async def test_identical_concurrent_requests_make_one_call(tmp_path: Path) -> None:
    inner = CountingJudge(delay_s=0.05)
    with JudgeCache(tmp_path / "c.db") as cache:
        judge = CachedJudge(inner, cache)
        replies = await asyncio.gather(*(judge.ask(request("same")) for _ in range(10)))
    assert len(inner.calls) == 1
    assert sum(r.cached for r in replies) == 9
    assert not judge._locks  # per-key locks are released


async def test_failures_are_not_cached(tmp_path: Path) -> None:
    inner = CountingJudge(fail=1)
    with JudgeCache(tmp_path / "c.db") as cache:
        judge = CachedJudge(inner, cache)
        with pytest.raises(JudgeTransportError):
            await judge.ask(request("x"))
        assert len(cache) == 0
        reply = await judge.ask(request("x"))
    assert not reply.cached and len(inner.calls) == 2


async def test_two_processes_worth_of_connections_share_one_file(tmp_path: Path) -> None:
    inner = CountingJudge()
    with JudgeCache(tmp_path / "c.db") as one, JudgeCache(tmp_path / "c.db") as two:
        await CachedJudge(inner, one).ask(request("shared"))
        reply = await CachedJudge(inner, two).ask(request("shared"))
    assert reply.cached and len(inner.calls) == 1


SECRET = "sk-test-4f9c2a7d1e8b6053SECRET"


async def test_cache_file_never_holds_the_api_key(tmp_path: Path, fake_server) -> None:
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.testing import Structured

    fake_server.add_rule(Structured({"reason": "fine", "verdict": "1"}), schema="Verdict")
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key=SECRET)
    with JudgeCache(tmp_path / "c.db") as cache:
        cached = CachedJudge(judge, cache, parameters={"mode": judge.mode})
        first = await asyncio.gather(*(cached.ask(request(f"c{i}")) for i in range(5)))
        again = await cached.ask(request("c0"))
        await cached.aclose()
    assert len(fake_server.requests) == 5 and again.cached
    assert [r.output.verdict for r in first] == ["1"] * 5
    data = b"".join(path.read_bytes() for path in tmp_path.glob("c.db*"))
    assert b"fine" in data  # the replies are in the bytes searched
    assert SECRET.encode() not in data and b"SECRET" not in data
    assert b"Authorization" not in data and b"Bearer" not in data
