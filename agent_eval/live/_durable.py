"""Durable acknowledgement for ``serve``: the receiver, the scorer and the acknowledgement log.

The contract (DESIGN, Contracts): what ``serve`` answers 200 to survives a crash. It holds
because:

1. every accepted request body is in the log, synced, before the 200
   (:meth:`Durability.acknowledge`, :mod:`agent_eval.live._ack_log`);
2. its traces stay needed (their segments are kept) until the conversation they were closed
   into has its rows committed to the results store (:meth:`Durability.committed`);
3. a restarted ``serve`` on the same ``--out`` holds the log's records again
   (:meth:`Durability.replay`) and continues the same run through the run session's resume:
   each conversation is given its revision by :mod:`agent_eval.live._revisions` (the same
   revision when read from the same records, the next one when more arrived), and units whose
   rows of that revision are stored already are not scored again (:meth:`Durability.gate`), so
   no row is written twice; judge calls already made are answered by the judge-call cache.

A conversation is **scored** when every unit of its latest revision has a committed row: a
revision cut short by a kill is scored again under the same revision, and spans that arrive for
it later make the next revision, as without a restart. What a restart cannot give back is what
compaction removed: spans of a revision already scored. A conversation re-opened after a
restart is read from the records still in the log (the note of its row says so): the
receiver's file of conversations evicted from memory (:mod:`agent_eval.live._evicted`) does not
outlive the process.
"""

from __future__ import annotations

import contextlib
import dataclasses
import logging
import sys
from collections.abc import Container, Iterable, Sequence
from pathlib import Path
from typing import Literal, Protocol

from agent_eval.config import ScoreConfig
from agent_eval.errors import ConfigError
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import ContainerItem
from agent_eval.live._ack_log import ACK_LOG_DIR, TRACE_INDEX_BYTES, Ack, AckLog
from agent_eval.live._buffer import SpanBuffer
from agent_eval.live._payloads import PayloadError, decode
from agent_eval.live._revisions import REVISIONS_NAME, RevisionJournal
from agent_eval.live._scorer import Job
from agent_eval.metrics._units import Unit
from agent_eval.run._engine import Engine

__all__ = [
    "ACK_LOG_DIR",
    "INDEX_SHARE",
    "Durability",
    "continue_logged_run",
    "held_traces",
    "index_traces_for",
    "restart_note",
]

INDEX_SHARE = 8
"""The acknowledgement log's index and revision journal get ``1 / INDEX_SHARE`` of
``--max-buffer-mb`` (the spans held and retained get the rest): half of it for the segment
being written, half for the one before it, whose last conversations are being scored."""

_log = logging.getLogger(__name__)


class Holder(Protocol):
    """What a replay needs of the receiver (:class:`agent_eval.live.Receiver` is one).

    A protocol here, not the receiver's class: the receiver imports this module, so this
    module names only what it uses of it (no import cycle between the two).
    """

    buffer: SpanBuffer

    def hold(self, items: list[ContainerItem], size: int) -> tuple[int, str]:
        """Hold decoded items as if they had just been received."""
        ...


def index_traces_for(max_buffer_bytes: int) -> int:
    """Traces per segment (``AckLog(index_traces=...)``) within ``serve``'s memory bound.

    Two segments' worth of index (:data:`~agent_eval.live._ack_log.TRACE_INDEX_BYTES` per
    trace) fill ``max_buffer_bytes / INDEX_SHARE``: 512 traces at ``--max-buffer-mb 8``, 16,384
    at the default 256. At least 1.
    """
    return max(1, max_buffer_bytes // INDEX_SHARE // 2 // TRACE_INDEX_BYTES)


def held_traces(items: Iterable[ContainerItem], pending: Container[str]) -> set[str]:
    """The trace ids of ``items`` that the receiver now holds (those in ``pending``)."""
    return {
        item.trace_id
        for item in items
        if isinstance(item, SpanRecord | LogRecord)
        and item.trace_id is not None
        and item.trace_id in pending
    }


def restart_note(revision: int) -> str:
    """The note of a conversation a restarted ``serve`` scores as ``revision`` (> 0)."""
    return (
        f"scored after serve restarted, as revision {revision} (the revisions before it were "
        "given before the restart); read from the spans the acknowledgement log still held and "
        "those received since: spans compacted from the log once their revision was scored "
        "are not read again"
    )


class Durability:
    """Connects a receiver and its scorer to the acknowledgement log (module docstring).

    Args:
        log: The opened log (earlier records not yet replayed).
        engines: The run's engines, one per metric, in the scorer's order: their ``done`` rows
            (a resumed run's, shared by all of them) and their metrics' units.

    """

    def __init__(self, log: AckLog, engines: Sequence[Engine]) -> None:
        self.log, self.engines = log, list(engines)
        if not log.earlier_records:  # a run's journal is about its own records only
            (log.directory / REVISIONS_NAME).unlink(missing_ok=True)
        self.journal = RevisionJournal(log.directory / REVISIONS_NAME)
        self.stored: dict[str, int] = {}
        """The highest revision with a stored row, per conversation (a resumed run's)."""
        for key in self.engines[0].done if self.engines else ():
            cid, revision = key[1], key[-1]
            self.stored[cid] = max(self.stored.get(cid, -1), int(revision))
        self.given: dict[str, int] = {}
        """The highest revision this process gave, per conversation."""
        self.replayed_records = 0
        self.already_scored = 0
        self._claimed: set[str] = set()
        self._snapshots: dict[int, dict[str, int]] = {}
        self._pruned_at = 0

    # -- the receiver's side -------------------------------------------------------------------

    async def acknowledge(
        self,
        signal: Literal["traces", "logs"],
        encoding: Literal["json", "protobuf"],
        content_encoding: str | None,
        body: bytes,
    ) -> Ack:
        """Write a request body to the log and return once it is synced (see ``AckLog.append``).

        Raises:
            AckLogFull / OutputError: not written (the receiver answers 503).

        """
        return await self.log.append(signal, encoding, content_encoding, body)

    def held(self, ack: Ack, items: Iterable[ContainerItem], pending: Container[str]) -> None:
        """``ack``'s record was held as ``items``: its traces are dirty until scored."""
        self.log.track(ack, held_traces(items, pending))

    def gate(self, job: Job) -> Job | None:
        """``job`` with its revision from the journal, and only its units not stored yet.

        ``None`` when every unit of that revision has a stored row (its traces then settle
        when the closing ends, :meth:`closed`).
        """
        trace = job.trace
        cid, traces = trace.conversation_id, trace.trace_ids
        digest = self.log.digest(traces)
        revision = self.journal.revision_of(cid, digest)
        if revision is None:
            revision = max(self._next_revision(cid), job.revision)
            self.journal.add(cid, revision, digest, traces)
        self.given[cid] = max(self.given.get(cid, -1), revision)
        job = self._renumbered(job, revision)
        units = self._pending_units(job)
        if units is not None and all(p is not None and not p for p in units):
            self.already_scored += 1
            return None
        job = dataclasses.replace(job, units=units)
        self._claimed.update(traces)
        self._snapshots[id(job)] = self.log.snapshot(traces)
        return job

    def _next_revision(self, conversation_id: str) -> int:
        """The revision of a new reading of a conversation.

        The next one, except when the latest was given by an earlier process and none of its
        rows was stored (killed before): this reading, from the same records and more,
        takes its place, so revisions leave no gap.
        """
        given = self.given.get(conversation_id, -1)
        stored = self.stored.get(conversation_id, -1)
        latest = max(self.journal.latest(conversation_id), stored, given)
        if latest > max(given, stored):
            return latest
        return latest + 1

    def _renumbered(self, job: Job, revision: int) -> Job:
        if revision == job.revision:
            return job
        note = restart_note(revision) if revision else None
        return dataclasses.replace(job, revision=revision, note=note)

    def _pending_units(self, job: Job) -> tuple[tuple[Unit, ...] | None, ...] | None:
        """Per engine, the units of ``job`` with no stored row of its revision.

        ``None`` for an engine: all of them (or unknown); ``None`` in all: every engine has
        all of them to score.
        """
        per_engine = tuple(_pending(engine, job) for engine in self.engines)
        return None if all(p is None for p in per_engine) else per_engine

    def closed(self, trace_ids: Iterable[str]) -> None:
        """A closing ended: its traces not in a submitted conversation are settled now."""
        unclaimed = set(trace_ids) - self._claimed
        self._claimed.clear()
        self.log.settle(self.log.snapshot(unclaimed))

    # -- the scorer's side ---------------------------------------------------------------------

    def committed(self, job: Job) -> None:
        """``job``'s rows are committed: its traces settle (unless more records came since)."""
        snapshot = self._snapshots.pop(id(job), None)
        if snapshot is not None:
            self.log.settle(snapshot)
        if self.log.compactions != self._pruned_at:  # a segment went: so do its revisions
            self._prune()

    def _prune(self) -> None:
        """Forget the revisions of conversations no segment holds a record of any more.

        The journal's entries whose traces the log no longer indexes, and this process's
        revision counters of their conversations (:attr:`given`): a conversation read again
        later gets its revision from the receiver's counter, which outlives compaction.
        """
        self._pruned_at = self.log.compactions
        self.journal.prune(self.log.referenced)
        for cid in [c for c in self.given if c not in self.journal.entries]:
            del self.given[cid]

    # -- a restart -----------------------------------------------------------------------------

    def replay(self, receiver: Holder) -> int:
        """Hold the records an earlier process acknowledged again; returns how many.

        Decoded as when they were received (a larger body limit: they were accepted then).
        """
        for ack, record in self.log.replay():
            try:
                items, size = decode(
                    record.body,
                    signal=record.signal,
                    encoding=record.encoding,
                    content_encoding=record.content_encoding,
                    max_bytes=sys.maxsize,
                )
            except PayloadError as exc:  # it decoded when it was received
                _log.error("acknowledged record %d cannot be decoded again: %s", ack.seq, exc)
                items, size = [], 0
            receiver.hold(items, size)
            self.held(ack, items, receiver.buffer.pending)
            self.replayed_records += 1
        return self.replayed_records

    def close(self) -> None:
        """Close the journal and the log (what is not scored stays for the next start)."""
        self.log.close()
        self.journal.prune(self.log.referenced)
        self.journal.close()
        with contextlib.suppress(OSError):  # removed when empty (everything was scored)
            self.log.directory.rmdir()

    @property
    def index_bytes(self) -> int:
        """The memory set aside for the log's index and the journal: two segments' traces.

        0 when the log's segments are not retired by traces (``index_traces`` unset).
        """
        if self.log.index_traces is None:
            return 0
        return 2 * self.log.index_traces * TRACE_INDEX_BYTES

    def summary(self) -> dict[str, int]:
        """Counters for serve's summary and ``/healthz``."""
        return {
            "indexed_traces": self.log.indexed_traces,
            "journal_conversations": len(self.journal.entries),
            "bytes": self.log.size,
            "max_bytes": self.log.max_bytes,
            "segments": len(self.log.segments),
            "unscored_traces": self.log.dirty_traces,
            "replayed_records": self.replayed_records,
            "torn_records": len(self.log.torn),
            "already_scored": self.already_scored,
        }


def continue_logged_run(cfg: ScoreConfig, log: AckLog, out: Path) -> tuple[ScoreConfig, str | None]:
    """The settings of a ``serve`` whose ``--out`` holds an acknowledgement log, and a notice.

    When the log holds records an earlier process acknowledged, the run they belong to is
    continued (``cfg.resume`` set to it), with or without ``--resume``: they are scored
    through the run session's resume. Without such records, ``--resume OUT`` continues the
    latest run in ``OUT`` and a plain start begins a new run.

    Raises:
        ConfigError: the log holds records of more than one run.

    """
    runs = log.earlier_runs
    if not runs:
        return cfg, None
    if len(runs) > 1:
        raise ConfigError(
            f"{log.directory} holds acknowledged records of runs {', '.join(runs)}; continue "
            "one at a time: move the other runs' segments out of the directory"
        )
    run_id, count = runs[0], log.earlier_records
    how = "as asked (--resume)" if cfg.resume else f"as serve --resume {out} would"
    notice = (
        f"agent-eval serve: {log.directory} holds {count} acknowledged request(s) of run "
        f"{run_id} not yet scored; continuing run {run_id} {how} (to start a new run, choose "
        "another --out)"
    )
    return cfg.model_copy(update={"resume": run_id, "out": out}), notice


def _pending(engine: Engine, job: Job) -> tuple[Unit, ...] | None:
    """Units of ``job`` with no stored row of its revision for ``engine``; ``None``: all."""
    trace = job.trace
    if not engine.done:
        return None
    try:
        units = engine.metric.units(trace)
    except Exception:  # the engine makes its error row
        return None
    pending = tuple(
        u for u in units if (*engine.key(trace, u.id)[:-1], job.revision) not in engine.done
    )
    return None if len(pending) == len(units) else pending
