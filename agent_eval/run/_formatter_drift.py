"""Formatter drift: one ``name@version`` recorded with two fingerprints.

Released formatter versions are frozen (:mod:`agent_eval.formatting._lock`): a formatter's
rendering is part of the metric, and every result row records the formatter identity and its
fingerprint (:attr:`~agent_eval._result.MetricResult.formatter_fingerprint`). The project's lock
catches a changed built-in; a third-party formatter outside any lock that changes its
``render`` without a version bump gets a new fingerprint under the same name, and results
compared by name would silently mix two renderings. :func:`formatter_drift` finds every
identity the given rows record with more than one fingerprint, and which runs used which, so
that ``compare``, ``calibrate``, ``report --compare`` and ``runs diff`` can warn where they meet
rows of two runs.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_eval._result import MetricResult
from agent_eval.run._outcomes import NO_FORMATTER

__all__ = ["FingerprintDrift", "formatter_drift"]


@dataclass(frozen=True, slots=True)
class FingerprintDrift:
    """A formatter identity recorded with several fingerprints.

    Attributes:
        formatter: The identity, ``name@version[params]``.
        runs: ``(fingerprint, run ids that recorded it)``, in first-seen order; at least two.

    """

    formatter: str
    runs: tuple[tuple[str, tuple[str, ...]], ...]

    def describe(self) -> str:
        """One sentence: the identity, each fingerprint (12 hex) with its runs, what to do."""
        seen = "; ".join(
            f"{digest[:12]} in run {', '.join(run_ids)}" for digest, run_ids in self.runs
        )
        name, _, version = self.formatter.split("[", 1)[0].partition("@")
        bump = f" ({name}@{int(version) + 1})" if version.isdigit() else ""
        return (
            f"formatter {self.formatter} was recorded with {len(self.runs)} fingerprints "
            f"({seen}): its rendering changed without a version bump, so the rows under this "
            f"one name judged different texts and are not comparable; released versions are "
            f"frozen: give the changed formatter a new version{bump} and score again"
        )


def formatter_drift(results: Iterable[MetricResult]) -> list[FingerprintDrift]:
    """Every formatter identity in ``results`` recorded with more than one fingerprint.

    Rows without a formatter (``"none"``, empty fingerprint) are ignored.

    Returns:
        One :class:`FingerprintDrift` per such identity, sorted by identity; ``[]`` when every
        identity has one fingerprint.

    """
    found: dict[str, dict[str, dict[str, None]]] = {}
    for row in results:
        if row.formatter == NO_FORMATTER or not row.formatter_fingerprint:
            continue
        by_digest = found.setdefault(row.formatter, {})
        by_digest.setdefault(row.formatter_fingerprint, {})[row.run_id] = None
    return [
        FingerprintDrift(
            formatter, tuple((digest, tuple(runs)) for digest, runs in digests.items())
        )
        for formatter, digests in sorted(found.items())
        if len(digests) > 1
    ]
