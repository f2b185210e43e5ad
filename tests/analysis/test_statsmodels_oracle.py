"""The agreement statistics equal statsmodels' values (statsmodels is a test-only oracle).

:mod:`agent_eval.analysis._binary_stats` and :func:`~agent_eval.analysis._stability.fleiss_kappa`
write the formulas out (statsmodels is no longer a dependency); here every 2x2 table of up to
9 items, every Wilson count up to 40, the tables of the calibration and comparison tests and of
the recorded fixtures' labels are checked against statsmodels, value for value.
"""

from __future__ import annotations

import itertools
import json
import math
import random
import warnings
from pathlib import Path

import numpy as np
import pytest
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.inter_rater import fleiss_kappa as sm_fleiss_kappa
from statsmodels.stats.proportion import proportion_confint

from agent_eval.analysis._binary_stats import (
    cohen_kappa,
    kappa_interval,
    mcnemar_p,
    table_2x2,
    wilson_interval,
)
from agent_eval.analysis._stability import fleiss_kappa

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"


def _vectors(table: list[list[int]]) -> tuple[list[int], list[int]]:
    a: list[int] = []
    b: list[int] = []
    for i, j in itertools.product((0, 1), (0, 1)):
        a += [i] * table[i][j]
        b += [j] * table[i][j]
    return a, b


def _tables(most: int) -> list[list[list[int]]]:
    """Every 2x2 table with 1..``most`` items."""
    return [
        [[n00, n01], [n10, n11]]
        for n00, n01, n10, n11 in itertools.product(range(most + 1), repeat=4)
        if 0 < n00 + n01 + n10 + n11 <= most
    ]


def _calibration_and_comparison_tables() -> list[list[list[int]]]:
    """The tables the calibration, comparison and binary-stats tests use, and the fixtures'."""
    tables = [
        [[20, 5], [10, 15]], [[3, 7], [9, 1]], [[40, 2], [5, 3]], [[0, 4], [6, 0]],
        [[1, 0], [0, 49]], [[12, 7], [9, 22]], [[2, 1], [1, 3]], [[30, 10], [2, 58]],
    ]  # fmt: skip
    labels = [
        json.loads(line)["label"]
        for line in (FIXTURES / "labels.jsonl").read_text().splitlines()
        if line.strip()
    ]
    for shift in (1, 2, 5):  # the labels against themselves shifted: real margins, disagreement
        tables.append(table_2x2(labels, labels[shift:] + labels[:shift]))
    return tables


def _statsmodels_kappa(table: list[list[int]]) -> object:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return cohens_kappa(np.asarray(table, dtype=float))


def _same(ours: float | None, theirs: float) -> bool:
    """Equal values, ``None`` standing for statsmodels' NaN/inf (never -0.0 vs 0.0 trouble)."""
    if ours is None:
        return not math.isfinite(theirs)
    return ours == float(theirs) + 0.0


@pytest.mark.parametrize("source", ["every table", "test data"])
def test_cohen_kappa_and_interval_equal_statsmodels(source: str) -> None:
    tables = _tables(9) if source == "every table" else _calibration_and_comparison_tables()
    checked = 0
    for table in tables:
        a, b = _vectors(table)
        result = _statsmodels_kappa(table)
        assert _same(cohen_kappa(a, b), result.kappa), table  # type: ignore[attr-defined]
        interval = kappa_interval(a, b)
        if interval is not None:
            checked += 1
            low = max(float(result.kappa_low), -1.0)  # type: ignore[attr-defined]
            high = min(float(result.kappa_upp), 1.0)  # type: ignore[attr-defined]
            assert interval == (float(result.std_kappa), low, high), table  # type: ignore[attr-defined]
    assert checked > len(tables) // 2


@pytest.mark.parametrize("source", ["every table", "test data"])
def test_exact_mcnemar_equals_statsmodels(source: str) -> None:
    tables = _tables(9) if source == "every table" else _calibration_and_comparison_tables()
    for table in tables:
        a, b = _vectors(table)
        assert mcnemar_p(a, b) == float(mcnemar(table, exact=True).pvalue), table


@pytest.mark.parametrize("alpha", [0.05, 0.1, 0.01])
def test_wilson_interval_equals_statsmodels(alpha: float) -> None:
    for n in range(1, 41):
        for k in range(n + 1):
            low, high = proportion_confint(k, n, alpha=alpha, method="wilson")
            assert wilson_interval(k, n, alpha) == (float(low), float(high)), (k, n)


def _repeat_tables() -> list[list[list[int]]]:
    """The stability tests' tables and random subject x category tables (2-6 raters)."""
    tables = [[[0, 3], [1, 2], [2, 1]], [[0, 3], [0, 3]], [[2, 1], [1, 2], [3, 0], [0, 3]]]
    rng = random.Random(7)
    for _ in range(300):
        raters, categories = rng.randint(2, 6), rng.randint(2, 3)
        table = []
        for _ in range(rng.randint(1, 60)):
            row = [0] * categories
            for _ in range(raters):
                row[0 if rng.random() < 0.6 else rng.randrange(categories)] += 1
            table.append(row)
        tables.append(table)
    return tables


def test_fleiss_kappa_equals_statsmodels() -> None:
    for table in _repeat_tables():
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            theirs = float(sm_fleiss_kappa(np.asarray(table), method="fleiss"))
        ours = fleiss_kappa(table)
        assert ours == theirs or (math.isnan(ours) and math.isnan(theirs)), table
