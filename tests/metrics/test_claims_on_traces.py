"""Claim-level metrics on real recorded traces: tool results are the answer's context."""

from __future__ import annotations

from pathlib import Path

from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest._pipeline import ingest
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._groundedness import Groundedness
from agent_eval.metrics._units import answer_units
from agent_eval.run._engine import Engine
from agent_eval.testing import ClaimScript, FakeModelServer

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otel"


async def test_tool_results_in_recorded_spans_are_the_context_quotes_are_checked_in(
    fake_server: FakeModelServer,
) -> None:
    traces = ingest(FIXTURES).collect()
    with_tools = [
        (t, u)
        for t in traces
        for u in answer_units(t)
        if u.answer.strip() and any(c.source == "tool" and len(c.text) > 12 for c in u.contexts)
    ]
    assert with_tools, "the fixtures hold tool-using answers"
    trace, unit = with_tools[0]
    tool = next(c for c in unit.contexts if c.source == "tool" and len(c.text) > 12)
    quote = tool.text[:12]
    ClaimScript(
        statements={unit.answer: ["Claim backed by the tool.", "Claim backed by nothing."]},
        labels={"Claim backed by the tool.": ("SUPPORTED", quote)},
    ).install(fake_server)
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-x")
    engine = Engine(metric=Groundedness(), formatter=get_formatter("ragas-pretty@1"), judge=judge)
    rows = await engine.score_all(trace)
    await judge.aclose()
    row = next(r for r in rows if r.unit_id == unit.id)
    assert row.status == "ok" and row.score == 0.5, row
    assert row.span_id == unit.span_id and row.span_id is not None
    first = (row.atoms or ())[0]
    assert (first.label, first.evidence_verified) == ("SUPPORTED", True)
    verify = [r for r in fake_server.requests if r.schema_name == "ClaimJudgements"]
    assert any(tool.text.strip()[:40] in r.text for r in verify)
