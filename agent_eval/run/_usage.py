"""What a run's judge calls spent over every invocation: its rows and the rows they replaced.

A run can take several invocations (``score``, then ``score --resume`` after an interrupt or a
budget stop, ``--retry-errors``). Its spend is that of every row any of them wrote: the
current rows, and the rows a later row of the same key replaced (kept in the store's
``superseded_results``; :func:`~agent_eval.run._store.load_superseded`): budget skips whose
first stage was paid for, errors retried, units cut short by an interrupt (reason
``interrupted``, :data:`~agent_eval.run._outcomes.INTERRUPTED_SKIP`). ``runs show``, the
summary ``score`` prints and the usage tables all count that way, so they add up to what the
endpoint received.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval._result import MetricResult
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._store import iter_results

__all__ = ["RunUsage", "UsageTally", "run_usage", "usage_of"]


@dataclass(frozen=True, kw_only=True)
class RunUsage:
    """Judge usage summed over a run's rows and the rows they replaced.

    Attributes:
        rows: Current rows.
        replaced_rows: Rows a later invocation replaced (their calls were made and paid for).
        judge_requests: Requests sent, retries included.
        judge_input_tokens / judge_output_tokens: Tokens; a row without a usage report counts
            its estimate (:attr:`MetricResult.best_tokens`).
        estimated_rows: Rows (replaced ones included) without a usage report.
        interrupted_rows: Rows (replaced ones included) cut short by an interrupt.
        interrupted_requests: Their requests.
        unanswered_requests: Of those, requests whose reply was never read: their tokens are
            unknown, counted at the estimate.

    """

    rows: int = 0
    replaced_rows: int = 0
    judge_requests: int = 0
    judge_input_tokens: int = 0
    judge_output_tokens: int = 0
    estimated_rows: int = 0
    interrupted_rows: int = 0
    interrupted_requests: int = 0
    unanswered_requests: int = 0

    def to_json(self) -> dict[str, Any]:
        """The counts as a JSON object (``runs show``'s ``usage``, ``score --json``)."""
        return {
            "rows": self.rows,
            "replaced_rows": self.replaced_rows,
            "judge_requests": self.judge_requests,
            "judge_input_tokens": self.judge_input_tokens,
            "judge_output_tokens": self.judge_output_tokens,
            "estimated_rows": self.estimated_rows,
            "interrupted": {
                "rows": self.interrupted_rows,
                "requests": self.interrupted_requests,
                "unanswered": self.unanswered_requests,
            },
        }

    def text(self) -> str:
        """``54 requests, 21355 in, 1000 out over 27 rows and 6 they replaced``, in words.

        ``~`` marks estimated token sums; interrupted rows are named with their unanswered
        requests.
        """
        mark = "~" if self.estimated_rows else ""
        line = (
            f"{self.judge_requests} requests, {mark}{self.judge_input_tokens} in, "
            f"{mark}{self.judge_output_tokens} out over {self.rows} rows"
        )
        if self.replaced_rows:
            line += f" and the {self.replaced_rows} they replaced"
        if self.interrupted_rows:
            line += (
                f" (incl. {self.interrupted_rows} cut short by an interrupt: "
                f"{self.interrupted_requests} requests, {self.unanswered_requests} unanswered)"
            )
        return line


def _interrupted(row: MetricResult) -> tuple[int, int]:
    """``(requests, unanswered)`` of a row cut short by an interrupt, else ``(0, 0)``."""
    if row.error_type != INTERRUPTED_SKIP:
        return 0, 0
    counts = row.details.get(INTERRUPTED_SKIP)
    unanswered = counts.get("unanswered") if isinstance(counts, dict) else None
    return row.attempts, unanswered if isinstance(unanswered, int) else 0


class UsageTally:
    """A :class:`RunUsage` counted row by row (no row kept): :func:`usage_of` in a stream.

    Feed the current rows with :meth:`add` and the rows they replaced with
    ``add(row, replaced=True)``, in any order; :meth:`usage` gives the counts so far.
    """

    def __init__(self) -> None:
        self._counts = dict.fromkeys(RunUsage.__dataclass_fields__, 0)

    def add(self, row: MetricResult, *, replaced: bool = False) -> None:
        """Count ``row``: a current row, or (``replaced``) one a later row replaced."""
        counts = self._counts
        counts["replaced_rows" if replaced else "rows"] += 1
        counts["judge_requests"] += row.attempts
        tokens_in, tokens_out = row.best_tokens
        counts["judge_input_tokens"] += tokens_in
        counts["judge_output_tokens"] += tokens_out
        counts["estimated_rows"] += not row.usage_known
        if row.error_type == INTERRUPTED_SKIP:
            requests, unanswered = _interrupted(row)
            counts["interrupted_rows"] += 1
            counts["interrupted_requests"] += requests
            counts["unanswered_requests"] += unanswered

    def usage(self) -> RunUsage:
        """The :class:`RunUsage` of the rows counted so far."""
        return RunUsage(**self._counts)


def usage_of(rows: Iterable[MetricResult], replaced: Iterable[MetricResult] = ()) -> RunUsage:
    """The :class:`RunUsage` of ``rows`` (current) and ``replaced`` (superseded) rows.

    Both are consumed once, streaming (:class:`UsageTally`).
    """
    tally = UsageTally()
    for row in rows:
        tally.add(row)
    for row in replaced:
        tally.add(row, replaced=True)
    return tally.usage()


def run_usage(directory: str | Path, run_id: str, metric: str | None = None) -> RunUsage:
    """The :class:`RunUsage` of run ``run_id`` in ``directory`` (of one ``metric`` if given).

    Raises:
        StoreError: the run's store cannot be read.

    """
    rows = iter_results(directory, run_id=run_id)  # streamed: no row is kept
    replaced = iter_results(directory, run_id=run_id, superseded=True)
    if metric is not None:
        rows = (r for r in rows if r.metric == metric)
        replaced = (r for r in replaced if r.metric == metric)
    return usage_of(rows, replaced)
