"""Agreement statistics on paired binary outcomes (verdicts ``0``/``1``), via well-kept libraries.

Every function takes equal-length sequences of ints in ``{0, 1}`` (or a 2x2 count table) and
returns plain floats, or ``None`` where the statistic is undefined (never NaN):

- :func:`cohen_kappa`: Cohen's kappa (Cohen 1960, "A coefficient of agreement for nominal
  scales", Educational and Psychological Measurement 20(1)), ``(p_o - p_e) / (1 - p_e)``, as
  computed by statsmodels' ``inter_rater.cohens_kappa`` on the 2x2 table.
- :func:`kappa_interval`: its 95% confidence interval from the large-sample standard error of
  Fleiss, Cohen & Everitt (1969), "Large sample standard errors of kappa and weighted kappa",
  Psychological Bulletin 72(5), as implemented by statsmodels' ``inter_rater.cohens_kappa``
  (``kappa ± z_{0.975} · SE``, clipped to kappa's range [-1, 1]).
- :func:`mcnemar_p`: the exact McNemar test (a two-sided binomial test on the discordant pairs),
  statsmodels' ``contingency_tables.mcnemar(table, exact=True)``.
- :func:`wilson_interval`: the Wilson score interval of a proportion (Wilson 1927), statsmodels'
  ``proportion_confint(method="wilson")``; it stays inside [0, 1] and behaves at 0/n and n/n.
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Sequence

import numpy as np
from statsmodels.stats.contingency_tables import mcnemar
from statsmodels.stats.inter_rater import cohens_kappa
from statsmodels.stats.proportion import proportion_confint

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


def cohen_kappa(a: Sequence[int], b: Sequence[int]) -> float | None:
    """Cohen's kappa of two raters' binary outcomes (statsmodels' ``cohens_kappa``).

    Returns:
        Kappa in [-1, 1], or ``None`` when undefined (no items, or chance agreement is 1,
        e.g. both raters gave one and the same outcome to every item).

    """
    table = np.asarray(table_2x2(a, b), dtype=float)
    if not a:
        return None
    with warnings.catch_warnings():  # undefined kappa: a warning and NaN, mapped to None
        warnings.simplefilter("ignore")
        return _finite(cohens_kappa(table).kappa)


def kappa_interval(a: Sequence[int], b: Sequence[int]) -> tuple[float, float, float] | None:
    """Large-sample standard error and 95% confidence interval of Cohen's kappa.

    Returns:
        ``(se, low, high)``; ``None`` when kappa is undefined, or when its large-sample standard
        error is 0 and the "interval" would be the point itself: every item agreed, or one
        rater gave the same outcome to every item (:func:`kappa_interval_undefined` says
        which).

    """
    table = np.asarray(table_2x2(a, b), dtype=float)
    if kappa_interval_undefined(a, b) is not None:
        return None
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        res = cohens_kappa(table)  # 95% interval (alpha 0.05, the default)
    se, low, high = (_finite(v) for v in (res.std_kappa, res.kappa_low, res.kappa_upp))
    if se is None or low is None or high is None:
        return None
    return se, max(low, -1.0), min(high, 1.0)


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

    With no discordant pairs the p-value is 1.0 (no evidence of a difference).
    """
    table = table_2x2(a, b)
    return float(mcnemar(table, exact=True).pvalue)


def wilson_interval(successes: int, n: int, alpha: float = 0.05) -> tuple[float, float] | None:
    """Wilson score interval of ``successes / n`` at confidence ``1 - alpha``.

    Returns:
        ``(low, high)`` in [0, 1], or ``None`` when ``n == 0``.

    """
    if n == 0:
        return None
    low, high = proportion_confint(successes, n, alpha=alpha, method="wilson")
    return float(low), float(high)
