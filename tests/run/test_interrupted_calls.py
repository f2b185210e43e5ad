"""Judge calls in flight when a run is interrupted are counted (trial6 #2: 56 sent, 54 counted).

A cancelled call returns no reply and raises no judge error, so its requests were in no row.
Now a unit cut short is kept as a row skipped with reason ``interrupted`` that carries the
requests its calls sent, the tokens of the replies read before the interrupt, and the
requests whose reply was never read (usage unknown, estimated); ``--resume`` scores it again.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.run._engine import Engine
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._runs import find_run, finished_results
from agent_eval.run._store import ResultStore, RunRecord, load_results
from agent_eval.testing import FakeModelServer, Structured, Usage

from .goal_script import script_goal_judge, trace

SLOW = "#slow#"


def hang_stage_2(server: FakeModelServer, marker: str = SLOW) -> None:
    """Stage 2 of the traces holding ``marker`` never answers (until the client goes away).

    Their stage 1 answers at once (100 + 20 tokens), with an end state naming ``marker``, which
    stage 2's prompt then quotes.
    """
    inferred = {"user_goal": "get the thing done", "end_state": f"goal reached {marker}"}
    server.add_rule(
        Structured(inferred, usage=Usage(100, 20)), schema="GoalAndOutcome", contains=marker
    )
    verdict = Structured({"reason": "late", "verdict": "1"})
    server.add_rule(verdict, schema="OutcomeComparison", contains=marker, latency=60)
    script_goal_judge(server)


async def _stage_2_of_slow(server: FakeModelServer, n: int) -> None:
    while sum(r.schema_name == "OutcomeComparison" and SLOW in r.text for r in server.requests) < n:
        await asyncio.sleep(0.005)


async def test_calls_in_flight_at_an_interrupt_are_counted(tmp_path: Path) -> None:
    traces = [trace(f"fast{i}", done=True) for i in range(2)]
    traces += [trace(f"slow{i}", done=True, extra=SLOW) for i in range(4)]
    with FakeModelServer() as server:
        hang_stage_2(server)
        judge = OpenAIJudge("fake-model", base_url=server.base_url, api_key="sk-x", timeout=60)
        with ResultStore(tmp_path) as store:
            store.start_run(RunRecord(run_id="run-1", started_at="2026-12-01T00:00:00Z", config={}))
            engine = Engine(
                metric=GoalAccuracy(),
                formatter=get_formatter("ragas-pretty@1"),
                judge=judge,
                run_id="run-1",
                store=store,
                concurrency=4,
                keep_interrupted=True,  # as score keeps them
            )
            run = asyncio.ensure_future(engine.run(traces))
            await asyncio.wait_for(_stage_2_of_slow(server, 4), 30)
            run.cancel()  # what Ctrl-C does to the run's task
            await asyncio.gather(run, return_exceptions=True)
        await judge.aclose()
        received = len(server.requests)

    rows = load_results(tmp_path)
    assert sum(r.attempts for r in rows) == received == 2 * 2 + 4 * 2
    cut = sorted((r for r in rows if r.status == "skipped"), key=lambda r: r.conversation_id)
    assert [r.conversation_id for r in cut] == ["slow0", "slow1", "slow2", "slow3"]
    for row in cut:
        assert row.error_type == INTERRUPTED_SKIP
        assert (row.attempts, row.judge_calls) == (2, 2)
        assert (row.input_tokens, row.output_tokens) == (100, 20)  # stage 1's reply was read
        assert not row.usage_known  # stage 2's never was: its prompt is estimated
        assert row.best_tokens[0] > 100 and row.best_tokens[1] == 20
        assert row.details[INTERRUPTED_SKIP] == {"requests": 2, "unanswered": 1}
        assert row.user_goal == "get the thing done"  # stage 1's output is kept
        assert "2 request(s) sent, 1 of them cut off" in (row.error_message or "")
    assert [r.status for r in rows if r.conversation_id.startswith("fast")] == ["ok", "ok"]
    done = finished_results(find_run(str(tmp_path)))
    assert sorted(key[1] for key in done) == ["fast0", "fast1"]  # --resume scores slow* again
