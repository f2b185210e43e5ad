"""trajectory_match@1, tool_errors@1 and loops@1 on hand-made cases."""

from __future__ import annotations

import pytest

from agent_eval._trace import SpanErrorInfo, ToolMessage
from agent_eval.metrics._trajectory_match import match_trajectory

from .trajectory_cases import calls, conversation, score

REF = calls(("login", {}), ("search", {"q": 1}), ("book", {"id": 2}))


@pytest.mark.parametrize(
    ("order", "made", "verdict", "divergence"),
    [
        ("strict", ["login", "search", "book"], "1", None),
        ("strict", ["login", "book"], "0", {"step": 1, "expected": "search", "actual": "book"}),
        ("strict", ["login", "search", "book", "x"], "0",
         {"step": 3, "expected": None, "actual": "x"}),
        ("strict", ["login", "search"], "0", {"step": 2, "expected": "book", "actual": None}),
        ("in_order", ["login", "x", "search", "y", "book"], "1", None),
        ("in_order", ["login", "book", "search"], "0",
         {"step": 2, "expected": "book", "actual": None}),
        ("in_order", ["x", "search"], "0", {"step": 0, "expected": "login", "actual": "x"}),
        ("any", ["book", "x", "search", "login"], "1", None),
        ("any", ["book", "search"], "0", {"step": 0, "expected": "login", "actual": None}),
    ],
)  # fmt: skip
def test_trajectory_orders_and_the_first_divergence(
    order: str, made: list[str], verdict: str, divergence: object
) -> None:
    trace = conversation(calls(*[(name, {}) for name in made]), REF)
    row = score(f"trajectory_match[order={order}]", trace)
    assert (row.verdict, row.score) == (verdict, float(verdict))
    assert row.details["divergence"] == divergence
    assert row.details["agent_tools"] == made


def test_any_order_counts_duplicates() -> None:
    pairs, divergence = match_trajectory(["get", "get"], ["get", "x"], "any")
    assert pairs == {0: 0} and divergence == {"step": 1, "expected": "get", "actual": None}
    row = score(
        "trajectory_match[order=any]",
        conversation(calls(("get", {})), calls(("get", {}), ("get", {}))),
    )
    assert row.reason == (
        "diverges at reference step 1 (any): get is missing (the agent called it 1 time(s))"
    )


def test_trajectory_atoms_and_missing_reference() -> None:
    made = calls(("login", {}), ("search", {}), ("book", {}), ("extra", {}))
    row = score("trajectory_match", conversation(made, REF))
    assert [(a.text, a.label) for a in row.atoms or ()] == [
        ("login", "match"),
        ("search", "match"),
        ("book", "match"),
        ("extra", "extra"),
    ]
    assert (
        row.reason
        == "diverges at reference step 3 (strict): the reference has ended, the agent called extra"
    )
    skipped = score("trajectory_match", conversation(made, None))
    assert (skipped.status, skipped.error_type) == ("skipped", "missing_reference")


def test_tool_errors_from_flags_and_from_tool_spans() -> None:
    made = calls(("a", {}), ("b", {}), ("c", {}), ("d", {}))
    flagged = ToolMessage(content="Error: no such flight", tool_call_id="c0", is_error=True)
    by_name = ToolMessage(
        content="boom", tool_call_id=None, tool_name="d", span_ids=("00000000000000d0",)
    )
    errors = (
        SpanErrorInfo(trace_id="t" * 32, span_id="00000000000000b0", span_name="execute_tool b",
                      error_type="TimeoutError", message="took too long", tool_call_id="c1"),
        SpanErrorInfo(trace_id="t" * 32, span_id="00000000000000d0", span_name="tool d",
                      message="failed", tool_name="d"),
        SpanErrorInfo(trace_id="t" * 32, span_id="00000000000000e0", span_name="chat",
                      message="an LLM span failed: not a tool error"),
    )  # fmt: skip
    trace = conversation(made, None, results={0: flagged, 3: by_name}, errors=errors)
    row = score("tool_errors", trace)
    assert row.status == "ok" and row.score == 0.25
    assert [a.label for a in row.atoms or ()] == ["error", "error", "ok", "error"]
    assert row.details["errors"] == 3 and row.details["calls"] == 4
    listed = row.details["error_calls"]
    assert [e["name"] for e in listed] == ["a", "b", "d"]  # type: ignore[index,union-attr]
    assert "no such flight" in (row.atoms or ())[0].rationale  # type: ignore[operator]
    assert "TimeoutError: took too long" in (row.atoms or ())[1].rationale  # type: ignore[operator]


def test_tool_errors_skips_a_conversation_without_calls() -> None:
    row = score("tool_errors", conversation((), None))
    assert (row.status, row.error_type, row.error_message) == (
        "skipped",
        "no_tool_calls",
        "the conversation has no tool call",
    )


def test_loops_counts_identical_calls_beyond_the_threshold() -> None:
    made = calls(
        ("get", {"id": 1, "opts": [1, {"a": True}]}),
        ("get", {"id": 2}),
        ("get", {"opts": [1.0, {"a": True}], "id": 1}),  # identical to the first as JSON
        ("get", {"id": 1, "opts": [1, {"a": True}]}),
        ("get", {"id": 1, "opts": [{"a": True}, 1]}),  # array order differs: not identical
    )
    row = score("loops", conversation(made, None))
    assert [a.label for a in row.atoms or ()] == ["ok", "ok", "ok", "repeat", "ok"]
    assert row.score == pytest.approx(4 / 5)
    assert row.details["loops"] == [
        {"call": 'get({"id":1,"opts":[1,{"a":true}]})', "count": 3, "calls": [0, 2, 3]}
    ]
    strict = score("loops[max_identical=1]", conversation(made, None))
    assert strict.metric == "loops@1[max_identical=1]"
    assert [a.label for a in strict.atoms or ()] == ["ok", "ok", "repeat", "repeat", "ok"]
    assert score("loops", conversation((), None)).error_type == "no_tool_calls"


def test_a_reused_call_id_pairs_each_result_with_the_open_call() -> None:
    # tau-bench recordings reuse call ids; the second result answers the second call
    first, second = calls(("a", {}), ("b", {}))
    second = second.model_copy(update={"id": first.id})
    results = {
        0: ToolMessage(content="fine", tool_call_id=first.id),
        1: ToolMessage(content="Error: nope", tool_call_id=first.id, is_error=True),
    }
    row = score("tool_errors", conversation((first, second), None, results=results))
    assert [a.label for a in row.atoms or ()] == ["ok", "error"]
