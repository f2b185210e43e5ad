"""Calibration against labels."""

from __future__ import annotations

import pytest

from agent_eval.analysis._calibration import calibrate, calibrate_results
from agent_eval.errors import ConfigError

from .conftest import MakeResult


def kappa_by_formula(a: list[int], b: list[int]) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), computed by hand as the test's oracle."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(k) / n) * (b.count(k) / n) for k in (0, 1))
    return (observed - expected) / (1 - expected)


def test_confusion_accuracy_and_failure_class() -> None:
    labels = {"a": 0, "b": 0, "c": 0, "d": 1, "e": 1, "f": 1, "g": 1}
    preds = {"a": 0, "b": 0, "c": 1, "d": 0, "e": 1, "f": 1, "g": 1, "x": 1}
    cal = calibrate(preds, labels)
    assert cal.n == 7
    assert cal.confusion == [[2, 1], [1, 3]]
    assert cal.n_agree == 5
    assert cal.accuracy == pytest.approx(5 / 7)
    assert cal.failure_precision == pytest.approx(2 / 3)  # predicted fail: a, b, d
    assert cal.failure_recall == pytest.approx(2 / 3)  # labelled fail: a, b, c
    assert cal.disagreements == ["c", "d"]
    assert cal.unlabelled == ["x"]
    ids = sorted(labels)
    expected = kappa_by_formula([labels[i] for i in ids], [preds[i] for i in ids])
    assert cal.kappa == pytest.approx(expected)
    assert cal.kappa_ci_low is not None and cal.kappa_ci_high is not None
    assert cal.kappa_ci_low < cal.kappa < cal.kappa_ci_high


def test_no_overlap_is_undefined_not_nan() -> None:
    cal = calibrate({"a": 1}, {"b": 0})
    assert cal.n == 0
    assert cal.accuracy is None and cal.kappa is None and cal.failure_recall is None
    assert cal.unpredicted == ["b"]


def test_results_carry_identity_and_skip_errors(make_result: MakeResult) -> None:
    rows = [make_result("a", "1"), make_result("b", "0"), make_result("c", None)]
    cal = calibrate_results(rows, {"a": 1, "b": 1, "c": 0})
    assert cal.identity is not None
    assert cal.identity.formatter == "transcript@1"
    assert "transcript@1#ffffffffffff" in str(cal.identity)
    assert cal.n == 2 and cal.n_agree == 1
    assert cal.unpredicted == ["c"]


def test_mixed_configurations_are_refused(make_result: MakeResult) -> None:
    rows = [make_result("a", "1"), make_result("a", "0", formatter="json@1")]
    with pytest.raises(ConfigError, match="mix 2 configurations"):
        calibrate_results(rows, {"a": 1})
