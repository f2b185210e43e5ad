"""Per-row usage: unknown usage is estimated with o200k, cache hits are counted, stores migrate."""

from __future__ import annotations

import sqlite3
from pathlib import Path
from typing import Any

from agent_eval._result import MetricResult
from agent_eval._tokens import count_tokens
from agent_eval.errors import JudgeOutputError
from agent_eval.judges._base import JudgeReply
from agent_eval.metrics._base import CallTally
from agent_eval.run._cache import CachedJudge, CacheEntry, JudgeCache
from agent_eval.run._store import _SUPERSEDED_TRIGGER, SUPERSEDED_TABLE, ResultStore, load_results

from .fakes import CountingJudge, Verdict, request


def reply(**kwargs: Any) -> JudgeReply[Any]:
    fields: dict[str, Any] = {
        "output": Verdict(reason="r", verdict="1"),
        "model": "m",
        "input_tokens": 0,
        "output_tokens": 0,
        "latency_ms": 1.0,
        "attempts": 1,
        "raw_reply": '{"reason": "r", "verdict": "1"}',
    }
    return JudgeReply(**(fields | kwargs))


def test_a_reply_without_usage_is_estimated_from_its_request_and_reply() -> None:
    asked = request("the conversation to judge, with a few words in it")
    prompt = count_tokens("judge") + count_tokens(
        "the conversation to judge, with a few words in it"
    )
    tally = CallTally()
    tally.add_reply(reply(usage_known=False, attempts=2), request=asked)
    tally.add_reply(reply(input_tokens=40, output_tokens=7), request=asked)  # reported
    fields = tally.usage_fields()
    assert fields["usage_known"] is False
    assert (fields["input_tokens"], fields["output_tokens"]) == (40, 7)
    completion = count_tokens('{"reason": "r", "verdict": "1"}')
    assert fields["estimated_input_tokens"] == 2 * prompt + 40
    assert fields["estimated_output_tokens"] == 2 * completion + 7
    assert (fields["judge_calls"], fields["cached_calls"], fields["attempts"]) == (2, 0, 3)


def test_a_partial_report_is_kept_when_it_is_larger_than_the_estimate() -> None:
    tally = CallTally()
    tally.add_reply(reply(usage_known=False, input_tokens=10_000), request=request("x"))
    assert tally.usage_fields()["estimated_input_tokens"] == 10_000


def test_a_failed_call_without_usage_is_estimated_too() -> None:
    tally = CallTally()
    error = JudgeOutputError("bad", attempts=3, raw_reply="not json", usage_known=False)
    tally.add_error(error, 5.0, request=request("hello there"))
    fields = tally.usage_fields()
    assert fields["usage_known"] is False
    assert fields["estimated_input_tokens"] == 3 * (
        count_tokens("judge") + count_tokens("hello there")
    )
    assert fields["estimated_output_tokens"] == 3 * count_tokens("not json")


def test_known_usage_has_no_estimate_and_cached_replies_are_free_and_known() -> None:
    tally = CallTally()
    tally.add_reply(reply(input_tokens=3, output_tokens=1), request=request("a"))
    tally.add_reply(reply(cached=True, attempts=0, usage_known=False), request=request("b"))
    fields = tally.usage_fields()
    assert fields["usage_known"] is True  # the cached call cost exactly 0 in this run
    assert fields["estimated_input_tokens"] is None and fields["estimated_output_tokens"] is None
    assert (fields["judge_calls"], fields["cached_calls"]) == (2, 1)


async def test_the_cache_keeps_whether_the_original_usage_was_known(tmp_path: Path) -> None:
    class NoUsageJudge(CountingJudge):
        async def ask(self, req: Any) -> JudgeReply[Any]:
            got = await super().ask(req)
            return JudgeReply(**{**got.__dict__, "usage_known": False})

    with JudgeCache(tmp_path / "c.db") as cache:
        first = await CachedJudge(NoUsageJudge(), cache).ask(request("q"))
        again = await CachedJudge(NoUsageJudge(), cache).ask(request("q"))
    assert not first.cached and not first.usage_known
    assert again.cached and not again.usage_known
    with JudgeCache(tmp_path / "c.db") as cache:
        (key,) = [k for (k,) in sqlite3.connect(cache.path).execute("SELECT key FROM judge_calls")]
        entry = cache.get(key)
    assert entry is not None and entry.usage_known is False


def test_an_older_cache_file_gets_the_column_and_reads_as_known(tmp_path: Path) -> None:
    path = tmp_path / "old.db"
    db = sqlite3.connect(path)
    db.execute(
        "CREATE TABLE judge_calls (key TEXT PRIMARY KEY, model TEXT NOT NULL, output TEXT NOT "
        "NULL, input_tokens INTEGER NOT NULL, output_tokens INTEGER NOT NULL, raw_reply TEXT, "
        "created_at TEXT NOT NULL) WITHOUT ROWID"
    )
    db.execute("INSERT INTO judge_calls VALUES ('k', 'm', '{}', 10, 2, 'raw', '2026-01-01')")
    db.commit()
    db.close()
    with JudgeCache(path) as cache:
        assert cache.get("k") == CacheEntry("m", "{}", 10, 2, "raw", usage_known=True)
        cache.put("n", CacheEntry("m", "{}", 0, 0, None, usage_known=False))
        got = cache.get("n")
    assert got is not None and got.usage_known is False


def row(**kwargs: Any) -> MetricResult:
    fields: dict[str, Any] = {
        "run_id": "r", "conversation_id": "c", "metric": "goal_accuracy@1",
        "formatter": "ragas-pretty@1", "formatter_fingerprint": "f", "prompt_sha256": "p",
        "judge_model": "gpt-4o-mini", "status": "ok", "verdict": "1", "score": 1.0,
        "started_at": "2026-01-01T00:00:00Z",
    }  # fmt: skip
    return MetricResult(**(fields | kwargs))


def test_usage_fields_round_trip_and_an_older_store_gets_them(tmp_path: Path) -> None:
    with ResultStore(tmp_path) as store:
        store.add(row(conversation_id="old"))
    db = sqlite3.connect(tmp_path / "results.db")  # as an older agent-eval wrote it
    db.execute(f"DROP TRIGGER {_SUPERSEDED_TRIGGER}")
    db.execute(f"DROP TABLE {SUPERSEDED_TABLE}")
    for name in ("usage_known", "estimated_input_tokens", "estimated_output_tokens",
                 "judge_calls", "cached_calls"):  # fmt: skip
        db.execute(f"ALTER TABLE results DROP COLUMN {name}")
    db.commit()
    db.close()
    unknown = row(
        conversation_id="new", usage_known=False, estimated_input_tokens=900,
        estimated_output_tokens=40, judge_calls=2, cached_calls=1, attempts=1,
    )  # fmt: skip
    with ResultStore(tmp_path) as store:
        (old,) = store.results()
        assert (old.usage_known, old.judge_calls, old.estimated_input_tokens) == (True, 0, None)
        store.add(unknown)
        by_id = {r.conversation_id: r for r in store.results()}
    assert by_id["new"] == unknown
    assert {r.conversation_id: r for r in load_results(tmp_path / "results.jsonl")}["new"] == (
        unknown
    )
    assert unknown.best_tokens == (900, 40)
    assert row(input_tokens=5, output_tokens=1).best_tokens == (5, 1)
