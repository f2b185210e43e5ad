"""Agreement statistics on paired binary outcomes (verdicts ``0``/``1``): short formulas and scipy.

Every function takes equal-length sequences of ints in ``{0, 1}`` (or a 2x2 count table) and
returns plain floats, or ``None`` where the statistic is undefined (never NaN). The formulas are
written out here (a few lines each) rather than taken from statsmodels, whose install (with the
pandas it pulls) outweighed everything else; the tests assert the values equal statsmodels' on
the project's calibration and comparison data.

- :func:`cohen_kappa`: Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal
  scales", Educational and Psychological Measurement 20(1)), ``(p_o - p_e) / (1 - p_e)``.
- :func:`kappa_interval`: its 95% confidence interval from the large-sample standard error of
  Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted kappa",
  Psychological Bulletin 72(5), eq. 13 (``kappa ± z_{0.975} · SE``, clipped to kappa's range
  [-1, 1]).
- :func:`mcnemar_p`: the exact McNemar test (McNemar 1947): a two-sided binomial test of the
  discordant pairs against p = 1/2, scipy's ``binomtest``.
- :func:`wilson_interval`: the Wilson score interval of a proportion (Wilson 1927, "Probable
  inference, the law of succession, and statistical inference", JASA 22(158); the form of
  Brown, Cai & DasGupta 2001, eq. 4); it stays inside [0, 1] and behaves at 0/n and n/n.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy.stats import binomtest, norm

__all__ = [
    "cohen_kappa",
    "kappa_interval",
    "kappa_interval_undefined",
    "mcnemar_p",
    "table_2x2",
    "wilson_interval",
]


def table_2x2(a: Sequence[int], b: Sequence[int]) -> list[list[int]]:
    """Count table of paired binary outcomes.

    Returns:
        ``[[n(a=0,b=0), n(a=0,b=1)], [n(a=1,b=0), n(a=1,b=1)]]``: rows are ``a``, columns ``b``.

    Raises:
        ValueError: The sequences differ in length or hold values other than 0 and 1.

    """
    if len(a) != len(b):
        raise ValueError(f"paired outcomes differ in length: {len(a)} vs {len(b)}")
    table = [[0, 0], [0, 0]]
    for x, y in zip(a, b, strict=True):
        if x not in (0, 1) or y not in (0, 1):
            raise ValueError(f"binary outcomes must be 0 or 1, got {x!r}, {y!r}")
        table[x][y] += 1
    return table


def _finite(value: float) -> float | None:
    return float(value) + 0.0 if math.isfinite(value) else None  # + 0.0: no negative zero


def _margins(table: list[list[int]]) -> tuple[int, list[list[float]], list[float], list[float]]:
    """``(n, p_ij, row shares p_i., column shares p_.j)`` of a 2x2 table with ``n > 0``."""
    n = sum(map(sum, table))
    probs = [[cell / n for cell in row] for row in table]
    rows = [sum(row) / n for row in table]
    cols = [(table[0][j] + table[1][j]) / n for j in (0, 1)]
    return n, probs, rows, cols


def _kappa(table: list[list[int]]) -> tuple[float, float, float]:
    """``(kappa, p_e, n)`` of a 2x2 table with ``n > 0``; kappa is ``nan`` when ``p_e == 1``.

    ``p_o`` is the share on the diagonal, ``p_e = sum_i p_i. * p_.i`` the agreement expected by
    chance from the margins (Cohen 1960, eq. 1).
    """
    n, _, rows, cols = _margins(table)
    expected = cols[0] * rows[0] + cols[1] * rows[1]
    observed = (table[0][0] + table[1][1]) / n
    if expected == 1.0:
        return math.nan, expected, n
    return (observed - expected) / (1 - expected), expected, n


def _kappa_se(table: list[list[int]], kappa: float, expected: float) -> float:
    """Large-sample standard error of kappa (Fleiss, Cohen & Everitt 1969, eq. 13).

    ``Var = [sum_i p_ii (1 - (p_i. + p_.i)(1 - k))^2 + (1 - k)^2 sum_{i!=j} p_ij (p_.i + p_j.)^2
    - (k - p_e (1 - k))^2] / (n (1 - p_e)^2)``.
    """
    n, probs, rows, cols = _margins(table)
    term_a = sum(probs[i][i] * (1 - (rows[i] + cols[i]) * (1 - kappa)) ** 2 for i in (0, 1))
    off = probs[0][1] * (cols[0] + rows[1]) ** 2 + probs[1][0] * (cols[1] + rows[0]) ** 2
    term_b = (1 - kappa) ** 2 * off
    term_c = (kappa - expected * (1 - kappa)) ** 2
    variance = (term_a + term_b - term_c) / (1 - expected) ** 2 / n
    return math.sqrt(variance) if variance >= 0 else math.nan


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters' binary outcomes (Cohen 1960).

    Returns:
        Kappa in [-1, 1], or ``None`` when undefined (no items, or chance agreement is 1,
        e.g. both raters gave one and the same outcome to every item).

    Raises:
        ValueError: The sequences differ in length or hold values other than 0 and 1.

    """
    table = table_2x2(a, b)
    if not a:
        return None
    return _finite(_kappa(table)[0])


def kappa_interval(a: Sequence[int], b: Sequence[int]) -> tuple[float, float, float] | None:
    """Large-sample standard error and 95% confidence interval of Cohen's kappa.

    ``kappa ± z_{0.975} · SE`` with the standard error of Fleiss, Cohen & Everitt (1969).

    Returns:
        ``(se, low, high)``; ``None`` when kappa is undefined, or when its large-sample standard
        error is 0 and the "interval" would be the point itself: every item agreed, or one
        rater gave the same outcome to every item (:func:`kappa_interval_undefined` says
        which).

    """
    table = table_2x2(a, b)
    if kappa_interval_undefined(a, b) is not None:
        return None
    kappa, expected, _ = _kappa(table)
    se = _finite(_kappa_se(table, kappa, expected))
    if se is None:
        return None
    delta = float(norm.isf(0.025)) * se
    return se, max(kappa - delta, -1.0), min(kappa + delta, 1.0)


def kappa_interval_undefined(
    a: Sequence[int], b: Sequence[int], names: tuple[str, str] = ("rater A", "rater B")
) -> str | None:
    """Why Cohen's kappa or its 95% interval is undefined for these outcomes, else ``None``.

    The large-sample variance of Fleiss, Cohen & Everitt (1969) is exactly 0 when every item
    agrees (observed agreement 1) and when one rater gives the same outcome to every item
    (kappa is then 0, or undefined when the other rater is constant too): the interval would be
    the point estimate itself, whatever the number of items, so none is given.

    Args:
        a: The first rater's 0/1 outcomes.
        b: The second rater's, paired with ``a`` by position.
        names: How the reason names the raters (e.g. ``("the labels", "the verdicts")``).

    Returns:
        One sentence fragment, e.g. ``"the verdicts gave the same outcome (1) to all 12
        items"``, or ``None`` when the interval is defined.

    """
    n = len(a)
    table_2x2(a, b)  # validates
    if n == 0:
        return "no item has both ratings"
    constant = [(name, values[0]) for name, values in zip(names, (a, b), strict=True)
                if len(set(values)) == 1]  # fmt: skip
    if len(constant) == 2:
        why = (
            "chance agreement is 1: kappa is undefined"
            if constant[0][1] == constant[1][1]
            else "the large-sample standard error is 0"
        )
        return f"both {names[0]} and {names[1]} gave one outcome to all {n} items ({why})"
    if constant:
        name, value = constant[0]
        return (
            f"{name} gave the same outcome ({value}) to all {n} items "
            "(the large-sample standard error is 0)"
        )
    if all(x == y for x, y in zip(a, b, strict=True)):
        return f"all {n} items agree (the large-sample standard error is 0)"
    return None


def mcnemar_p(a: Sequence[int], b: Sequence[int]) -> float:
    """Two-sided p-value of the exact McNemar test on paired binary outcomes.

    The discordant pairs ``b = n(a=0,b=1)`` and ``c = n(a=1,b=0)`` are tested against a fair
    coin: scipy's two-sided ``binomtest(b, b + c, 0.5)`` (for p = 1/2 this is
    ``min(1, 2 * P(X <= min(b, c)))``, McNemar 1947). With no discordant pairs the p-value is
    1.0 (no evidence of a difference).
    """
    table = table_2x2(a, b)
    discordant = table[0][1] + table[1][0]
    if discordant == 0:
        return 1.0
    return float(binomtest(table[0][1], discordant, 0.5).pvalue)


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` at confidence ``1 - alpha``.

    ``(p + z²/2n ± z·sqrt(p(1-p)/n + z²/4n²)) / (1 + z²/n)`` with ``z = z_{1-alpha/2}``
    (Wilson 1927; Brown, Cai & DasGupta 2001, eq. 4), clipped to [0, 1].

    Returns:
        ``(low, high)`` in [0, 1], or ``None`` when ``n == 0``.

    """
    if n == 0:
        return None
    z = float(norm.isf(alpha / 2))
    share, z2 = successes / n, z**2
    denom = 1 + z2 / n
    center = (share + z2 / (2 * n)) / denom
    half = z * math.sqrt(share * (1.0 - share) / n + z2 / (4.0 * n**2)) / denom
    return min(max(center - half, 0.0), 1.0), min(max(center + half, 0.0), 1.0)
