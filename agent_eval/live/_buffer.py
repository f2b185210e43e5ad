"""Spans held per trace until their conversation closes, in bounded memory.

Closing policy (``agent-eval serve``):

- A trace is **due** when no span or log record of it has arrived for ``idle_seconds``
  (default 30 s), or, once its root span (a span without a parent) has arrived, for
  ``after_root_seconds`` (default 2 s): the root span ends last in a well-formed trace, so its
  arrival means the trace is complete, and the short grace covers exporters that batch children
  and root separately.
- Due traces are assembled together, so a conversation spread over several traces that close at
  once becomes one conversation (``gen_ai.conversation.id`` / ``session.id`` grouping).
- A scored trace is **retained** (its spans kept) so that a conversation can be re-scored as a
  whole when more of it arrives: a late span of a scored trace, or a new trace of the same
  conversation (the next turn), re-opens it; it closes again by the same rule and is scored as a
  new result row (``revision`` n+1, with a note), never merged into the earlier row.

Memory: every held trace is charged the decoded size of the requests its items came from
(a request's bytes shared evenly over its items), and holds its items packed (pickled bytes,
one blob per request: :attr:`HeldTrace.packed`), not as decoded objects, so what it is charged
is about what it occupies; each trace is also charged :data:`HELD_TRACE_BYTES` for its own
objects. Pending (unscored) plus retained bytes never exceed ``max_bytes``:
before a request is admitted, retained conversations are evicted, least recently scored first;
when pending spans alone would exceed the limit the request is refused (the receiver answers
503 with ``Retry-After``). With an :class:`~agent_eval.live._evicted.EvictedStore` (``serve``
always has one) an evicted conversation goes to disk, with its revision counter, and is read
back whole when a late span of it arrives; without one it is dropped and a late span re-scores
it from what arrives afterwards, with a note saying so.
"""

from __future__ import annotations

import pickle
import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.live._evicted import EvictedStore, PackedTrace

__all__ = ["HELD_TRACE_BYTES", "BufferStats", "HeldTrace", "SpanBuffer"]

HELD_TRACE_BYTES = 768
"""What a held trace costs beyond its packed items, bytes: its :class:`HeldTrace`, its 32-hex
id, its list of blobs and their headers, and its entries in the buffer's maps (about 700 bytes
retained, measured with ``tracemalloc`` on CPython 3.11). Charged once per trace."""

Item = SpanRecord | LogRecord


@dataclass
class HeldTrace:
    """One trace's items, waiting (pending) or kept after scoring (retained).

    Attributes:
        trace_id: 32 hex.
        packed: Its spans and log records, in arrival order, pickled: one blob per request
            (:attr:`items` unpacks them).
        size: Bytes charged to it.
        last_seen: Monotonic time of the last item.
        root_seen: Whether its root span has arrived.
        new_spans: Spans that arrived since it was last scored.
        conversation_id: Set once it was scored.

    """

    trace_id: str
    packed: list[bytes] = field(default_factory=list)
    size: float = 0.0
    last_seen: float = 0.0
    root_seen: bool = False
    new_spans: int = 0
    conversation_id: str | None = None

    @property
    def items(self) -> list[Item]:
        """Its spans and log records, unpacked (new objects on every call)."""
        return [item for blob in self.packed for item in pickle.loads(blob)]

    def pack(self, items: list[Item]) -> None:
        """Add ``items`` (one request's items of this trace), packed."""
        self.packed.append(pickle.dumps(items, protocol=pickle.HIGHEST_PROTOCOL))

    def packed_form(self) -> PackedTrace:
        """What :class:`~agent_eval.live._evicted.EvictedStore` keeps of it."""
        return (self.trace_id, self.packed, self.size)


@dataclass
class BufferStats:
    """Counters of a :class:`SpanBuffer`."""

    evicted_conversations: int = 0
    evicted_bytes: float = 0.0
    reopened_traces: int = 0
    read_back_conversations: int = 0
    """Evicted conversations read back from the store (a late span or next turn arrived)."""


class SpanBuffer:
    """Pending and retained traces (see the module docstring for the policy).

    Args:
        max_bytes: The most bytes held (pending plus retained; retained are evicted first).
        idle_seconds: A trace with no new item for this long is due.
        after_root_seconds: A trace whose root span arrived is due after this long without
            new items.
        clock: Monotonic seconds (tests pass their own).
        store: Where evicted conversations go (``None``: they are dropped).

    Not thread-safe: the receiver uses it from its event loop only.
    """

    def __init__(
        self,
        *,
        max_bytes: int,
        idle_seconds: float = 30.0,
        after_root_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
        store: EvictedStore | None = None,
    ) -> None:
        self.max_bytes, self.idle_seconds = max_bytes, idle_seconds
        self.after_root_seconds, self.clock = after_root_seconds, clock
        self.store = store
        self.pending: dict[str, HeldTrace] = {}
        self.retained: OrderedDict[str, list[HeldTrace]] = OrderedDict()
        self._retained_trace: dict[str, str] = {}
        self.revisions: dict[str, int] = {}
        """Revision counters of the retained conversations (of all, without a store)."""
        self.evicted: set[str] = set()
        """Conversations dropped (without a store) whose spans are gone."""
        self.pending_bytes = 0.0
        self.retained_bytes = 0.0
        self.stats = BufferStats()

    @property
    def held_bytes(self) -> float:
        """Pending plus retained bytes."""
        return self.pending_bytes + self.retained_bytes

    def admit(self, size: int) -> bool:
        """Make room for ``size`` bytes, evicting retained conversations; ``False``: full."""
        while self.held_bytes + size > self.max_bytes and self.retained:
            conversation_id, traces = self.retained.popitem(last=False)
            freed = sum(t.size for t in traces)
            for held in traces:
                self._retained_trace.pop(held.trace_id, None)
            self.retained_bytes -= freed
            if self.store is None:
                self.evicted.add(conversation_id)
            else:  # to disk, its revision counter with it: nothing of it stays in memory
                self.store.put(conversation_id, [t.packed_form() for t in traces])
                self.store.set_revision(conversation_id, self.revisions.pop(conversation_id))
            self.stats.evicted_conversations += 1
            self.stats.evicted_bytes += freed
        return self.pending_bytes + size <= self.max_bytes

    def cost(self, items: Iterable[object], size: int) -> int:
        """What holding ``items`` of a request of ``size`` bytes is charged (to :meth:`admit`).

        ``size``, plus :data:`HELD_TRACE_BYTES` for each of their traces not pending yet.
        """
        traces = {t for i in items if isinstance(t := getattr(i, "trace_id", None), str) and t}
        return size + HELD_TRACE_BYTES * len(traces - self.pending.keys())

    def add(self, items: Iterable[Item], size: int) -> None:
        """Hold ``items`` (spans and log records with a trace id), charged ``size`` bytes."""
        batch = [i for i in items if i.trace_id]
        if not batch:
            return
        share, now = size / len(batch), self.clock()
        by_trace: dict[str, list[Item]] = {}
        for item in batch:
            by_trace.setdefault(str(item.trace_id), []).append(item)
        for trace_id, mine in by_trace.items():
            held = self.pending.get(trace_id) or self._reopen(trace_id)
            held.pack(mine)
            held.size += share * len(mine)
            held.last_seen = now
            for item in mine:
                if isinstance(item, SpanRecord):
                    held.new_spans += 1
                    held.root_seen = held.root_seen or not item.parent_span_id
        self.pending_bytes += size

    def _reopen(self, trace_id: str) -> HeldTrace:
        if trace_id not in self._retained_trace and self.store is not None:
            evicted = self.store.conversation_of(trace_id)
            if evicted is not None:  # read back whole, as if it had stayed
                self.retained_traces(evicted)
        conversation_id = self._retained_trace.pop(trace_id, None)
        if conversation_id is None:  # the trace's own objects are charged too
            held = self.pending[trace_id] = HeldTrace(trace_id, size=HELD_TRACE_BYTES)
            self.pending_bytes += HELD_TRACE_BYTES
            return held
        traces = self.retained[conversation_id]
        held = next(t for t in traces if t.trace_id == trace_id)
        traces.remove(held)
        if not traces:
            del self.retained[conversation_id]
        self.retained_bytes -= held.size
        self.pending_bytes += held.size
        held.root_seen = False  # closes again by the same rule
        self.stats.reopened_traces += 1
        self.pending[trace_id] = held
        return held

    def due(self, *, everything: bool = False) -> list[HeldTrace]:
        """Remove and return the traces that close now (all of them when ``everything``)."""
        now = self.clock()
        closing = [
            held
            for held in self.pending.values()
            if everything
            or now - held.last_seen >= self.idle_seconds
            or (held.root_seen and now - held.last_seen >= self.after_root_seconds)
        ]
        for held in closing:
            del self.pending[held.trace_id]
            self.pending_bytes -= held.size
        return closing

    def retained_traces(self, conversation_id: str) -> list[HeldTrace]:
        """The retained traces of an already scored conversation (empty when none).

        An evicted one is read back from the store into memory (retained again, charged).
        """
        if self.store is not None and conversation_id not in self.retained:
            back = self.store.take(conversation_id)
            if back:
                self._restore(conversation_id, back)
        return list(self.retained.get(conversation_id, ()))

    def _restore(self, conversation_id: str, back: list[PackedTrace]) -> None:
        assert self.store is not None
        traces = [
            HeldTrace(t, packed, size, conversation_id=conversation_id) for t, packed, size in back
        ]
        self.retained[conversation_id] = traces
        for held in traces:
            self._retained_trace[held.trace_id] = conversation_id
        self.retained_bytes += sum(t.size for t in traces)
        self.revisions[conversation_id] = self.store.revision(conversation_id)
        self.stats.read_back_conversations += 1

    def is_evicted(self, conversation_id: str) -> bool:
        """Whether ``conversation_id``'s earlier spans were dropped (no store) or are on disk."""
        if conversation_id in self.evicted:
            return True
        return self.store is not None and self.store.holds(conversation_id)

    def retain(self, conversation_id: str, traces: Iterable[HeldTrace]) -> int:
        """Keep ``traces`` as the scored conversation ``conversation_id``; returns its revision.

        The revision is 0 the first time a conversation is scored, then 1, 2...
        """
        kept = self.retained.pop(conversation_id, [])
        known = {t.trace_id for t in kept}
        for held in traces:
            held.conversation_id, held.new_spans = conversation_id, 0
            if held.trace_id not in known:
                kept.append(held)
                self.retained_bytes += held.size
            self._retained_trace[held.trace_id] = conversation_id
        self.retained[conversation_id] = kept
        earlier = self.revisions.get(conversation_id)
        if earlier is None:
            earlier = -1 if self.store is None else self.store.revision(conversation_id)
        revision = earlier + 1
        self.revisions[conversation_id] = revision
        return revision
