"""A run of several metrics is not a formatter comparison (regression: the report paired
goal_accuracy with faithfulness and averaged their scores together)."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from agent_eval._result import Atom, MetricResult
from agent_eval.report._html import render_html
from agent_eval.report._model import build_report


def _claims(make: Callable[..., MetricResult], cid: str, passed: list[bool]) -> MetricResult:
    atoms = tuple(
        Atom(text=f"s{i}", label="1" if p else "0", passed=p) for i, p in enumerate(passed)
    )
    base = make(cid, "1").model_dump()
    update = {"metric": "faithfulness@1", "unit_id": "turn:1", "verdict": None,
              "score": sum(passed) / len(passed), "atoms": atoms, "formatter": "none"}  # fmt: skip
    return MetricResult.model_validate({**base, **update})


def test_metrics_are_summarised_apart_and_never_paired(
    make_result: Callable[..., MetricResult],
) -> None:
    rows = [
        make_result("a", "1"),
        make_result("b", "1"),
        _claims(make_result, "a", [True, False]),
        _claims(make_result, "b", [True, False]),
    ]
    data = build_report(rows)
    assert data.comparison is None
    assert data.summary.mean_score is None and data.summary.ci_low is None
    assert data.summary.metric_means == pytest.approx(
        {"faithfulness@1": 0.5, "goal_accuracy@1": 1.0}
    )
    page = render_html(data)
    assert "Mean score: faithfulness@1" in page and "Mean score: goal_accuracy@1" in page


def test_formatter_variants_of_one_binary_metric_are_still_paired(
    make_result: Callable[..., MetricResult],
) -> None:
    rows = [
        make_result("a", "1"),
        make_result("a", "0", formatter="json@1"),
        _claims(make_result, "a", [True]),
    ]
    data = build_report(rows)
    assert data.comparison is not None
    assert sorted(v.variant for v in data.comparison.variants) == [
        "json@1 · goal_accuracy@1",
        "transcript@1 · goal_accuracy@1",
    ]
