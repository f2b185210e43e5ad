"""faithfulness@1 and groundedness@1 end to end: the real openai judge against the fake server."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from typing import Any

import pytest

from agent_eval._result import MetricResult
from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._base import metrics
from agent_eval.metrics._decomposition import DecompositionCache
from agent_eval.metrics._faithfulness import Faithfulness, FaithfulnessParams
from agent_eval.metrics._groundedness import Groundedness
from agent_eval.metrics._spec import build_metric
from agent_eval.run._engine import Engine
from agent_eval.testing import (
    NO_USAGE,
    ClaimScript,
    FakeModelServer,
    InvalidVerdict,
    RecordedRequest,
    Structured,
    Usage,
)

POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
ANSWER = "You can return it within 14 days, and return shipping is free."
S14 = "You can return the product within 14 days."
SFREE = "Return shipping is free."
QUOTE = "within 14 calendar days of receipt"


def returns_trace(answer: str = ANSWER, contexts: tuple[str, ...] = (POLICY,)) -> AgentTrace:
    turn = RagTurn(
        question="Can I return the kettle I bought?",
        passages=[Passage(text=t, id=f"doc{i}") for i, t in enumerate(contexts)],
        answer=answer,
        reference="Yes, within 14 calendar days, if unused; the reviewer never sees this.",
    )
    return rag_trace(conversation_id="returns", turns=[turn], container="test", path="-")


def script(**overrides: Any) -> ClaimScript:
    settings: dict[str, Any] = {
        "statements": {ANSWER: [S14, SFREE]},
        "labels": {S14: ("SUPPORTED", QUOTE)},
        **overrides,
    }
    return ClaimScript(**settings)


@pytest.fixture
async def judge(fake_server: FakeModelServer) -> AsyncIterator[OpenAIJudge]:
    judge = OpenAIJudge(
        "fake-model", base_url=fake_server.base_url, api_key="sk-x", timeout=15, max_retries=1
    )
    yield judge
    await judge.aclose()


async def score(metric: Any, judge: OpenAIJudge | None, *traces: AgentTrace) -> list[MetricResult]:
    engine = Engine(metric=metric, formatter=get_formatter("ragas-pretty@1"), judge=judge)
    summary = await engine.run(traces)
    assert summary.balanced
    return sorted(summary.results, key=lambda r: (r.conversation_id, r.unit_id))


def test_registered_with_their_identities() -> None:
    assert metrics.get("faithfulness@1") is Faithfulness
    assert metrics.get("groundedness@1") is Groundedness
    assert build_metric("faithfulness").id == "faithfulness@2"  # a bare name: the latest
    assert build_metric("faithfulness@1").id == "faithfulness@1"
    per = build_metric("faithfulness@1[per_statement=true]")
    assert per.id == "faithfulness@1[per_statement=true]"
    assert isinstance(per.params, FaithfulnessParams) and per.params.per_statement
    assert Groundedness().id == "groundedness@1"
    assert Faithfulness().prompt_sha256 != Groundedness().prompt_sha256
    assert len(Faithfulness().prompt_sha256) == 64


async def test_worked_example_faithfulness_is_one_half(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script().install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    assert row.status == "ok" and row.unit_id == "turn:1" and row.score == 0.5
    assert row.verdict is None and row.formatter == "none"
    assert row.prompt_sha256 == Faithfulness().prompt_sha256
    assert [(a.text, a.label, a.passed) for a in row.atoms or ()] == [
        (S14, "1", True),
        (SFREE, "0", False),
    ]
    assert row.details["k_of_n"] == "1 of 2"
    assert row.details["decomposition"] == "new"
    assert row.details["stages"]["decompose"]["calls"] == 1
    assert row.details["stages"]["verify"]["calls"] == 1
    decompose, verify = fake_server.requests
    assert decompose.schema_name == "Statements" and ANSWER in decompose.text
    assert POLICY not in decompose.text
    assert verify.schema_name == "StatementVerdicts"
    assert POLICY in verify.text and "1. " + S14 in verify.text
    # the reviewer sees the context and the statements only: no question, no reference
    assert "the reviewer never sees this" not in verify.text
    assert "kettle" not in verify.text
    stages = row.details["stages"]
    assert (
        row.input_tokens == stages["decompose"]["input_tokens"] + stages["verify"]["input_tokens"]
    )
    assert row.input_tokens > 0 and row.attempts == 2


async def test_worked_example_groundedness_quotes_are_verified(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script().install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.status == "ok" and row.score == 0.5
    supported, unsupported = row.atoms or ()
    assert (supported.label, supported.evidence, supported.evidence_verified) == (
        "SUPPORTED",
        QUOTE,
        True,
    )
    assert (unsupported.label, unsupported.evidence, unsupported.evidence_verified) == (
        "UNSUPPORTED",
        None,
        None,
    )
    assert row.details["quotes_checked"] == 1 and row.details["quotes_verified"] == 1
    assert row.details["n_supported"] == 1 and row.details["n_unsupported"] == 1
    assert "count_disagreement" not in row.details
    assert [r.schema_name for r in fake_server.requests] == ["Claims", "ClaimJudgements"]


async def test_per_statement_judges_each_statement_in_its_own_call(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script().install(fake_server)
    metric = build_metric("faithfulness@1[per_statement=true]")
    (row,) = await score(metric, judge, returns_trace())
    assert row.metric == "faithfulness@1[per_statement=true]" and row.score == 0.5
    verify = [r for r in fake_server.requests if r.schema_name == "StatementVerdict"]
    assert len(verify) == 2
    assert sorted(S14 in r.text for r in verify) == [False, True]
    assert row.details["stages"]["verify"]["calls"] == 2


async def test_misaligned_verdicts_are_reasked_with_the_error(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    one = {"verdicts": [{"statement": S14, "reason": "r", "verdict": "1"}]}
    fake_server.add_rule(Structured(one), schema="StatementVerdicts", times=1)
    swapped = {
        "verdicts": [
            {"statement": SFREE, "reason": "r", "verdict": "0"},
            {"statement": S14, "reason": "r", "verdict": "1"},
        ]
    }
    fake_server.add_rule(Structured(swapped), schema="StatementVerdicts", times=1)
    script().install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    assert row.status == "ok" and row.score == 0.5 and row.details["reasks"] == 2
    verify = [r for r in fake_server.requests if r.schema_name == "StatementVerdicts"]
    assert len(verify) == 3
    assert "expected 2 verdicts" in verify[1].text
    assert "verdict 1 is for 'Return shipping is free.'" in verify[2].text
    assert row.attempts == 4


async def test_verdicts_that_never_align_are_invalid_judge_output_with_the_raw_reply(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    one = {"verdicts": [{"statement": S14, "reason": "r", "verdict": "1"}]}
    fake_server.add_rule(Structured(one), schema="StatementVerdicts")
    script().install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    assert row.status == "error" and row.error_type == "invalid_judge_output"
    assert "expected 2 verdicts" in (row.error_message or "")
    assert row.raw_reply is not None and json.loads(row.raw_reply) == one
    assert row.score is None and row.atoms is None
    assert row.details["stages"]["verify"]["calls"] == 3


@pytest.mark.parametrize("bad", [1, "yes", "1.0", True])
async def test_an_invalid_label_is_reasked_then_invalid_judge_output(
    fake_server: FakeModelServer, judge: OpenAIJudge, bad: object
) -> None:
    base = {"verdicts": [{"statement": S14, "reason": "r", "verdict": bad}]}
    fake_server.add_rule(Structured(base), schema="StatementVerdicts")
    script(statements={ANSWER: [S14]}).install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    assert row.status == "error" and row.error_type == "invalid_judge_output"
    assert row.raw_reply is not None and json.dumps(bad) in row.raw_reply
    assert row.attempts == 1 + 2  # decompose + the first try and one re-ask


async def test_groundedness_invalid_label_keeps_the_raw_reply(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    claims = [{"claim": S14, "label": "PARTIAL", "evidence": QUOTE, "rationale": "r"}]
    fake_server.add_rule(
        InvalidVerdict("PARTIAL", field="claims", base={"claims": claims}),
        schema="ClaimJudgements",
    )
    script(statements={ANSWER: [S14]}).install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.status == "error" and row.error_type == "invalid_judge_output"
    assert row.raw_reply is not None and "PARTIAL" in row.raw_reply


async def test_an_unfound_quote_is_reasked_then_counted_unverified_never_supported(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    invented = ClaimScript(
        statements={ANSWER: [S14, SFREE]},
        labels={S14: ("SUPPORTED", "returns within two weeks"), SFREE: ("SUPPORTED", "free")},
    )
    invented.install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.status == "ok" and row.score == 0.0
    first, second = row.atoms or ()
    assert (first.label, first.judge_label, first.evidence_verified, first.passed) == (
        "UNVERIFIED",
        "SUPPORTED",
        False,
        False,
    )
    assert second.label == "UNVERIFIED" and second.evidence == "free"
    assert row.details["quotes_checked"] == 2 and row.details["quotes_verified"] == 0
    assert row.details["n_unverified"] == 2 and row.details["n_supported"] == 0
    verify = [r for r in fake_server.requests if r.schema_name == "ClaimJudgements"]
    assert len(verify) == 3  # the first call and two re-asks, each naming the quote
    assert "'returns within two weeks' does not occur in the context" in verify[1].text
    assert "unverified_after_reasks" in row.details


async def test_a_reask_can_fix_the_quote(fake_server: FakeModelServer, judge: OpenAIJudge) -> None:
    wrong = [{"claim": S14, "label": "SUPPORTED", "evidence": "two weeks", "rationale": "r"}]
    fake_server.add_rule(Structured({"claims": wrong}), schema="ClaimJudgements", times=1)
    script(statements={ANSWER: [S14]}).install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.score == 1.0 and row.details["reasks"] == 1
    assert (row.atoms or ())[0].evidence_verified is True


async def test_quotes_are_matched_after_the_documented_normalization(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    quote = "“WITHIN 14   calendar\ndays of receipt…”"
    ClaimScript(statements={ANSWER: [S14]}, labels={S14: ("SUPPORTED", quote)}).install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.score == 1.0 and (row.atoms or ())[0].evidence_verified is True
    assert row.details["reasks"] == 0


async def test_contradicted_claims_need_a_quote_too_and_never_pass(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    answer = "Used products can be returned."
    ClaimScript(
        statements={answer: [answer]},
        labels={answer: ("CONTRADICTED", "The product must be unused.")},
    ).install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace(answer=answer))
    (atom,) = row.atoms or ()
    assert (atom.label, atom.evidence_verified, atom.passed) == ("CONTRADICTED", True, False)
    assert row.score == 0.0 and row.details["n_contradicted"] == 1


async def test_a_count_the_model_returns_is_checked_and_never_used(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script(supported_count=2).install(fake_server)
    (row,) = await score(Groundedness(), judge, returns_trace())
    assert row.score == 0.5
    assert "supported_count is 2" in row.details["count_disagreement"]
    assert "the list is used" in row.details["count_disagreement"]


async def test_zero_statements_is_skipped_no_statements_never_a_score(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    refusal = "I don't know."
    ClaimScript(statements={refusal: []}).install(fake_server)
    for metric in (Faithfulness(), Groundedness()):
        (row,) = await score(metric, judge, returns_trace(answer=refusal))
        assert row.status == "skipped" and row.error_type == "no_statements"
        assert row.score is None and row.verdict is None
        assert row.details["stages"]["decompose"]["calls"] == 1
    assert {r.schema_name for r in fake_server.requests} == {"Statements", "Claims"}


async def test_bad_inputs_are_skipped_before_any_call_and_counted(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script().install(fake_server)
    no_context = returns_trace(contexts=())
    blank_context = returns_trace(contexts=("  ",)).model_copy(update={"conversation_id": "blank"})
    empty = returns_trace(answer="").model_copy(update={"conversation_id": "empty"})
    huge = returns_trace(contexts=("word " * 5000,)).model_copy(update={"conversation_id": "huge"})
    good = returns_trace().model_copy(update={"conversation_id": "good"})
    engine = Engine(
        metric=Groundedness(),
        formatter=get_formatter("ragas-pretty@1"),
        judge=judge,
        max_context_tokens=2000,
    )
    summary = await engine.run([no_context, blank_context, empty, huge, good])
    rows = {r.conversation_id: r for r in summary.results}
    assert rows["returns"].error_type == "no_context"
    assert rows["blank"].error_type == "no_context"
    assert rows["empty"].error_type == "no_answer"
    assert rows["huge"].error_type == "context_overflow"
    assert rows["good"].status == "ok"
    assert (summary.scored, summary.skipped, summary.errored, summary.input) == (1, 4, 0, 5)
    assert summary.accounting_line.endswith("1 + 4 + 0 = 5")
    assert len(fake_server.requests) == 2


async def test_pinned_decomposition_is_reused_and_redecompose_asks_again(
    fake_server: FakeModelServer, judge: OpenAIJudge, tmp_path: Any
) -> None:
    script().install(fake_server)
    path = tmp_path / "decompositions.db"
    metric = Faithfulness()
    metric.decompositions = DecompositionCache(path)
    first = await score(metric, judge, returns_trace())
    again = Faithfulness()
    again.decompositions = DecompositionCache(path)
    second = await score(again, judge, returns_trace())
    assert first[0].details["decomposition"] == "new"
    assert second[0].details["decomposition"] == "pinned"
    assert "decompose" not in second[0].details["stages"]
    assert [a.text for a in second[0].atoms or ()] == [S14, SFREE]
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 1
    fresh = Faithfulness()
    fresh.decompositions = DecompositionCache(path, refresh=True)
    third = await score(fresh, judge, returns_trace())
    assert third[0].details["decomposition"] == "new"
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 2
    # another judge model decomposes for itself
    other = Faithfulness()
    other.decompositions = DecompositionCache(path)
    other_judge = OpenAIJudge("other-model", base_url=fake_server.base_url, api_key="sk-x")
    try:
        (row,) = await score(other, other_judge, returns_trace())
    finally:
        await other_judge.aclose()
    assert row.details["decomposition"] == "new"
    assert len(DecompositionCache(path)) == 2


async def test_faithfulness_groundedness_and_goal_accuracy_side_by_side(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    script().install(fake_server)
    trace = returns_trace()
    two_turns = rag_trace(
        conversation_id="two",
        turns=[
            RagTurn(question="q1", passages=[Passage(text=POLICY)], answer=ANSWER),
            RagTurn(question="q2", passages=[], answer="Anything else?"),
        ],
        container="test",
        path="-",
    )
    rows = await score(Faithfulness(), judge, trace, two_turns)
    assert [(r.conversation_id, r.unit_id, r.status) for r in rows] == [
        ("returns", "turn:1", "ok"),
        ("two", "turn:1", "ok"),
        ("two", "turn:2", "skipped"),
    ]


def _sent_tokens(request: RecordedRequest) -> int:
    return sum(count_tokens(str(m.get("content") or "")) for m in request.messages)


async def test_stages_without_usage_carry_estimates_that_add_up_to_the_row(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    """Regression: the stages of a row without usage said 0 tokens while the row was estimated."""
    script(usage=NO_USAGE).install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    assert row.status == "ok" and not row.usage_known and row.input_tokens == 0
    decompose, verify = fake_server.requests
    stages = row.details["stages"]
    for name, request in (("decompose", decompose), ("verify", verify)):
        stage = stages[name]
        assert (stage["usage_known"], stage["input_tokens"], stage["output_tokens"]) == (
            False,
            0,
            0,
        )
        assert stage["estimated_input_tokens"] == _sent_tokens(request)  # o200k of what was sent
        assert stage["estimated_output_tokens"] > 0
    assert row.best_tokens == (
        stages["decompose"]["estimated_input_tokens"] + stages["verify"]["estimated_input_tokens"],
        stages["decompose"]["estimated_output_tokens"]
        + stages["verify"]["estimated_output_tokens"],
    )


async def test_a_stage_with_usage_stays_exact_beside_an_estimated_one(
    fake_server: FakeModelServer, judge: OpenAIJudge
) -> None:
    fake_server.add_rule(
        Structured({"statements": [S14, SFREE]}, usage=Usage(120, 30)), schema="Statements"
    )
    script(usage=NO_USAGE).install(fake_server)
    (row,) = await score(Faithfulness(), judge, returns_trace())
    stages = row.details["stages"]
    assert stages["decompose"] == {
        "calls": 1,
        "input_tokens": 120,
        "output_tokens": 30,
        "attempts": 1,
        "cached_calls": 0,
        "usage_known": True,
    }
    verify = stages["verify"]
    assert not verify["usage_known"] and not row.usage_known
    assert verify["estimated_input_tokens"] == _sent_tokens(fake_server.requests[1])
    assert row.input_tokens == 120
    assert row.best_tokens == (
        120 + verify["estimated_input_tokens"],
        30 + verify["estimated_output_tokens"],
    )
