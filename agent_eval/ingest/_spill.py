"""Spilling: the span entries of idle traces kept in SQLite instead of memory until the end.

A Collector file holds every conversation of a day; assembly needs each conversation whole, and
the output must be exactly what reading everything into memory gives (same conversations, same
order, same accounting). So the :class:`~agent_eval.ingest._assemble.Assembler` keeps in memory
only the traces still being written (the conversations in flight), bounded by
:class:`StreamLimits`, and moves the least recently touched traces to a :class:`SpillStore`:

- **What spills**: a trace's :class:`~agent_eval.ingest._span_entry.SpanEntry` objects (the
  compact reading of each span, not the raw span) and the GenAI log records waiting for its
  spans, pickled together as one row (messages a replayed history shares are stored once per
  row). A span that arrives for a spilled trace (a late span, the same trace in a later file)
  starts a new in-memory part of that trace, spilled in its turn; nothing is ever emitted
  before the end of input, so an id that recurs late never becomes two conversations.
- **The spilled form**: on a large file nearly every entry spills and is read back once, so
  its round trip is paid per span. Entries are written as tuples of their fields (their file
  as an index into the report), the frozen dataclasses an entry holds
  (:class:`~agent_eval.ingest._extraction.SpanExtraction`, ``ToolExecution``,
  ``SourceLocation``) as their constructor and field values (the generic pickling of a frozen
  slots dataclass looks its fields up again for every object read back: about 45% of the
  round trip), and messages as pydantic pickles them (exactly, ``model_fields_set``
  included). One pickler is reused for every row, and the parts of one spill are inserted in
  one batch.
- **Why not emit early**: conversations are emitted in the order of their first span over the
  whole input; a conversation read later may start earlier, so no conversation can be emitted
  before the input ends without changing the output order.
- **At the end** (:meth:`~agent_eval.ingest._assemble.Assembler.finish`): pass 1 loads each
  trace (its parts in arrival order), joins its log records, assigns its conversation ids and
  stores it back joined; pass 2 loads, per conversation in output order, the traces it touches
  and assembles it. Memory is then bounded by the largest conversation, not the file.
- **Where**: a temporary directory (``tempfile``, so ``TMPDIR`` decides), removed when the run
  ends or is abandoned; SQLite with journaling and sync off (the data lives for one run).

Peak memory is therefore the in-memory budget (:attr:`StreamLimits.max_spans_in_memory`) plus an
index of a few dozen bytes per trace and per conversation.
"""

from __future__ import annotations

import io
import pickle
import tempfile
from collections.abc import Callable, Iterable
from dataclasses import dataclass, fields
from itertools import repeat
from operator import attrgetter
from pathlib import Path
from typing import Any

from agent_eval.ingest._extraction import SpanExtraction, ToolExecution, new_span_extraction
from agent_eval.ingest._spans import SourceLocation

__all__ = ["CompactPickler", "SpillStore", "StreamLimits"]


@dataclass(frozen=True)
class StreamLimits:
    """How much of the input the assembler keeps in memory.

    Attributes:
        max_spans_in_memory: Span entries held in memory before the least recently touched
            traces spill to disk (a few KB each: ~50 MB at the default).
        spill_to: Fraction of ``max_spans_in_memory`` kept after a spill (spilling in batches).

    """

    max_spans_in_memory: int = 20_000
    spill_to: float = 0.75

    @classmethod
    def tightest(cls) -> StreamLimits:
        """Spill every trace as soon as another span arrives (for tests of the spill path)."""
        return cls(max_spans_in_memory=1, spill_to=0.0)


class SpillStore:
    """Trace parts and joined traces in a temporary SQLite database.

    Rows are pickled Python objects written and read by this process only (never a file a
    user gives), in the compact form of :class:`CompactPickler`. Not thread-safe: the
    assembler's callers serialise access.
    """

    def __init__(self) -> None:
        self._dir = tempfile.TemporaryDirectory(prefix="agent-eval-spill-")
        import sqlite3  # only when a conversation spills: a small ingest imports no sqlite3

        self._db = sqlite3.connect(
            Path(self._dir.name) / "spill.db", isolation_level=None, check_same_thread=False
        )
        self._db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE part (trace_id TEXT NOT NULL, data BLOB NOT NULL);
            CREATE INDEX part_trace ON part (trace_id);
            CREATE TABLE span (trace_id TEXT NOT NULL, span_id TEXT NOT NULL,
                PRIMARY KEY (trace_id, span_id)) WITHOUT ROWID;
            CREATE TABLE joined (trace_id TEXT PRIMARY KEY, data BLOB NOT NULL) WITHOUT ROWID;
            """
        )
        self._db.execute("BEGIN")
        self._pickler = CompactPickler()

    def add_parts(self, parts: Iterable[tuple[str, list[str], Any]]) -> None:
        """Store parts of traces, each ``(trace id, its span ids, the part)``, in one batch.

        A part is a trace's entries and waiting log records; ``parts`` is consumed once, in
        order (a trace's parts are read back in the order they were stored).
        """
        rows: list[tuple[str, bytes]] = []
        spans: list[tuple[str, str]] = []
        dumps = self._pickler.dumps
        for trace_id, span_ids, part in parts:
            rows.append((trace_id, dumps(part)))
            spans += zip(repeat(trace_id), span_ids)
        self._db.executemany("INSERT INTO part VALUES (?, ?)", rows)
        self._db.executemany("INSERT OR IGNORE INTO span VALUES (?, ?)", spans)

    def has_span(self, trace_id: str, span_id: str) -> bool:
        """Whether a spilled part of ``trace_id`` holds ``span_id``."""
        row = self._db.execute(
            "SELECT 1 FROM span WHERE trace_id = ? AND span_id = ?", (trace_id, span_id)
        ).fetchone()
        return row is not None

    def parts(self, trace_id: str) -> list[Any]:
        """The parts of ``trace_id`` in the order they were stored."""
        rows = self._db.execute(
            "SELECT data FROM part WHERE trace_id = ? ORDER BY rowid", (trace_id,)
        ).fetchall()
        return [pickle.loads(data) for (data,) in rows]

    def put_joined(self, trace_id: str, value: Any) -> None:
        """Store ``trace_id`` whole, after its log records were joined (pass 1)."""
        self._db.execute(
            "INSERT OR REPLACE INTO joined VALUES (?, ?)", (trace_id, self._pickler.dumps(value))
        )

    def joined(self, trace_id: str) -> Any:
        """What :meth:`put_joined` stored for ``trace_id``."""
        (data,) = self._db.execute(
            "SELECT data FROM joined WHERE trace_id = ?", (trace_id,)
        ).fetchone()
        return pickle.loads(data)

    def close(self) -> None:
        """Drop the database and its directory."""
        self._db.close()
        self._dir.cleanup()


def _tool_execution(
    name: str | None,
    call_id: str | None,
    arguments: Any,
    raw_arguments: str | None,
    result: str | None,
) -> ToolExecution:
    return ToolExecution(
        name=name, call_id=call_id, arguments=arguments, raw_arguments=raw_arguments, result=result
    )


def _fields_of(cls: type) -> Callable[[Any], tuple[Any, ...]]:
    """The values of a dataclass's fields, in declaration order, as one tuple."""
    return attrgetter(*(f.name for f in fields(cls)))


_EXTRACTION = _fields_of(SpanExtraction)
_TOOL = _fields_of(ToolExecution)
_REDUCE: dict[type, Callable[[Any], tuple[Any, ...]]] = {
    SpanExtraction: lambda ex: (new_span_extraction, _EXTRACTION(ex)),
    ToolExecution: lambda tool: (_tool_execution, _TOOL(tool)),
    SourceLocation: lambda loc: (SourceLocation, (loc.path, loc.line)),
}
"""Compact pickled forms of the frozen dataclasses a spilled entry holds: the constructor and
the field values, instead of the generic slots state (``dataclasses``' ``__setstate__`` looks
the fields up again per object: about 45% of a spilled entry's round trip, measured on
``bench/ingest.py``'s traffic)."""


class CompactPickler(pickle.Pickler):
    """A reusable pickler writing the spill store's compact forms; ``pickle.loads`` reads them.

    The frozen dataclasses of a span entry (``SpanExtraction``, ``ToolExecution``,
    ``SourceLocation``) are written as their constructor and field values; everything else
    pickles as usual, so objects shared within a row (the messages a replayed history repeats
    on every call of a trace) are still written once per row.
    """

    def __init__(self) -> None:
        self._buffer = io.BytesIO()
        super().__init__(self._buffer, pickle.HIGHEST_PROTOCOL)

    def reducer_override(self, obj: Any) -> Any:
        """The compact form of ``obj`` when it has one, else pickle's own (``NotImplemented``)."""
        reduce = _REDUCE.get(type(obj))
        return NotImplemented if reduce is None else reduce(obj)

    def dumps(self, value: Any) -> bytes:
        """``value`` pickled on its own (no object shared with an earlier or a later row)."""
        buffer = self._buffer
        buffer.seek(0)
        buffer.truncate()
        try:
            self.dump(value)
        finally:
            self.clear_memo()  # the memo holds the row's objects: let them go now
        return buffer.getvalue()
