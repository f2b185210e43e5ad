"""Agreement statistics against hand-computed cases."""

from __future__ import annotations

import math

import pytest

from agent_eval.analysis._binary_stats import (
    cohen_kappa,
    kappa_interval,
    kappa_interval_undefined,
    mcnemar_p,
    table_2x2,
    wilson_interval,
)


def _vectors(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i in (0, 1):
        for j in (0, 1):
            a += [i] * table[i][j]
            b += [j] * table[i][j]
    return a, b


def test_table_counts_rows_a_columns_b() -> None:
    assert table_2x2([0, 0, 1, 1, 1], [0, 1, 0, 1, 1]) == [[1, 1], [1, 2]]


def test_table_rejects_non_binary_and_unequal_lengths() -> None:
    with pytest.raises(ValueError, match="0 or 1"):
        table_2x2([0, 2], [0, 1])
    with pytest.raises(ValueError, match="length"):
        table_2x2([0], [0, 1])


def test_kappa_by_hand() -> None:
    # po = 35/50 = 0.7; pe = 0.5*0.6 + 0.5*0.4 = 0.5; kappa = (0.7-0.5)/(1-0.5) = 0.4
    a, b = _vectors([[20, 5], [10, 15]])
    assert cohen_kappa(a, b) == pytest.approx(0.4)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ([[20, 5], [10, 15]], 0.4),
        ([[3, 7], [9, 1]], -0.6),
        ([[40, 2], [5, 3]], 0.38596491228070173),
        ([[0, 4], [6, 0]], -0.9230769230769229),
        ([[1, 0], [0, 49]], 1.0),
        ([[12, 7], [9, 22]], 0.3344425956738768),
    ],
)
def test_kappa_pinned_to_scikit_learns_values(table: list[list[int]], expected: float) -> None:
    """Values scikit-learn 1.9.1's cohen_kappa_score gave before it was dropped (same tables)."""
    a, b = _vectors(table)
    assert cohen_kappa(a, b) == pytest.approx(expected, abs=1e-12)


def test_kappa_perfect_and_undefined() -> None:
    assert cohen_kappa([0, 1, 1, 0], [0, 1, 1, 0]) == pytest.approx(1.0)
    assert cohen_kappa([1, 1, 1], [1, 1, 1]) is None
    assert cohen_kappa([], []) is None
    assert kappa_interval([1, 1], [1, 1]) is None


def test_a_zero_width_kappa_interval_is_undefined_with_its_reason() -> None:
    """trial7 #16: perfect agreement at n=3 printed [1.000, 1.000], a constant rater
    [0.000, 0.000]: the large-sample standard error is 0 there, so no interval is given."""
    assert cohen_kappa([0, 1, 1], [0, 1, 1]) == pytest.approx(1.0)
    assert kappa_interval([0, 1, 1], [0, 1, 1]) is None
    assert kappa_interval_undefined([0, 1, 1], [0, 1, 1]) == (
        "all 3 items agree (the large-sample standard error is 0)"
    )
    labels, verdicts = [1, 0, 0, 1, 1], [1, 1, 1, 1, 1]
    assert cohen_kappa(labels, verdicts) == pytest.approx(0.0)
    assert kappa_interval(labels, verdicts) is None
    assert kappa_interval_undefined(labels, verdicts, ("the labels", "the verdicts")) == (
        "the verdicts gave the same outcome (1) to all 5 items "
        "(the large-sample standard error is 0)"
    )
    assert kappa_interval_undefined([1, 1], [1, 1]).startswith("both rater A and rater B")
    assert kappa_interval_undefined([], []) == "no item has both ratings"
    a, b = _vectors([[20, 5], [10, 15]])
    assert kappa_interval_undefined(a, b) is None and kappa_interval(a, b) is not None


def test_kappa_interval_matches_fleiss_cohen_everitt_formula() -> None:
    table = [[20, 5], [10, 15]]
    a, b = _vectors(table)
    n = 50
    p = [[c / n for c in row] for row in table]
    row = [sum(r) for r in p]
    col = [p[0][j] + p[1][j] for j in (0, 1)]
    po = p[0][0] + p[1][1]
    pe = row[0] * col[0] + row[1] * col[1]
    diag = sum(p[i][i] * ((1 - pe) - (row[i] + col[i]) * (1 - po)) ** 2 for i in (0, 1))
    off = (1 - po) ** 2 * sum(
        p[i][j] * (col[i] + row[j]) ** 2 for i in (0, 1) for j in (0, 1) if i != j
    )
    var = (diag + off - (po * pe - 2 * pe + po) ** 2) / (n * (1 - pe) ** 4)
    se, low, high = kappa_interval(a, b) or (0.0, 0.0, 0.0)
    assert se == pytest.approx(math.sqrt(var))
    assert low == pytest.approx(0.4 - 1.959963984540054 * se)
    assert high == pytest.approx(0.4 + 1.959963984540054 * se)


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        ([[3, 1], [5, 2]], 2 * (1 + 6) / 64),  # discordant 1 vs 5: 2 * P(X <= 1 | n=6)
        ([[3, 0], [4, 2]], 2 / 16),  # discordant 0 vs 4: 2 * 0.5^4
        ([[3, 0], [0, 2]], 1.0),  # no discordant pairs
        ([[0, 3], [3, 0]], 1.0),  # symmetric
    ],
)
def test_exact_mcnemar_by_hand(table: list[list[int]], expected: float) -> None:
    a, b = _vectors(table)
    assert mcnemar_p(a, b) == pytest.approx(expected)


def test_wilson_interval_by_hand() -> None:
    z = 1.959963984540054
    n, k = 20, 15
    p = k / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    low, high = wilson_interval(k, n) or (0.0, 0.0)
    assert (low, high) == pytest.approx((centre - half, centre + half))


def test_wilson_edges() -> None:
    low, high = wilson_interval(0, 10) or (1.0, 1.0)
    assert low == pytest.approx(0.0, abs=1e-12)
    assert 0 < high < 0.35
    assert wilson_interval(0, 0) is None
