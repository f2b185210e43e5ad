"""What a run's stored rows add up to, streamed from its store: usage, stages, atom lines.

:class:`RunSpend` folds the rows of a run and the rows they replaced (``--resume``,
``--retry-errors``) into the tallies the end of ``score`` reports, one row at a time from
``results.db`` (:func:`~agent_eval.run._store.iter_results`), keeping none; :func:`unit_lines`
says, per metric, how many atom-scored units had every atom pass and lists the lowest ones.
"""

from __future__ import annotations

import heapq
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agent_eval._costs import JudgeUsageGroups
from agent_eval._result import MetricResult
from agent_eval.run._store import iter_results, result_key
from agent_eval.run._usage import RunUsage, UsageTally

__all__ = ["RunSpend", "UnitLines", "run_rows", "unit_lines"]


def run_rows(directory: Path, run_id: str) -> Iterator[tuple[MetricResult, bool]]:
    """``(row, replaced)``: the run's rows, then the rows they replaced.

    Streamed one at a time from the store (:func:`iter_results`): none is kept.
    """
    for replaced in (False, True):
        for row in iter_results(directory, run_id, superseded=replaced):
            yield row, replaced


class RunSpend:
    """What a run's rows and the rows they replaced add up to, read once from the store.

    The rows stream from ``results.db`` one at a time (:func:`iter_results`) into the tallies
    the end of ``score`` prints: per metric the run total (:class:`UsageTally`), the usage
    table's judge lines and stage lines (:class:`JudgeUsageGroups`) and the per-unit atom
    lines (:class:`UnitLines`). No row is kept, so the memory is that of the groups, not of
    the run's rows (a 1 GB input's 42k rows with their reasons held ~140 MiB).
    """

    def __init__(self, directory: Path, run_id: str) -> None:
        self.metrics: dict[str, UsageTally] = {}
        self.judge = JudgeUsageGroups()
        self.stages = JudgeUsageGroups(by_stage=True)
        self.units = UnitLines()
        for row, replaced in run_rows(directory, run_id):
            tally = self.metrics.get(row.metric)
            if tally is None:
                tally = self.metrics[row.metric] = UsageTally()
            tally.add(row, replaced=replaced)
            self.judge.add(row, replaced=replaced)
            self.stages.add(row, replaced=replaced)
            if not replaced:
                self.units.add(row)

    def run_total(self, metric: str) -> RunUsage:
        """The run's usage over every invocation, of ``metric``'s rows."""
        tally = self.metrics.get(metric)
        return tally.usage() if tally is not None else RunUsage()


def unit_lines(rows: Iterable[MetricResult], limit: int = 10) -> str:
    """Per-unit pass/fail of atom-scored rows as ``k of n``: the units with failing atoms.

    Says, per metric, how many of its scored units had every atom pass (``metric k of n``; a
    unit scored by four metrics counts once under each), then lists up to ``limit`` units
    (lowest share first; ties by metric, subject, then :data:`RESULT_KEY` order) with their
    first failing atom; ``""`` when no row carries atoms. ``rows`` is consumed once,
    streaming (:class:`UnitLines`).
    """
    lines = UnitLines(limit)
    for row in rows:
        lines.add(row)
    return lines.text()


class UnitLines:
    """:func:`unit_lines` counted row by row, keeping only the ``limit`` lowest units' lines."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.per_metric: dict[str, list[int]] = {}  # metric -> [units every atom passed, scored]
        self.failing = 0
        self._lowest: list[tuple[tuple[Any, ...], str]] = []  # (order, line), >= limit kept

    def add(self, row: MetricResult) -> None:
        """Count ``row`` (only ``ok`` rows with atoms count)."""
        atoms = row.atoms
        if row.status != "ok" or not atoms:
            return
        counts = self.per_metric.setdefault(row.metric, [0, 0])
        counts[1] += 1
        first = next((a for a in atoms if not a.passed), None)
        if first is None:
            counts[0] += 1
            return
        self.failing += 1
        order = (row.score or 0.0, row.metric, row.subject, result_key(row))
        self._lowest.append(
            (
                order,
                f"  {row.metric} {row.subject}: {sum(a.passed for a in atoms)} of {len(atoms)} "
                f"passed; first failing ({first.label}): {first.text}",
            )
        )
        if len(self._lowest) >= 2 * self.limit + 64:  # keep the lowest ``limit``
            self._lowest = heapq.nsmallest(self.limit, self._lowest, key=lambda item: item[0])

    def text(self) -> str:
        """The lines (``""`` when no row carried atoms)."""
        if not self.per_metric:
            return ""
        shares = "; ".join(
            f"{metric} {k} of {n}" for metric, (k, n) in sorted(self.per_metric.items())
        )
        lowest = heapq.nsmallest(self.limit, self._lowest, key=lambda item: item[0])
        lines = [f"units with every atom passed: {shares}", *(line for _, line in lowest)]
        if self.failing > self.limit:
            lines.append(f"  ... and {self.failing - self.limit} more (see results.jsonl)")
        return "\n".join(lines)
