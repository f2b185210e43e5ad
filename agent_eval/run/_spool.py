"""The conversations of a scoring run on disk, read back one at a time: :class:`TraceSpool`.

``score`` goes over its conversations several times: the plan (``--dry-run``), one read for
the files beside the results (``renderings.jsonl``, ``conversations.jsonl``) and the agent
usage table, ``units.jsonl`` and ``turns.jsonl`` (answer metrics), and each metric's engine.
Holding them all for that
costs memory in proportion to the input (trial 8: 1.10 GB for a 723 MB Collector file whose
ingest alone peaks at 150 MB). So the run reads the input once, streaming, into a spool: each
conversation is pickled into a temporary SQLite database as ingest emits it, and only its
conversation id stays in memory (for the counts, reference checks and the sorted
``renderings.jsonl``). Every later pass iterates the spool, which loads one conversation at a
time, in input order, so a pass holds what its consumer keeps: the engine, its conversations in
flight (its concurrency).

Renderings: a formatter is called once per conversation and formatter in a run
(:class:`~agent_eval.run._rendering.RenderCache`), but a conversation read back is a new object.
So the spool keeps every rendering a pass made (what the cache holds for the trace once its
consumer asks for the next one) in the database too, and hands it to the cache with the trace
on every later read (:meth:`RenderCache.seed
<agent_eval.run._rendering.RenderCache.seed>`).

Rows are pickles written and read by this process only (never a file a user gives). The
database lives in a temporary directory (``tempfile``: ``TMPDIR`` decides), journaling and sync
off, removed by :meth:`TraceSpool.close`.

Small runs stay in memory: the spool holds its conversations as they are until they total more
than :data:`MEMORY_MESSAGES` messages, and only then moves them all to the database (so a run of
a few thousand conversations pays no pickling; its passes see the same objects, and their
renderings are kept per trace, as on disk). Memory is bounded either way: by that budget, or
by what a pass holds.
"""

from __future__ import annotations

import pickle
import sqlite3
import tempfile
from collections.abc import Callable, Iterable, Iterator, Sequence
from pathlib import Path

from agent_eval._trace import AgentTrace
from agent_eval.ingest._spill import CompactPickler
from agent_eval.run._rendering import RenderCache, RenderingKey

__all__ = ["MEMORY_MESSAGES", "TraceSpool"]

MEMORY_MESSAGES = 20_000
"""Messages (over all conversations) a spool holds in memory before it moves them to disk
(about 30 MiB of conversations at ~1.6 KiB per message; ingest's in-memory budget is 20,000
spans)."""


class TraceSpool:
    """AgentTraces kept in a temporary database, iterated in the order they were added.

    Iterating (any number of times) loads one trace at a time. Renderings made in ``renderings``
    for a trace while it was out are stored with it and seeded into the cache on later reads.

    Args:
        renderings: The run's render cache (a cache of its own when ``None``).
        memory_messages: Messages held in memory before the traces move to the database
            (default :data:`MEMORY_MESSAGES`, read when the spool is made; 0: on disk from the
            first trace).

    Attributes:
        conversation_ids: The traces' conversation ids, in order (one per trace: an id twice
            in the input is twice here, as the traces are).

    """

    def __init__(
        self, renderings: RenderCache | None = None, memory_messages: int | None = None
    ) -> None:
        self.renderings = renderings if renderings is not None else RenderCache()
        self.conversation_ids: list[str] = []
        self._budget = MEMORY_MESSAGES if memory_messages is None else memory_messages
        self._held: list[AgentTrace] | None = []
        """The traces while they stay in memory; ``None`` once they moved to the database."""
        self._held_messages = 0
        self._held_renderings: dict[int, dict[str, str]] = {}
        """The renderings made of the held traces, by position (kept as on disk)."""
        self._dir: tempfile.TemporaryDirectory[str] | None = None
        self._db: sqlite3.Connection | None = None
        self._pickler = CompactPickler()

    @property
    def on_disk(self) -> bool:
        """Whether the traces are in the database (past the memory budget) rather than held."""
        return self._held is None

    def _open(self) -> sqlite3.Connection:
        """Make the database (first use) and move the held traces into it."""
        self._dir = tempfile.TemporaryDirectory(prefix="agent-eval-spool-")
        self._db = sqlite3.connect(Path(self._dir.name) / "spool.db", isolation_level=None)
        self._db.executescript(
            """
            PRAGMA journal_mode = OFF;
            PRAGMA synchronous = OFF;
            CREATE TABLE trace (position INTEGER PRIMARY KEY, data BLOB NOT NULL);
            CREATE TABLE rendering (position INTEGER NOT NULL, formatter TEXT NOT NULL,
                text TEXT NOT NULL, PRIMARY KEY (position, formatter)) WITHOUT ROWID;
            """
        )
        held, self._held = self._held or [], None
        dumps = self._pickler.dumps
        self._db.execute("BEGIN")
        try:
            self._db.executemany(
                "INSERT INTO trace VALUES (?, ?)",
                ((position, dumps(trace)) for position, trace in enumerate(held)),
            )
            self._db.executemany(
                "INSERT OR REPLACE INTO rendering VALUES (?, ?, ?)",
                (
                    (position, identity, text)
                    for position, texts in self._held_renderings.items()
                    for identity, text in texts.items()
                ),
            )
            self._held_renderings = {}
        finally:
            self._db.execute("COMMIT")
        return self._db

    @classmethod
    def collect(
        cls,
        traces: Iterable[AgentTrace],
        renderings: RenderCache | None = None,
        memory_messages: int | None = None,
    ) -> TraceSpool:
        """A spool of ``traces`` (consumed once, streaming)."""
        spool = cls(renderings, memory_messages)
        try:
            spool.extend(traces)
        except BaseException:
            spool.close()
            raise
        return spool

    def extend(self, traces: Iterable[AgentTrace]) -> None:
        """Add ``traces`` at the end, in order (in memory while within the budget)."""
        iterator = iter(traces)
        held = self._held
        if held is not None:
            for trace in iterator:
                held.append(trace)
                self.conversation_ids.append(trace.conversation_id)
                self._held_messages += len(trace.messages)
                if self._held_messages > self._budget:
                    break
            else:
                return
        db = self._db if self._db is not None else self._open()
        dumps = self._pickler.dumps
        db.execute("BEGIN")
        try:
            for trace in iterator:
                db.execute(
                    "INSERT INTO trace VALUES (?, ?)", (len(self.conversation_ids), dumps(trace))
                )
                self.conversation_ids.append(trace.conversation_id)
        finally:
            db.execute("COMMIT")

    def rewrite(self, change: Callable[[Iterable[AgentTrace]], Iterable[AgentTrace]]) -> TraceSpool:
        """A new spool of ``change(self)`` (streamed through); this one is closed."""
        try:
            return TraceSpool.collect(change(self), self.renderings, self._budget)
        finally:
            self.close()

    def __len__(self) -> int:
        """How many traces the spool holds."""
        return len(self.conversation_ids)

    def __iter__(self) -> Iterator[AgentTrace]:
        """The traces in order, loaded one at a time (their stored renderings seeded)."""
        for position, trace in self._traces():
            stored = self._stored(position)
            for identity, text in stored.items():
                self.renderings.seed(trace, identity, text)
            try:
                yield trace
            finally:  # the consumer moved on (or stopped): keep what it rendered
                self._keep_new(position, trace, stored)

    def _traces(self) -> Iterator[tuple[int, AgentTrace]]:
        """``(position, trace)`` in order: the held traces, else read from the database."""
        if self._held is not None:
            yield from enumerate(list(self._held))
            return
        assert self._db is not None
        cursor = self._db.execute("SELECT position, data FROM trace ORDER BY position")
        while rows := cursor.fetchmany(64):
            for position, data in rows:
                yield position, pickle.loads(data)  # written by this process: trusted

    def sorted_renderings(self, identities: Sequence[str]) -> Iterator[tuple[RenderingKey, str]]:
        """The stored renderings by ``(conversation_id, formatter)``, sorted by that key.

        An id held twice gives its last trace's rendering (what a dict built in input order
        keeps). Each of ``identities`` must have rendered every trace (:meth:`__iter__` with
        the formatters called).

        Raises:
            KeyError: a trace has no stored rendering for one of ``identities``.

        """
        last = {cid: position for position, cid in enumerate(self.conversation_ids)}
        for cid in sorted(last):
            stored = self._stored(last[cid])
            for identity in sorted(identities):
                yield (cid, identity), stored[identity]

    def close(self) -> None:
        """Drop the held traces, or the database and its directory (idempotent)."""
        if self._held is not None:
            self._held.clear()
            self._held_renderings.clear()
        if self._db is not None:
            self._db.close()
        if self._dir is not None:
            self._dir.cleanup()

    def _stored(self, position: int) -> dict[str, str]:
        if self._held is not None:
            return self._held_renderings.get(position, {})
        assert self._db is not None
        rows = self._db.execute(
            "SELECT formatter, text FROM rendering WHERE position = ?", (position,)
        ).fetchall()
        return dict(rows)

    def _keep_new(self, position: int, trace: AgentTrace, stored: dict[str, str]) -> None:
        """Keep the renderings of ``trace`` made since it was read, by its position."""
        new = {
            identity: text
            for identity, text in self.renderings.held(trace).items()
            if identity not in stored
        }
        if not new:
            return
        if self._held is not None:
            self._held_renderings.setdefault(position, {}).update(new)
            return
        assert self._db is not None
        self._db.executemany(
            "INSERT OR REPLACE INTO rendering VALUES (?, ?, ?)",
            [(position, identity, text) for identity, text in new.items()],
        )
