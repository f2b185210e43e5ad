"""Criteria drift: one criteria ``name@version`` recorded with two file contents.

A criteria file (:mod:`agent_eval.metrics._criteria_file`) is a metric: its rows record
``name@version`` as the metric and the sha256 of the file's bytes in
``details["criteria_sha256"]``. A file edited without a version bump judges by other words
under the same name, and results compared by name would silently mix the two.
:func:`criteria_drift` finds every criteria identity the given rows record with more than one
file hash, and which runs used which, so that ``compare``, ``calibrate``, ``report --compare``
and ``runs diff`` warn where they meet rows of two runs, as they do for formatter drift
(:mod:`agent_eval.run._formatter_drift`).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_eval._result import MetricResult
from agent_eval.metrics._criteria_file import CRITERIA_SHA256

__all__ = ["CriteriaDrift", "criteria_drift"]


@dataclass(frozen=True, slots=True)
class CriteriaDrift:
    """A criteria identity recorded with several file hashes.

    Attributes:
        metric: The identity, ``name@version``.
        runs: ``(file sha256, run ids that recorded it)``, in first-seen order; at least two.

    """

    metric: str
    runs: tuple[tuple[str, tuple[str, ...]], ...]

    def describe(self) -> str:
        """One sentence: the identity, each file hash (12 hex) with its runs, what to do."""
        seen = "; ".join(
            f"{digest[:12]} in run {', '.join(run_ids)}" for digest, run_ids in self.runs
        )
        name, _, version = self.metric.partition("@")
        bump = f" ({name}@{int(version) + 1})" if version.isdigit() else ""
        return (
            f"criteria {self.metric} was recorded with {len(self.runs)} different files "
            f"({seen}): the criteria file changed without a version bump, so the rows under "
            f"this one name were judged by different words and are not comparable; give the "
            f"changed file a new version{bump} and score again"
        )


def criteria_drift(results: Iterable[MetricResult]) -> list[CriteriaDrift]:
    """Every criteria identity in ``results`` recorded with more than one file hash.

    Rows without ``details["criteria_sha256"]`` (every other metric, and error rows of criteria
    metrics) are ignored.

    Returns:
        One :class:`CriteriaDrift` per such identity, sorted by identity; ``[]`` when none.

    """
    found: dict[str, dict[str, dict[str, None]]] = {}
    for row in results:
        digest = row.details.get(CRITERIA_SHA256)
        if isinstance(digest, str) and digest:
            found.setdefault(row.metric, {}).setdefault(digest, {})[row.run_id] = None
    return [
        CriteriaDrift(metric, tuple((digest, tuple(runs)) for digest, runs in digests.items()))
        for metric, digests in sorted(found.items())
        if len(digests) > 1
    ]
