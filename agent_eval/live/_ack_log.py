"""The acknowledgement log: what ``serve`` answered 200 to, on disk before the answer.

``OUT/ack-log/`` holds segments (:mod:`agent_eval.live._ack_records`) of every request body the
receiver acknowledged, exactly as received. :meth:`AckLog.append` writes a record and returns
once it is synced (``fsync``): the receiver answers 200 only then, so a ``kill -9`` (or a power
loss) after the 200 loses nothing. Syncs are grouped (group commit): while one ``fsync`` runs in
a worker thread, the requests arriving meanwhile are written and wait for the next one, which
covers them all, so concurrent exporters share a sync instead of queueing one each.

Which records are still needed is tracked by trace: a record's traces are **dirty** from the
time it is held until the conversation they were closed into has its rows committed
(:meth:`AckLog.settle`; a trace closed into no conversation settles when it closes). A segment
other than the one being written is deleted (compaction) as soon as none of its traces is dirty
and no request written into it is still on its way to the buffer.

The log's size on disk is bounded by ``max_bytes`` (``serve --max-log-mb``): a record that
would take it beyond is refused (:class:`AckLogFull`; the receiver answers 503 with
``Retry-After``, the exporter retries), never written and never dropped later. What fills it
is the bodies of conversations not yet scored (held, waiting for the judge, or left over by a
shutdown), plus the records sharing a segment with them (a segment is ``max_bytes / 16``, at
most 64 MiB).

Its memory is bounded too: the index of which traces each segment holds (what compaction and
:meth:`AckLog.digest` need) is kept per segment and dropped with it. With ``index_traces``
(``serve`` derives it from ``--max-buffer-mb``) the segment being written is retired early once
it holds that many traces, so a segment whose conversations are scored is deleted, and its
index with it, after about ``index_traces`` traces however little it holds on disk: the index
never holds much more than the traces of the two newest segments, plus those of older segments
with a conversation still unscored.

On start, :meth:`AckLog.open` reads the segments left by an earlier process (a record cut
short by a kill is cut off and counted in :attr:`AckLog.torn`): :meth:`AckLog.replay` yields
them for the receiver to hold again, and new records go to a new segment.
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import logging
import os
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from agent_eval.errors import OutputError
from agent_eval.live._ack_records import (
    SEGMENT_SUFFIX,
    AckRecord,
    SegmentRead,
    encode_record,
    read_segment,
    segment_header,
)
from agent_eval.run._artifacts import ACK_LOG_DIR
from agent_eval.run._engine import utc_now
from agent_eval.run._store import OutputLock

__all__ = [
    "ACK_LOG_DIR",
    "TRACE_INDEX_BYTES",
    "Ack",
    "AckLog",
    "AckLogFull",
    "AckTooLarge",
    "segment_bytes_for",
]

_MIB = 1024 * 1024
TRACE_INDEX_BYTES = 1024
"""Memory a trace takes in the log's index and its conversation in the revision journal
(:mod:`agent_eval.live._revisions`), bytes: measured with ``tracemalloc`` on CPython 3.11
(about 1,000 bytes per one-trace conversation, its 32-hex trace id and 64-hex digest included).
"""
_log = logging.getLogger(__name__)


def segment_bytes_for(max_bytes: int) -> int:
    """Segment size for a log bounded by ``max_bytes``: a sixteenth, within 1-64 MiB."""
    return max(_MIB, min(64 * _MIB, max_bytes // 16))


class AckLogFull(OutputError):
    """The record would take the log beyond its bound (the receiver answers 503)."""


class AckTooLarge(AckLogFull):
    """The record alone is larger than the bound: it can never be logged.

    The receiver answers 413, so the exporter does not retry it forever.
    """


@dataclass(frozen=True)
class Ack:
    """Where an acknowledged record went: its sequence number and segment number."""

    seq: int
    segment: int


@dataclass
class _Segment:
    number: int
    path: Path
    size: int
    traces: set[str] = field(default_factory=set)
    dirty: int = 0
    """Its traces that are dirty."""
    pins: int = 0
    """Records written into it and not yet tracked (on their way to the buffer)."""
    fd: int | None = None


class AckLog:
    """The acknowledgement log of one run directory (see the module docstring).

    Use :meth:`open`, then :meth:`replay` (the records left by an earlier process), then
    :meth:`start` before the first :meth:`append`; :meth:`close` at the end.

    Args:
        directory: ``OUT/ack-log``.
        max_bytes: The bound on the segments' total size.
        sync: ``fsync`` before acknowledging (off only for benchmarks of the cost).
        index_traces: Retire the segment being written once it holds this many traces, so
            that its index goes with it once they are scored (``None``: only when it is full).

    Not thread-safe: the receiver uses it from its event loop.
    """

    def __init__(
        self, directory: Path, *, max_bytes: int, sync: bool = True, index_traces: int | None = None
    ) -> None:
        self.directory, self.max_bytes, self.sync = directory, max_bytes, sync
        self.index_traces = index_traces
        self.compactions = 0
        """Segments deleted so far (what was indexed for them is gone)."""
        self.segment_bytes = segment_bytes_for(max_bytes)
        self.segments: dict[int, _Segment] = {}
        self.earlier: list[SegmentRead] = []
        self.torn: list[tuple[Path, int]] = []
        """``(segment, offset)`` of each record cut short found on opening."""
        self.run_id = ""
        self._active: _Segment | None = None
        self._retired: list[int] = []
        self._dir_unsynced = False
        self._seq = 0
        self._written = self._synced = 0
        self._lock = asyncio.Lock()
        self._dirty: dict[str, int] = {}
        self._segments_of: dict[str, set[int]] = {}
        self._records_of: dict[str, list[int]] = {}
        self._held_lock: OutputLock | None = None

    # -- opening and replay --------------------------------------------------------------------

    @classmethod
    def open(
        cls, directory: Path, *, max_bytes: int, sync: bool = True, index_traces: int | None = None
    ) -> AckLog:
        """Lock ``directory`` and read the segments an earlier process left there.

        The arguments are :class:`AckLog`'s.

        Raises:
            OutputError: another process holds the directory, or it cannot be written.
            StoreError: a file there is not a segment.

        """
        log = cls(directory, max_bytes=max_bytes, sync=sync, index_traces=index_traces)
        try:
            directory.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise OutputError(f"cannot create {directory}: {exc.strerror or exc}") from None
        log._held_lock = OutputLock(directory)
        for path in sorted(directory.glob(f"*{SEGMENT_SUFFIX}")):
            log._read_earlier(path)
        return log

    def _read_earlier(self, path: Path) -> None:
        found = read_segment(path)
        if found.torn_at is not None:  # never acknowledged: written, not yet synced
            self.torn.append((path, found.torn_at))
            _log.warning(
                "%s: a record cut short at byte %d (the process was killed while writing it; "
                "it was never acknowledged) was cut off",
                path,
                found.torn_at,
            )
            with path.open("rb+") as handle:
                handle.truncate(found.end)
        self.earlier.append(found)
        self.segments[found.number] = _Segment(found.number, path, found.end)
        self._seq = max([self._seq, *(r.seq for r in found.records)])

    @property
    def earlier_runs(self) -> list[str]:
        """The runs whose records the earlier segments hold (oldest first, each once)."""
        return list(dict.fromkeys(s.run_id for s in self.earlier if s.records))

    @property
    def earlier_records(self) -> int:
        """How many records the earlier segments hold."""
        return sum(len(s.records) for s in self.earlier)

    def replay(self) -> Iterator[tuple[Ack, AckRecord]]:
        """The earlier segments' records in order, each pinned until :meth:`track` is called."""
        for found in self.earlier:
            for record in found.records:
                self.segments[found.number].pins += 1
                yield Ack(record.seq, found.number), record
        self.earlier = []

    def start(self, run_id: str) -> None:
        """Open a new segment for run ``run_id``'s records (after :meth:`replay`)."""
        self.run_id = run_id
        self._rotate()
        self.compact()

    # -- appending -------------------------------------------------------------------------------

    async def append(
        self,
        signal: Literal["traces", "logs"],
        encoding: Literal["json", "protobuf"],
        content_encoding: str | None,
        body: bytes,
    ) -> Ack:
        """Write one request body and return once it is on disk (synced).

        Raises:
            AckLogFull: it would take the log beyond ``max_bytes`` (:class:`AckTooLarge`: it
                alone is larger).
            OutputError: the disk refused it (nothing of it is left in the log).

        """
        self._seq += 1
        record = AckRecord(
            seq=self._seq,
            signal=signal,
            encoding=encoding,
            content_encoding=content_encoding,
            received_at=utc_now(),
            body=body,
        )
        data = encode_record(record)
        if len(data) + len(self._header(0)) > self.max_bytes:
            raise AckTooLarge(
                f"the body ({len(body)} bytes) is larger than the acknowledgement log's bound "
                f"({self.max_bytes} bytes, --max-log-mb); raise --max-log-mb"
            )
        if self.size + len(data) > self.max_bytes:
            raise AckLogFull(
                f"the acknowledgement log is full ({self.size} of {self.max_bytes} bytes, "
                "--max-log-mb): conversations are waiting to be scored; retry later"
            )
        active = self._writable(len(data))
        self._write(active, data)
        active.pins += 1
        self._written += 1
        await self._commit(self._written)
        return Ack(record.seq, active.number)

    @property
    def size(self) -> int:
        """Bytes the segments hold on disk."""
        return sum(segment.size for segment in self.segments.values())

    def _writable(self, length: int) -> _Segment:
        active = self._active
        assert active is not None, "AckLog.start() opens the first segment"
        if self._full(active, length) and active.size > len(self._header(0)):
            self._rotate()
            active = self._active
            assert active is not None
        return active

    def _full(self, active: _Segment, length: int) -> bool:
        """Whether ``length`` more bytes go to a new segment (by size, or by traces indexed)."""
        if active.size + length > self.segment_bytes:
            return True
        return self.index_traces is not None and len(active.traces) >= self.index_traces

    def _header(self, number: int) -> bytes:
        return segment_header(self.run_id, number)

    def _rotate(self) -> None:
        if self._active is not None:
            self._retired.append(self._active.number)
        number = max(self.segments, default=0) + 1
        path = self.directory / f"{number:010d}{SEGMENT_SUFFIX}"
        try:
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_APPEND, 0o644)
        except OSError as exc:
            raise OutputError(f"cannot create {path}: {exc.strerror or exc}") from None
        segment = self.segments[number] = _Segment(number, path, 0, fd=fd)
        self._active, self._dir_unsynced = segment, True
        self._write(segment, self._header(number))

    def _write(self, segment: _Segment, data: bytes) -> None:
        assert segment.fd is not None
        view = memoryview(data)
        try:
            while view:
                view = view[os.write(segment.fd, view) :]
        except OSError as exc:  # a disk full mid-record: cut it off, so nothing follows it
            with contextlib.suppress(OSError):
                os.ftruncate(segment.fd, segment.size)
            raise OutputError(f"cannot write {segment.path}: {exc.strerror or exc}") from None
        segment.size += len(data)

    async def _commit(self, mine: int) -> None:
        """Sync everything written so far, unless a sync since ``mine`` was written did."""
        async with self._lock:
            if self._synced >= mine:
                return
            target, retired = self._written, self._retired
            self._retired = []
            fds = [self.segments[n].fd for n in retired if n in self.segments]
            assert self._active is not None
            fds.append(self._active.fd)
            sync_dir, self._dir_unsynced = self._dir_unsynced, False
            if self.sync:
                await asyncio.to_thread(_fsync, [f for f in fds if f is not None], sync_dir,
                                        self.directory)  # fmt: skip
            self._synced = target
            for number in retired:  # no write reached them since they were retired
                self._close_fd(number)
            self.compact()

    def _close_fd(self, number: int) -> None:
        segment = self.segments.get(number)
        if segment is not None and segment.fd is not None and segment is not self._active:
            os.close(segment.fd)
            segment.fd = None

    # -- tracking and compaction ---------------------------------------------------------------

    def track(self, ack: Ack, traces: Iterable[str]) -> None:
        """Record that ``ack``'s record is held in the buffer as ``traces`` (dirty from now)."""
        segment = self.segments[ack.segment]
        segment.pins -= 1
        for trace_id in traces:
            self._records_of.setdefault(trace_id, []).append(ack.seq)
            mine = self._segments_of.setdefault(trace_id, set())
            if trace_id not in self._dirty:
                for number in mine:
                    self.segments[number].dirty += 1
            if ack.segment not in mine:
                mine.add(ack.segment)
                segment.traces.add(trace_id)
                segment.dirty += 1
            self._dirty[trace_id] = ack.seq
        if segment.dirty == 0:
            self.compact()

    def snapshot(self, traces: Iterable[str]) -> dict[str, int]:
        """Each dirty trace of ``traces`` with its last record: what :meth:`settle` settles."""
        return {t: self._dirty[t] for t in traces if t in self._dirty}

    def digest(self, traces: Iterable[str]) -> str:
        """sha256 of the records of ``traces`` in the log: what a conversation is read from.

        The same records read again give the same digest.
        """
        parts = sorted((t, tuple(self._records_of.get(t, ()))) for t in set(traces))
        return hashlib.sha256(repr(parts).encode()).hexdigest()

    def settle(self, snapshot: Mapping[str, int]) -> None:
        """The traces of ``snapshot`` are scored (rows committed), unless more records came."""
        for trace_id, seq in snapshot.items():
            if self._dirty.get(trace_id) != seq:
                continue
            del self._dirty[trace_id]
            for number in self._segments_of.get(trace_id, ()):
                self.segments[number].dirty -= 1
        self.compact()

    def referenced(self, trace_id: str) -> bool:
        """Whether a segment still holds records of ``trace_id``."""
        return trace_id in self._segments_of

    @property
    def dirty_traces(self) -> int:
        """Traces whose records are not yet scored."""
        return len(self._dirty)

    @property
    def indexed_traces(self) -> int:
        """Traces the index holds (those of the segments not yet deleted)."""
        return len(self._segments_of)

    def compact(self) -> int:
        """Delete the segments nothing needs any more (never the active one); returns how many."""
        done = [
            s
            for s in self.segments.values()
            if s is not self._active and s.dirty == 0 and s.pins == 0
        ]
        for segment in done:
            self._delete(segment)
        return len(done)

    def _delete(self, segment: _Segment) -> None:
        if segment.fd is not None:
            os.close(segment.fd)
            segment.fd = None
        with contextlib.suppress(FileNotFoundError):
            segment.path.unlink()
        del self.segments[segment.number]
        self.compactions += 1
        for trace_id in segment.traces:
            mine = self._segments_of.get(trace_id)
            if mine is None:
                continue
            mine.discard(segment.number)
            if not mine:
                del self._segments_of[trace_id]
                self._records_of.pop(trace_id, None)

    def close(self) -> None:
        """Close the files; when nothing is dirty, the active segment goes too. Unlock.

        Idempotent.
        """
        if self._held_lock is None:
            return
        active = self._active
        if active is not None and active.dirty == 0 and active.pins == 0:
            self._active = None
        self.compact()
        for number in list(self.segments):
            self._close_fd(number)
        if self._active is not None and self._active.fd is not None:
            os.close(self._active.fd)
            self._active.fd = None
        self._held_lock.release()
        self._held_lock = None


def _fsync(fds: list[int], sync_dir: bool, directory: Path) -> None:
    for fd in fds:
        os.fsync(fd)
    if sync_dir:  # a new segment's name is durable too
        dir_fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(dir_fd)
        finally:
            os.close(dir_fd)
