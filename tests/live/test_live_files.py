"""What ``serve`` keeps beside its results for ``report`` and ``rag`` (trial7 #2): every
revision's conversation, the judge's rendering and, for a turn metric, units and turns."""

from __future__ import annotations

import asyncio
from pathlib import Path

from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli._app import app
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.live._scorer import Job, LiveScorer
from agent_eval.metrics._groundedness import Groundedness
from agent_eval.run._artifacts import read_units
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore, RunRecord
from agent_eval.run._turns import read_turns
from agent_eval.testing import ClaimScript, FakeModelServer

POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
FIRST = "You can return it within 14 days."
SECOND = "Shipping back is free."


def _trace(turns: list[tuple[str, str]]) -> AgentTrace:
    return rag_trace(
        conversation_id="returns-1",
        turns=[RagTurn(question=q, passages=[Passage(text=POLICY)], answer=a) for q, a in turns],
        container="test",
        path="-",
    )


def test_a_turn_metric_live_keeps_units_and_turns_for_rag(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    ClaimScript(
        statements={FIRST: [FIRST], SECOND: [SECOND]},
        labels={FIRST: ("SUPPORTED", "within 14 calendar days of receipt")},
    ).install(fake_server)
    out = tmp_path / "out"

    async def run() -> None:
        judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="not-needed")
        store = ResultStore(out)
        store.start_run(RunRecord(run_id="live", started_at="2026-01-01T00:00:00Z", config={}))
        engine = Engine(
            metric=Groundedness(),
            formatter=get_formatter("ragas-pretty@1"),
            judge=judge,
            run_id="live",
            store=store,
        )
        scorer = LiveScorer(engine, store, directory=out)
        scorer.start()
        scorer.submit(Job(_trace([("Can I return it?", FIRST)])))
        await scorer.drain(30)
        scorer = LiveScorer(engine, store, directory=out)
        scorer.start()
        later = [("Can I return it?", FIRST), ("Who pays shipping?", SECOND)]
        scorer.submit(Job(_trace(later), revision=1, note="next turn"))
        await scorer.drain(30)
        await judge.aclose()
        store.close()

    asyncio.run(run())
    # a line per revision; readers keep each unit's latest
    assert len(read_turns(out)) == 3
    assert sorted(read_units(out)) == [("returns-1", "turn:1"), ("returns-1", "turn:2")]
    result = CliRunner().invoke(app, ["rag", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "groundedness 1.00" in result.output and "groundedness 0.00" in result.output
    assert "generation failures: hallucination: 1" in result.output
