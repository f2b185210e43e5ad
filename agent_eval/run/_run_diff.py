"""What differs between two runs: their reproducibility records and their result rows.

Rows are paired by (subject, metric, formatter, repeat), the subject being the conversation id
or ``conversation_id/unit_id``. When the two runs share no such pair (e.g. a metric version or a
formatter changed), they are paired by (subject, repeat) instead, and the pairing used is named.
A pair has changed when its status, verdict or score differs.

When the runs scored with different formatter or metric identities (for example across the
change of the default to the hardened ``transcript@2`` and ``goal_accuracy@2``,
``docs/migration-hardened-defaults.md``), :attr:`RunDiff.identity_changes` says so in one
sentence each, so changed verdicts are read as the effect of that change.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_eval._result import MetricResult
from agent_eval.run._criteria_drift import criteria_drift
from agent_eval.run._formatter_drift import formatter_drift
from agent_eval.run._record import diff_records
from agent_eval.run._store import RunRecord

__all__ = ["ChangedRow", "RunDiff", "diff_runs"]

RowKey = tuple[Any, ...]


@dataclass(frozen=True, kw_only=True)
class ChangedRow:
    """One paired row whose outcome differs.

    Attributes:
        key: The pairing key (see the module docstring).
        a / b: ``status verdict score`` of the row in each run, e.g. ``ok 1 1.0``.

    """

    key: tuple[str, ...]
    a: str
    b: str


@dataclass(kw_only=True)
class RunDiff:
    """The difference between run A and run B.

    Attributes:
        run_a / run_b: The run ids.
        config: ``(key, A, B)`` for each differing field of the configuration identity.
        record: ``(key, A, B)`` for each differing field of the reproducibility record.
        pairing: ``"subject, metric, formatter, repeat"`` or ``"subject, repeat"``.
        changed: Paired rows whose status, verdict or score differ.
        unchanged: How many paired rows are the same.
        only_a / only_b: Keys of rows in one run only.
        formatter_drift: One sentence per formatter identity the two runs recorded with
            different fingerprints (:mod:`agent_eval.run._formatter_drift`): changed
            without a version bump, so its rows are not comparable; and one per criteria
            identity recorded with two file hashes (:mod:`agent_eval.run._criteria_drift`).
        identity_changes: One sentence per kind of identity (formatter, metric) whose set
            differs between the two runs' rows, naming both sets.

    """

    run_a: str
    run_b: str
    config: list[tuple[str, Any, Any]] = field(default_factory=list)
    record: list[tuple[str, Any, Any]] = field(default_factory=list)
    pairing: str = ""
    changed: list[ChangedRow] = field(default_factory=list)
    unchanged: int = 0
    only_a: list[tuple[str, ...]] = field(default_factory=list)
    only_b: list[tuple[str, ...]] = field(default_factory=list)
    formatter_drift: list[str] = field(default_factory=list)
    identity_changes: list[str] = field(default_factory=list)


def _identity_changes(rows_a: Sequence[MetricResult], rows_b: Sequence[MetricResult]) -> list[str]:
    """A sentence per identity kind (formatter, metric) the two runs' rows differ in."""
    changes = []
    for kind, get in (("formatter", _formatter), ("metric", _metric)):
        in_a, in_b = sorted({get(r) for r in rows_a}), sorted({get(r) for r in rows_b})
        if in_a and in_b and in_a != in_b:
            changes.append(
                f"the runs used different {kind}s (A: {', '.join(in_a)}; B: {', '.join(in_b)}): "
                f"the judge read different {'texts' if kind == 'formatter' else 'prompts'}, so "
                "changed verdicts may come from that change rather than from the conversations "
                "(the default changed to the hardened transcript@2 and the @2 metric prompts; "
                "see docs/migration-hardened-defaults.md)"
            )
    return changes


def _formatter(r: MetricResult) -> str:
    return r.formatter


def _metric(r: MetricResult) -> str:
    return r.metric


def _full(r: MetricResult) -> RowKey:
    return (r.subject, r.metric, r.formatter, str(r.repeat))


def _loose(r: MetricResult) -> RowKey:
    return (r.subject, str(r.repeat))


def _outcome(r: MetricResult) -> str:
    return f"{r.status} {r.verdict or r.error_type or '-'} {r.score}"


def _index(
    rows: Sequence[MetricResult], key: Callable[[MetricResult], RowKey]
) -> dict[RowKey, MetricResult]:
    return {key(r): r for r in rows}


def diff_runs(
    a: RunRecord, rows_a: Sequence[MetricResult], b: RunRecord, rows_b: Sequence[MetricResult]
) -> RunDiff:
    """Compare run ``a`` (with its rows) with run ``b`` (with its rows)."""
    diff = RunDiff(run_a=a.run_id, run_b=b.run_id)
    diff.config = diff_records(a.config, b.config)
    diff.record = diff_records(a.record, b.record)
    rows = [*rows_a, *rows_b]
    diff.formatter_drift = [
        *(d.describe() for d in formatter_drift(rows)),
        *(d.describe() for d in criteria_drift(rows)),
    ]
    diff.identity_changes = _identity_changes(rows_a, rows_b)
    key, diff.pairing = _full, "subject, metric, formatter, repeat"
    if not set(_index(rows_a, _full)) & set(_index(rows_b, _full)):
        key, diff.pairing = _loose, "subject, repeat"
    index_a, index_b = _index(rows_a, key), _index(rows_b, key)
    for k in sorted(set(index_a) | set(index_b)):
        ra, rb = index_a.get(k), index_b.get(k)
        if rb is None:
            diff.only_a.append(tuple(map(str, k)))
        elif ra is None:
            diff.only_b.append(tuple(map(str, k)))
        elif _outcome(ra) != _outcome(rb):
            diff.changed.append(ChangedRow(key=tuple(map(str, k)), a=_outcome(ra), b=_outcome(rb)))
        else:
            diff.unchanged += 1
    return diff
