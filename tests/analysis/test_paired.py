"""Paired comparison of formatter variants."""

from __future__ import annotations

import pytest

from agent_eval.analysis._paired import compare_formatters, compare_variants

from .conftest import MakeResult


def kappa_by_formula(a: list[int], b: list[int]) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), computed by hand as the test's oracle."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(k) / n) * (b.count(k) / n) for k in (0, 1))
    return (observed - expected) / (1 - expected)


def _rows(make: MakeResult, formatter: str, verdicts: str) -> list:
    return [
        make(f"c{i}", v if v != "e" else None, formatter=formatter, reason=f"{formatter} says {v}")
        for i, v in enumerate(verdicts)
    ]


def test_pair_counts_flips_kappa_mcnemar(make_result: MakeResult) -> None:
    a = _rows(make_result, "transcript@1", "11110000e1")
    b = _rows(make_result, "json@1", "1100000011")
    cmp = compare_formatters(a + b)
    (pair,) = cmp.pairs
    assert (pair.variant_a, pair.variant_b) == ("transcript@1", "json@1")
    assert pair.n_paired == 9  # c8 errored under transcript
    assert pair.flips_a_pass_b_fail == 2  # c2, c3
    assert pair.flips_a_fail_b_pass == 0
    assert pair.n_agree == 7
    assert pair.agreement == pytest.approx(7 / 9)
    assert pair.mcnemar_p == pytest.approx(0.5)  # 2 * 0.5^2
    va = [1, 1, 1, 1, 0, 0, 0, 0, 1]
    vb = [1, 1, 0, 0, 0, 0, 0, 0, 1]
    assert pair.kappa == pytest.approx(kappa_by_formula(va, vb))
    flipped = {f.conversation_id: f for f in pair.flipped}
    assert set(flipped) == {"c2", "c3"}
    assert flipped["c2"].reason_a == "transcript@1 says 1"
    assert flipped["c2"].reason_b == "json@1 says 0"


def test_variant_summary_ci_tokens_cost_labels(make_result: MakeResult) -> None:
    a = _rows(make_result, "transcript@1", "1110e")
    labels = {"c0": 1, "c1": 0, "c2": 1, "c3": 0}

    def pricing(model: str, tin: int, tout: int) -> float:
        assert model == "gpt-4o-mini"
        return tin * 1e-6 + tout * 2e-6

    cmp = compare_variants({"A": a}, labels=labels, pricing=pricing)
    (v,) = cmp.variants
    assert (v.n_ok, v.n_error, v.n_pass) == (4, 1, 3)
    assert v.mean_score == pytest.approx(0.75)
    assert v.ci_low is not None and v.ci_high is not None
    assert v.ci_low < 0.75 < v.ci_high
    assert (v.input_tokens, v.output_tokens) == (5000, 250)  # 5 rows of 1000 / 50
    assert v.cost_usd == pytest.approx(5000e-6 + 500e-6)
    assert v.n_labelled == 4 and v.label_agree == 3
    assert v.label_accuracy == pytest.approx(0.75)
    assert cmp.pairs == []


def test_unknown_price_is_none_and_three_variants_give_three_pairs(
    make_result: MakeResult,
) -> None:
    groups = {n: _rows(make_result, n, "10") for n in ("x@1", "y@1", "z@1")}
    cmp = compare_variants(groups, pricing=lambda *_: None)
    assert [v.cost_usd for v in cmp.variants] == [None, None, None]
    assert [(p.variant_a, p.variant_b) for p in cmp.pairs] == [
        ("x@1", "y@1"),
        ("x@1", "z@1"),
        ("y@1", "z@1"),
    ]
    assert all(p.mcnemar_p == 1.0 and p.agreement == 1.0 for p in cmp.pairs)
