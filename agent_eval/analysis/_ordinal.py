"""Agreement of scores with ordinal human ratings: Spearman's rho and Kendall's tau-b, with CIs.

A judge's fractional score (the share of supported statements) and a person's rating on a 1-4
or 1-5 scale are not on the same scale, so agreement is measured by rank correlation:

- **Spearman's rho** and **Kendall's tau-b** (ties corrected) from ``scipy.stats.spearmanr`` and
  ``scipy.stats.kendalltau``, with their two-sided p-values;
- 95% confidence intervals by the Fisher z-transformation with the standard errors of Fieller,
  Hartley & Pearson (1957): ``1.06 / sqrt(n - 3)`` for rho and ``0.437 / sqrt(n - 4)`` for tau
  (``z = atanh(r)``, ``r = tanh(z ± 1.96 · se)``); defined for ``n > 4`` and ``|r| < 1``.

Predictions and ratings are keyed by subject (``conversation_id`` or ``conversation_id/turn:K``).
"""

from __future__ import annotations

import math
import warnings
from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict
from scipy import stats

from agent_eval._natural_order import natural_key
from agent_eval._result import MetricResult
from agent_eval.analysis._selection import ConfigurationIdentity, identity_of

__all__ = ["OrdinalCalibration", "calibrate_ordinal", "calibrate_ordinal_results", "scores"]

_Z95 = 1.959963984540054
_SE = {"spearman": (1.06, 3), "kendall": (0.437, 4)}


class OrdinalCalibration(BaseModel):
    """Rank agreement of scores with ordinal ratings over the subjects that have both.

    Attributes:
        identity: The configuration the scores came from (``None`` for external files).
        n: Subjects with both a score and a rating.
        spearman / spearman_p / spearman_ci_low / spearman_ci_high: Spearman's rho, its p-value
            and 95% interval (``None`` where undefined: n too small, a constant side).
        kendall / kendall_p / kendall_ci_low / kendall_ci_high: Kendall's tau-b likewise.
        ratings: How many subjects have each rating, by rating (as text).
        unlabelled: Subjects with a score but no rating, in natural order.
        unpredicted: Subjects with a rating but no (ok) score, in natural order.

    """

    model_config = ConfigDict(frozen=True)

    identity: ConfigurationIdentity | None = None
    n: int
    spearman: float | None
    spearman_p: float | None
    spearman_ci_low: float | None
    spearman_ci_high: float | None
    kendall: float | None
    kendall_p: float | None
    kendall_ci_low: float | None
    kendall_ci_high: float | None
    ratings: dict[str, int]
    unlabelled: list[str]
    unpredicted: list[str]


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def fisher_interval(r: float | None, n: int, kind: str) -> tuple[float | None, float | None]:
    """The 95% interval of a rank correlation ``r`` over ``n`` pairs (see the module docstring).

    Args:
        r: Spearman's rho (``kind="spearman"``) or Kendall's tau (``kind="kendall"``).
        n: Number of pairs.
        kind: ``spearman`` or ``kendall``.

    """
    factor, offset = _SE[kind]
    if r is None or n <= offset or abs(r) >= 1.0:
        return None, None
    z, se = math.atanh(r), factor / math.sqrt(n - offset)
    return math.tanh(z - _Z95 * se), math.tanh(z + _Z95 * se)


def calibrate_ordinal(
    predictions: Mapping[str, float],
    ratings: Mapping[str, float],
    *,
    identity: ConfigurationIdentity | None = None,
) -> OrdinalCalibration:
    """Spearman and Kendall (with 95% CIs) of ``predictions`` against ``ratings`` by subject."""
    common = sorted(set(predictions) & set(ratings))
    x: Sequence[float] = [predictions[s] for s in common]
    y: Sequence[float] = [ratings[s] for s in common]
    rho = rho_p = tau = tau_p = None
    if len(common) >= 3 and len(set(x)) > 1 and len(set(y)) > 1:
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            spearman = stats.spearmanr(x, y)
            kendall = stats.kendalltau(x, y, variant="b")
        rho, rho_p = _finite(spearman.statistic), _finite(spearman.pvalue)
        tau, tau_p = _finite(kendall.statistic), _finite(kendall.pvalue)
    rho_low, rho_high = fisher_interval(rho, len(common), "spearman")
    tau_low, tau_high = fisher_interval(tau, len(common), "kendall")
    counts: dict[str, int] = {}
    for value in sorted(y):
        key = f"{value:g}"
        counts[key] = counts.get(key, 0) + 1
    return OrdinalCalibration(
        identity=identity,
        n=len(common),
        spearman=rho,
        spearman_p=rho_p,
        spearman_ci_low=rho_low,
        spearman_ci_high=rho_high,
        kendall=tau,
        kendall_p=tau_p,
        kendall_ci_low=tau_low,
        kendall_ci_high=tau_high,
        ratings=counts,
        unlabelled=sorted(set(predictions) - set(ratings), key=natural_key),
        unpredicted=sorted(set(ratings) - set(predictions), key=natural_key),
    )


def scores(results: Sequence[MetricResult]) -> dict[str, float]:
    """``{subject: score}`` of the ``ok`` rows of repeat 0."""
    return {
        r.subject: r.score
        for r in results
        if r.status == "ok" and r.repeat == 0 and r.score is not None
    }


def calibrate_ordinal_results(
    results: Sequence[MetricResult], ratings: Mapping[str, float]
) -> OrdinalCalibration:
    """Calibrate the ``ok`` scores of one configuration's rows against ordinal ratings.

    Raises:
        ConfigError: The rows mix configurations.

    """
    return calibrate_ordinal(scores(results), ratings, identity=identity_of(results))
