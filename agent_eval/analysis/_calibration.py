"""Calibration of judge verdicts against labels: whether the judge agrees with people.

:func:`calibrate` compares ``{conversation_id: 0|1}`` predictions with labels on the
conversations both have, and reports accuracy, Cohen's kappa with a 95% confidence interval
(large-sample standard error of Fleiss, Cohen & Everitt 1969, see
:mod:`agent_eval.analysis._binary_stats`), the confusion matrix, precision and recall of the
FAILURE class (verdict/label ``0``: the class a CI gate exists to catch), and the ids of the
conversations where judge and label disagree. :func:`calibrate_results` does the same for the
rows of one run and records the configuration identity the numbers apply to.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from agent_eval._natural_order import natural_key
from agent_eval._result import MetricResult
from agent_eval.analysis._binary_stats import (
    cohen_kappa,
    kappa_interval,
    kappa_interval_undefined,
    table_2x2,
)
from agent_eval.analysis._selection import ConfigurationIdentity, identity_of, verdicts

__all__ = ["Calibration", "calibrate", "calibrate_results"]


class Calibration(BaseModel):
    """Agreement of predictions with labels over the conversations that have both.

    Attributes:
        identity: The configuration the predictions came from (``None`` for external files).
        n: Conversations with both a prediction and a label.
        n_agree: Of those, where prediction equals label.
        accuracy: ``n_agree / n`` (``None`` when ``n == 0``).
        kappa / kappa_se / kappa_ci_low / kappa_ci_high: Cohen's kappa, its large-sample
            standard error and 95% interval (``None`` where undefined).
        kappa_undefined: Why the interval (or kappa) is undefined, e.g. ``"the verdicts gave
            the same outcome (1) to all 12 items (the large-sample standard error is 0)"``;
            ``None`` when it is defined.
        confusion: ``[[label 0 & pred 0, label 0 & pred 1], [label 1 & pred 0, label 1 & pred 1]]``.
        failure_precision: Of predicted failures, the share that are labelled failures.
        failure_recall: Of labelled failures, the share predicted as failures.
        disagreements: Conversation ids where prediction and label differ, in natural order
            (``c9`` before ``c10``: :func:`~agent_eval._natural_order.natural_key`).
        unlabelled: Conversation ids with a prediction but no label, in natural order.
        unpredicted: Conversation ids with a label but no (ok) prediction, in natural order.
        not_scored: Of ``unpredicted``, the units the run has but did not score ``ok``, each
            with its status and reason (``"skipped: no_context"``); the others are ids the run
            does not have; in natural order.

    """

    model_config = ConfigDict(frozen=True)

    identity: ConfigurationIdentity | None = None
    n: int
    n_agree: int
    accuracy: float | None
    kappa: float | None
    kappa_se: float | None
    kappa_ci_low: float | None
    kappa_ci_high: float | None
    confusion: list[list[int]]
    failure_precision: float | None
    failure_recall: float | None
    disagreements: list[str]
    unlabelled: list[str]
    unpredicted: list[str]
    kappa_undefined: str | None = None
    not_scored: dict[str, str] = {}


def _ratio(num: int, den: int) -> float | None:
    return num / den if den else None


def calibrate(
    predictions: Mapping[str, int],
    labels: Mapping[str, int],
    *,
    identity: ConfigurationIdentity | None = None,
) -> Calibration:
    """Calibrate binary predictions against binary labels, both keyed by conversation id."""
    common = sorted(set(predictions) & set(labels), key=natural_key)
    truth: Sequence[int] = [labels[c] for c in common]
    pred: Sequence[int] = [predictions[c] for c in common]
    confusion = table_2x2(truth, pred)
    interval = kappa_interval(truth, pred)
    se, low, high = interval if interval else (None, None, None)
    n_agree = confusion[0][0] + confusion[1][1]
    return Calibration(
        identity=identity,
        n=len(common),
        n_agree=n_agree,
        accuracy=_ratio(n_agree, len(common)),
        kappa=cohen_kappa(truth, pred),
        kappa_se=se,
        kappa_ci_low=low,
        kappa_ci_high=high,
        kappa_undefined=None
        if interval
        else kappa_interval_undefined(truth, pred, ("the labels", "the verdicts")),
        confusion=confusion,
        failure_precision=_ratio(confusion[0][0], confusion[0][0] + confusion[1][0]),
        failure_recall=_ratio(confusion[0][0], confusion[0][0] + confusion[0][1]),
        disagreements=[c for c in common if labels[c] != predictions[c]],
        unlabelled=sorted(set(predictions) - set(labels), key=natural_key),
        unpredicted=sorted(set(labels) - set(predictions), key=natural_key),
    )


def calibrate_results(results: Sequence[MetricResult], labels: Mapping[str, int]) -> Calibration:
    """Calibrate the ``ok`` verdicts of one configuration's result rows against labels.

    Raises:
        ConfigError: The rows mix configurations (metric, formatter, prompt, judge).

    """
    identity = identity_of(results)
    cal = calibrate(verdicts(results), labels, identity=identity)
    missing = set(cal.unpredicted)
    not_scored = {
        r.subject: f"{r.status}: {r.error_type}"
        for r in results
        if r.repeat == 0 and r.status != "ok" and r.subject in missing
    }
    ordered = {subject: not_scored[subject] for subject in sorted(not_scored, key=natural_key)}
    return cal.model_copy(update={"not_scored": ordered})
