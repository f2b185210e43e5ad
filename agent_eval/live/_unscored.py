"""The conversations a ``serve`` shutdown could not score: ``OUT/unscored.jsonl``, and its spend.

On shutdown, a conversation the judge does not finish within ``--shutdown-timeout`` leaves no
result row; it is appended to :data:`UNSCORED_NAME` as an AgentTrace JSON line (``agent-eval
score`` reads the file), with :data:`UNSCORED_SPEND_KEY` in its ``metadata``: the run that
held it, why it is unscored and what its judge calls had spent (:func:`unscored_spend`). No
formatter renders ``metadata``, so scoring the file later judges the same text.

Why a conversation is unscored (``reason``):

- :data:`CUT_SHORT` (``interrupted``, as ``score``'s rows cut short by an interrupt): it was
  being scored at the deadline; its judge calls were cancelled (a request sent counts: the
  endpoint received it);
- :data:`NOT_STARTED` (``not_started``): it was still waiting for a worker; no request sent.

``agent-eval runs show`` of a serve run reads the entries of that run (:func:`read_unscored`)
and adds their spend to the run's usage (:func:`with_unscored`), so its requests add up to what
the endpoint received. This module imports no server code (``runs show`` starts fast).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import JsonValue

from agent_eval._result import MetricResult
from agent_eval.errors import StoreError
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._usage import RunUsage, usage_of

__all__ = [
    "CUT_SHORT",
    "NOT_STARTED",
    "REASONS",
    "UNSCORED_NAME",
    "UNSCORED_SPEND_KEY",
    "Unscored",
    "UnscoredEntry",
    "read_unscored",
    "unscored_spend",
    "with_unscored",
]

UNSCORED_NAME = "unscored.jsonl"
"""Conversations a shutdown could not score in time, as AgentTrace JSON Lines."""
UNSCORED_SPEND_KEY = "agent_eval.unscored_spend"
"""``AgentTrace.metadata`` key of an ``unscored.jsonl`` conversation: its run, why it is
unscored and what its judge calls had spent (:func:`unscored_spend`)."""
CUT_SHORT = INTERRUPTED_SKIP
"""Reason of a conversation being scored when the shutdown's deadline came."""
NOT_STARTED = "not_started"
"""Reason of a conversation still waiting for a worker when the deadline came."""
REASONS = {
    CUT_SHORT: "being scored at shutdown; its judge calls were cut short (--shutdown-timeout)",
    NOT_STARTED: "waiting for the judge at shutdown; not started (--shutdown-timeout)",
}
"""Each reason, in words (``runs show``)."""


def unscored_spend(
    rows: Sequence[MetricResult],
    *,
    run_id: str | None = None,
    metric: str | None = None,
    judge_model: str | None = None,
    reason: str = CUT_SHORT,
    revision: int = 0,
) -> dict[str, JsonValue]:
    """The :data:`UNSCORED_SPEND_KEY` entry of a conversation a shutdown left unscored.

    Args:
        rows: The engine's ``interrupted`` rows of its units cut short (never stored); empty
            when no unit had started.
        run_id: The serve run's id; default: that of ``rows[0]``.
        metric: The metric identity (``goal_accuracy@1``); default: that of ``rows[0]``.
        judge_model: The judge model; default: that of ``rows[0]``.
        reason: :data:`CUT_SHORT` or :data:`NOT_STARTED`.
        revision: The conversation's revision (0, or n for its n-th re-score).

    Returns:
        ``{"run_id", "metric", "judge_model", "reason", "revision", "units",
        "judge_requests", "unanswered_requests", "judge_input_tokens", "judge_output_tokens",
        "tokens_estimated", "estimated_units"}``: requests sent (a request cancelled in flight
        counts: the endpoint received it), of them those whose reply was never read, and the
        tokens of the replies read (the estimate for the others, then ``tokens_estimated`` is
        true and ``estimated_units`` counts them), as :class:`~agent_eval.run._usage.RunUsage`
        counts them.

    Raises:
        ValueError: no ``rows`` and no ``run_id``/``metric``/``judge_model``.

    """
    first = rows[0] if rows else None
    run_id = run_id if run_id is not None else (first.run_id if first else None)
    metric = metric if metric is not None else (first.metric if first else None)
    judge_model = judge_model if judge_model is not None else (first.judge_model if first else None)
    if run_id is None or metric is None or judge_model is None:
        raise ValueError("unscored_spend needs rows, or run_id, metric and judge_model")
    usage = usage_of(rows)
    return {
        "run_id": run_id,
        "metric": metric,
        "judge_model": judge_model,
        "reason": reason,
        "revision": revision,
        "units": len(rows),
        "judge_requests": usage.judge_requests,
        "unanswered_requests": usage.unanswered_requests,
        "judge_input_tokens": usage.judge_input_tokens,
        "judge_output_tokens": usage.judge_output_tokens,
        "tokens_estimated": bool(usage.estimated_rows),
        "estimated_units": usage.estimated_rows,
    }


@dataclass(frozen=True, kw_only=True)
class UnscoredEntry:
    """One conversation of ``unscored.jsonl``, as ``runs show`` lists it.

    Attributes:
        conversation_id: The conversation.
        line: Its 1-based line in the file.
        reason: :data:`CUT_SHORT` or :data:`NOT_STARTED` (:data:`CUT_SHORT` for an entry
            written before reasons were recorded: it carried a spend only when its calls were
            cut short).
        revision: 0, or n for its n-th re-score.
        metric / judge_model: The serve run's.
        units: Units cut short (their ``interrupted`` rows were never stored).
        judge_requests / unanswered_requests: Requests sent, of them never answered.
        judge_input_tokens / judge_output_tokens: Tokens (estimated when
            ``tokens_estimated``).
        estimated_units: Units whose tokens are estimated (no usage report read).

    """

    conversation_id: str
    line: int
    reason: str
    revision: int
    metric: str
    judge_model: str
    units: int
    judge_requests: int
    unanswered_requests: int
    judge_input_tokens: int
    judge_output_tokens: int
    tokens_estimated: bool
    estimated_units: int

    def to_json(self) -> dict[str, Any]:
        """The entry as a JSON object (``runs show --json``'s ``unscored``)."""
        return dataclasses.asdict(self)


@dataclass(frozen=True)
class Unscored:
    """The ``unscored.jsonl`` entries of one run.

    Attributes:
        path: The file.
        entries: The run's conversations, in file order.
        other_runs: Lines of other runs (serve appends across invocations to one directory).
        unattributed: Lines that name no run (written without :data:`UNSCORED_SPEND_KEY` by an
            agent-eval before it recorded one for every conversation): counted, not listed.

    """

    path: Path
    entries: list[UnscoredEntry] = field(default_factory=list)
    other_runs: int = 0
    unattributed: int = 0

    def summary(self) -> dict[str, int]:
        """``{"conversations", "units", "judge_requests", "unattributed"}`` of the entries."""
        return {
            "conversations": len(self.entries),
            "units": sum(e.units for e in self.entries),
            "judge_requests": sum(e.judge_requests for e in self.entries),
            "unattributed": self.unattributed,
        }


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def _entry(record: dict[str, Any], spend: dict[str, Any], line: int) -> UnscoredEntry:
    return UnscoredEntry(
        conversation_id=str(record.get("conversation_id", "")),
        line=line,
        reason=str(spend.get("reason") or CUT_SHORT),
        revision=_int(spend.get("revision")),
        metric=str(spend.get("metric", "")),
        judge_model=str(spend.get("judge_model", "")),
        units=_int(spend.get("units")),
        judge_requests=_int(spend.get("judge_requests")),
        unanswered_requests=_int(spend.get("unanswered_requests")),
        judge_input_tokens=_int(spend.get("judge_input_tokens")),
        judge_output_tokens=_int(spend.get("judge_output_tokens")),
        tokens_estimated=spend.get("tokens_estimated") is True,
        estimated_units=_int(spend.get("estimated_units"))
        if "estimated_units" in spend
        else _int(spend.get("units")) * (spend.get("tokens_estimated") is True),
    )


def read_unscored(directory: str | Path, run_id: str) -> Unscored:
    """The entries of run ``run_id`` in ``directory/unscored.jsonl`` (none if it is absent).

    Read a line at a time (each is a whole conversation): memory is one line.

    Raises:
        StoreError: a line is not a JSON object (names the file and line).

    """
    path = Path(directory) / UNSCORED_NAME
    found = Unscored(path)
    if not path.is_file():
        return found
    entries: list[UnscoredEntry] = []
    other_runs = unattributed = 0
    try:
        with path.open("rb") as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    record = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    raise StoreError(
                        f"{path}:{number}: not an AgentTrace line ({exc}); the file is what "
                        "agent-eval serve writes, one conversation per line"
                    ) from None
                metadata = record.get("metadata") if isinstance(record, dict) else None
                spend = metadata.get(UNSCORED_SPEND_KEY) if isinstance(metadata, dict) else None
                if not isinstance(spend, dict) or not isinstance(spend.get("run_id"), str):
                    unattributed += 1
                elif spend["run_id"] != run_id:
                    other_runs += 1
                else:
                    entries.append(_entry(record, spend, number))
    except OSError as exc:
        raise StoreError(f"{path}: cannot be read: {exc.strerror or exc}") from None
    return Unscored(path, entries, other_runs, unattributed)


def with_unscored(usage: RunUsage, entries: Iterable[UnscoredEntry]) -> RunUsage:
    """``usage`` (of the stored rows) plus what the unscored conversations' calls spent.

    Their units were cut short: they count as ``interrupted`` (rows, requests, unanswered)
    and, those without a usage report, as ``estimated_rows``; ``rows`` stays the stored rows
    (``agent-eval serve``'s closing ``judge_usage`` counts the cut-short units in ``rows``
    too).
    """
    listed = list(entries)
    return dataclasses.replace(
        usage,
        judge_requests=usage.judge_requests + sum(e.judge_requests for e in listed),
        judge_input_tokens=usage.judge_input_tokens + sum(e.judge_input_tokens for e in listed),
        judge_output_tokens=usage.judge_output_tokens + sum(e.judge_output_tokens for e in listed),
        estimated_rows=usage.estimated_rows + sum(e.estimated_units for e in listed),
        interrupted_rows=usage.interrupted_rows + sum(e.units for e in listed),
        interrupted_requests=usage.interrupted_requests + sum(e.judge_requests for e in listed),
        unanswered_requests=usage.unanswered_requests + sum(e.unanswered_requests for e in listed),
    )
