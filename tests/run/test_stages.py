"""The scoring stage in one process: the rows the run session makes, and resume's rows kept.

:class:`~agent_eval.run._stages.BatchScorer` rebuilds the judge from its settings (the
``openai`` judge against the fake server) and scores batches; the rows equal those of
``agent_eval.score`` on the same conversations (every field but the run id and the times).
"""

from __future__ import annotations

import pickle
from pathlib import Path

import agent_eval
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.formatting._fingerprint import fingerprint
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.judges._base import JudgeSettings
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._decomposition import Decomposition, DecompositionCache
from agent_eval.metrics._faithfulness import Faithfulness
from agent_eval.metrics._spec import build_metric
from agent_eval.run._cache import JudgeCache
from agent_eval.run._stages import BatchItem, BatchScorer, EngineSpec, ScoringSpec
from agent_eval.run._store import result_key
from agent_eval.testing import ClaimScript, FakeModelServer

from .goal_script import script_goal_judge, trace

TIMES = {"run_id", "started_at", "latency_ms"}
TRACES = [trace(f"s{i}", done=i % 2 == 0, extra=f"#{i}#") for i in range(6)]


def _spec(server: FakeModelServer) -> ScoringSpec:
    formatter = get_formatter("transcript@2")
    engine = EngineSpec(metric=build_metric("goal_accuracy"), formatter=formatter,
                        fingerprint=fingerprint(formatter), run_id="run-s")  # fmt: skip
    settings = JudgeSettings(kind="openai", model="fake-model", base_url=server.base_url,
                             api_key_env="STAGES_TEST_KEY", mode="tools")  # fmt: skip
    return ScoringSpec(engines=(engine,), judge=settings, cache_parameters={"mode": "tools"})


SPEND = {"input_tokens", "output_tokens", "cached_calls", "attempts"}
"""What a row paid. Two conversations whose requests are identical (goal accuracy's second
stage, whose prompt does not hold the transcript) share one call: the one whose request is
sent first pays and the other is a cache hit. Which one that is depends on timing when both
are in flight (flaky under load: cached_calls differed), so spend is compared as a multiset."""


def _fields(rows: list[MetricResult]) -> list[dict[str, object]]:
    return sorted((r.model_dump(mode="json", exclude=TIMES | SPEND) for r in rows),
                  key=lambda r: str(r["conversation_id"]))  # fmt: skip


def _spend(rows: list[MetricResult]) -> list[tuple[int, ...]]:
    return sorted((r.input_tokens, r.output_tokens, r.cached_calls, r.attempts) for r in rows)


async def test_a_batch_scores_as_the_run_session_does(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        script_goal_judge(server)
        spec = pickle.loads(pickle.dumps(_spec(server)))  # it travels to workers
        with JudgeCache(tmp_path / "cache.db") as cache:
            scorer = BatchScorer(spec, cache=cache)
            rows = await scorer.score([BatchItem(t) for t in TRACES[:4]])
            rows += await scorer.score([BatchItem(t) for t in TRACES[4:]])
            await scorer.aclose()
        judge = OpenAIJudge("fake-model", base_url=server.base_url)
        one = await agent_eval.ascore(
            TRACES,
            judge=judge,
            formatter="transcript@2",
            cache="use",
            cache_path=tmp_path / "one.db",
        )
        await judge.aclose()
    assert len(rows) == 6 and _fields(rows) == _fields(one.results)
    assert _spend(rows) == _spend(one.results)


async def test_finished_units_are_not_judged_again_nor_returned(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        script_goal_judge(server)
        scorer = BatchScorer(_spec(server))
        first = await scorer.score([BatchItem(TRACES[0])])
        asked = len(server.requests)
        done = {result_key(first[0]): first[0]}
        again = await scorer.score([BatchItem(TRACES[0], done), BatchItem(TRACES[1])])
        await scorer.aclose()
        assert [r.conversation_id for r in again] == ["s1"]
        assert not any("#0#" in r.text for r in server.requests[asked:])


def _claim_spec(server: FakeModelServer, metric: Faithfulness) -> ScoringSpec:
    engine = EngineSpec(metric=metric, formatter=get_formatter("transcript@2"), fingerprint="",
                        run_id="run-c")  # fmt: skip
    settings = JudgeSettings(kind="openai", model="fake-model", base_url=server.base_url,
                             api_key_env="STAGES_TEST_KEY", mode="tools")  # fmt: skip
    return ScoringSpec(engines=(engine,), judge=settings, cache_mode="off")


def _answered(question: str, answer: str) -> AgentTrace:
    return rag_trace(conversation_id=question, container="test", path="-", turns=[
        RagTurn(question=question, answer=answer, passages=[Passage(text="Refunds take 5 days.")])
    ])  # fmt: skip


async def test_a_worker_hands_back_its_decompositions_and_reuses_the_pinned_ones(
    tmp_path: Path,
) -> None:
    pinned = Faithfulness()
    pinned.decompositions = DecompositionCache(tmp_path / "decompositions.db")
    conversations = [_answered("q1", "Refunds take 5 days."), _answered("q2", "It is free.")]
    with FakeModelServer() as server:
        ClaimScript().install(server)
        # pickled, the file-backed store arrives empty, in memory and journaling
        worker = BatchScorer(pickle.loads(pickle.dumps(_claim_spec(server, pinned))))
        assert worker.spec.engines[0].metric.decompositions.path is None
        first = await worker.score_batch([BatchItem(conversations[0])])
        assert [r.details["decomposition"] for r in first.rows] == ["new"]
        assert [d.atoms for d in first.decompositions] == [("Refunds take 5 days.",)]
        assert len(pinned.decompositions) == 0  # the driver's file: nothing written there
        for made in first.decompositions:  # what the driver does with them
            pinned.decompositions.put(made.key, made.atoms, metric=made.metric,
                                      judge_model=made.judge_model)  # fmt: skip
        asked = sum(r.schema_name == "Statements" for r in server.requests)
        # another worker (a resumed run) gets the pinned decomposition with the batch
        other = BatchScorer(pickle.loads(pickle.dumps(_claim_spec(server, pinned))))
        unit = pinned.units(conversations[0])[0]
        key = pinned.decomposition_key(unit, "fake-model")
        name = f"{pinned.name}@{pinned.version}"
        sent = Decomposition(key, ("Refunds take 5 days.",), name, "fake-model")
        again = await other.score_batch([BatchItem(conversations[0], decompositions=(sent,)),
                                         BatchItem(conversations[1])])  # fmt: skip
        await worker.aclose()
        await other.aclose()
    assert sum(r.schema_name == "Statements" for r in server.requests) == asked + 1  # q2 only
    decomposition = {r.conversation_id: r.details["decomposition"] for r in again.rows}
    assert decomposition == {"q1": "pinned", "q2": "new"}
    assert [d.atoms for d in again.decompositions] == [("It is free.",)]  # not the pinned one
    assert [r.score for r in again.rows if r.conversation_id == "q1"] == [first.rows[0].score]
