"""A metric's history across runs of the same inputs: which runs, matched how, and their means.

The runs a report sets beside its own are found by :func:`history_runs`:

- the run directories beside it (the same parent directory) whose recorded **input
  fingerprint** equals its own: the sha256 of the sorted sha256 digests of every input file
  its reproducibility record lists (:mod:`agent_eval.run._record`, ``inputs``), so a run of
  the same traces matches wherever they were read from, and a run of changed traces does not;
  a run without recorded inputs (a Python API run) matches when it scored the same set of
  conversation ids;
- any run directories given explicitly (``agent-eval report RUN --history DIR``), whatever
  their inputs.

:func:`history_points` then gives each run's mean score per metric over the ``ok`` rows of
repeat 0 **of the conversations the report's run scored** (a run of more conversations is
compared on the shared ones; ``n`` says how many), oldest run first.
"""

from __future__ import annotations

import hashlib
import json
import sqlite3
from collections.abc import Iterable, Mapping, Sequence
from contextlib import closing
from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict

from agent_eval._result import MetricResult
from agent_eval.run._store import DB_NAME, load_results

__all__ = [
    "MAX_SIBLINGS",
    "HistoryPoint",
    "HistoryRun",
    "history_points",
    "history_runs",
    "input_fingerprint",
]

MAX_SIBLINGS = 200
"""Run directories beside the report's run that are looked at, newest (by name) first."""


class HistoryRun(BaseModel):
    """A run set beside the report's own: its rows and when it started.

    Attributes:
        run_id: The run's id.
        started_at: ISO-8601 UTC start time (``""`` when not recorded).
        path: The run directory it was read from.
        matched: How it was matched: ``input fingerprint``, ``conversation ids`` or
            ``given`` (``--history``).
        results: Its rows.

    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    started_at: str = ""
    path: str
    matched: str
    results: list[MetricResult]


class HistoryPoint(BaseModel):
    """One run's mean score of one metric.

    Attributes:
        metric: The metric (``name@version``).
        run_id / started_at: The run.
        n: ``ok`` rows (repeat 0) of the report's conversations.
        n_not_ok: Rows of them that are ``error`` or ``skipped``.
        mean_score: Their mean score, ``None`` without an ``ok`` row.
        current: The report's own run.

    """

    model_config = ConfigDict(frozen=True)

    metric: str
    run_id: str
    started_at: str
    n: int
    n_not_ok: int
    mean_score: float | None
    current: bool


def input_fingerprint(record: Mapping[str, Any]) -> str | None:
    """sha256 of the sorted input-file digests a run record lists; ``None`` without any."""
    inputs = record.get("inputs")
    if not isinstance(inputs, list):
        return None
    digests = sorted(str(i["sha256"]) for i in inputs if isinstance(i, dict) and i.get("sha256"))
    if not digests:
        return None
    return hashlib.sha256("\n".join(digests).encode("ascii")).hexdigest()


def _records(directory: Path) -> list[tuple[str, str, str | None]]:
    """``(run_id, started_at, input fingerprint)`` of each run a directory's store records.

    Read through a read-only connection: another run's directory is never written, migrated
    or locked (it may be a run still writing). Empty when it holds no readable store.
    """
    db = directory / DB_NAME
    if not db.is_file():
        return []
    try:
        with closing(sqlite3.connect(f"file:{db}?mode=ro", uri=True)) as conn:
            rows = conn.execute("SELECT run_id, started_at, record FROM runs").fetchall()
    except sqlite3.Error:  # not a results database, or one without a runs table
        return []
    return [(str(run_id), str(at), _fingerprint_of(record)) for run_id, at, record in rows]


def _fingerprint_of(record: str | None) -> str | None:
    try:
        parsed = json.loads(record or "{}")
    except ValueError:
        return None
    return input_fingerprint(parsed) if isinstance(parsed, dict) else None


def _split(directory: Path, matched: str, keep: set[str] | None = None) -> list[HistoryRun]:
    """One :class:`HistoryRun` per run id of ``directory`` (only ``keep`` ids when given)."""
    started = {run_id: at for run_id, at, _ in _records(directory)}
    by_run: dict[str, list[MetricResult]] = {}
    for r in load_results(directory):
        if keep is None or r.run_id in keep:
            by_run.setdefault(r.run_id, []).append(r)
    return [
        HistoryRun(
            run_id=run_id,
            started_at=started.get(run_id, ""),
            path=str(directory),
            matched=matched,
            results=rows,
        )
        for run_id, rows in by_run.items()
    ]


def history_runs(
    run_dir: Path, current: Sequence[MetricResult], given: Iterable[Path] = ()
) -> list[HistoryRun]:
    """The runs to set beside ``run_dir``'s (see the module docstring), not its own.

    Raises:
        StoreError: A directory given explicitly holds no readable results store.

    """
    own_ids = {r.run_id for r in current}
    own = {fp for _, _, fp in _records(run_dir) if fp}
    conversations = {r.conversation_id for r in current}
    out = [h for d in given for h in _split(Path(d), "given") if h.run_id not in own_ids]
    seen = {h.run_id for h in out} | own_ids
    parent = run_dir.resolve().parent
    siblings = sorted(
        (d for d in parent.iterdir() if d.is_dir() and d.resolve() != run_dir.resolve()),
        key=lambda d: d.name,
        reverse=True,
    )[:MAX_SIBLINGS]
    for sibling in siblings:
        records = _records(sibling)
        same = {run_id for run_id, _, fp in records if fp and fp in own} - seen
        if same:
            out += _split(sibling, "input fingerprint", same)
        elif records and not own and all(fp is None for _, _, fp in records):
            runs = [h for h in _split(sibling, "conversation ids") if h.run_id not in seen]
            out += [h for h in runs if {r.conversation_id for r in h.results} == conversations]
        seen |= {h.run_id for h in out}
    return out


def history_points(
    current: Sequence[MetricResult],
    runs: Sequence[HistoryRun],
    started: Mapping[str, str] | None = None,
) -> dict[str, list[HistoryPoint]]:
    """``{metric: points}``, oldest run first, for the metrics of ``current``.

    Args:
        current: The report's rows.
        runs: The runs beside it (:func:`history_runs`).
        started: ``{run_id: started_at}`` of the report's own runs; a run not in it (nor
            recorded by :func:`history_runs`) is dated by its earliest row.

    """
    conversations = {r.conversation_id for r in current}
    metrics = sorted({r.metric for r in current})
    own = {r.run_id for r in current}
    rows = [*current, *(r for h in runs for r in h.results)]
    when = {**{h.run_id: h.started_at for h in runs}, **(started or {})}
    out: dict[str, list[HistoryPoint]] = {}
    for metric in metrics:
        points = [
            _point(metric, run_id, when.get(run_id) or _first(group), group, run_id in own)
            for run_id, group in _by_run(rows, metric, conversations).items()
        ]
        out[metric] = sorted(points, key=lambda p: (p.started_at, p.run_id))
    return out


def _by_run(
    rows: Iterable[MetricResult], metric: str, conversations: set[str]
) -> dict[str, list[MetricResult]]:
    groups: dict[str, list[MetricResult]] = {}
    for r in rows:
        if r.metric == metric and r.repeat == 0 and r.conversation_id in conversations:
            groups.setdefault(r.run_id, []).append(r)
    return groups


def _first(rows: Sequence[MetricResult]) -> str:
    """When the earliest row started: a run's start when its record is not at hand."""
    return min((r.started_at for r in rows if r.started_at), default="")


def _point(
    metric: str, run_id: str, started_at: str, rows: list[MetricResult], current: bool
) -> HistoryPoint:
    scores = [r.score for r in rows if r.status == "ok" and r.score is not None]
    return HistoryPoint(
        metric=metric,
        run_id=run_id,
        started_at=started_at,
        n=len(scores),
        n_not_ok=sum(r.status != "ok" for r in rows),
        mean_score=sum(scores) / len(scores) if scores else None,
        current=current,
    )
