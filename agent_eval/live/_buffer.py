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
(a request's bytes shared evenly over its items). Pending (unscored) bytes never exceed
``max_bytes``: before a request is admitted, retained conversations are evicted, least recently
scored first; when pending spans alone would exceed the limit the request is refused (the
receiver answers 503 with ``Retry-After``). A late span of an evicted conversation re-scores it
from what arrives afterwards, with a note saying so.
"""

from __future__ import annotations

import time
from collections import OrderedDict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field

from agent_eval.ingest._spans import LogRecord, SpanRecord

__all__ = ["BufferStats", "HeldTrace", "SpanBuffer"]

Item = SpanRecord | LogRecord


@dataclass
class HeldTrace:
    """One trace's items, waiting (pending) or kept after scoring (retained).

    Attributes:
        trace_id: 32 hex.
        items: Spans and log records, in arrival order.
        size: Bytes charged to it.
        last_seen: Monotonic time of the last item.
        root_seen: Whether its root span has arrived.
        new_spans: Spans that arrived since it was last scored.
        conversation_id: Set once it was scored.

    """

    trace_id: str
    items: list[Item] = field(default_factory=list)
    size: float = 0.0
    last_seen: float = 0.0
    root_seen: bool = False
    new_spans: int = 0
    conversation_id: str | None = None


@dataclass
class BufferStats:
    """Counters of a :class:`SpanBuffer`."""

    evicted_conversations: int = 0
    evicted_bytes: float = 0.0
    reopened_traces: int = 0


class SpanBuffer:
    """Pending and retained traces (see the module docstring for the policy).

    Args:
        max_bytes: The most bytes held (pending plus retained; retained are evicted first).
        idle_seconds: A trace with no new item for this long is due.
        after_root_seconds: A trace whose root span arrived is due after this long without
            new items.
        clock: Monotonic seconds (tests pass their own).

    Not thread-safe: the receiver uses it from its event loop only.
    """

    def __init__(
        self,
        *,
        max_bytes: int,
        idle_seconds: float = 30.0,
        after_root_seconds: float = 2.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.max_bytes, self.idle_seconds = max_bytes, idle_seconds
        self.after_root_seconds, self.clock = after_root_seconds, clock
        self.pending: dict[str, HeldTrace] = {}
        self.retained: OrderedDict[str, list[HeldTrace]] = OrderedDict()
        self._retained_trace: dict[str, str] = {}
        self.revisions: dict[str, int] = {}
        self.evicted: set[str] = set()
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
            self.evicted.add(conversation_id)
            self.stats.evicted_conversations += 1
            self.stats.evicted_bytes += freed
        return self.pending_bytes + size <= self.max_bytes

    def add(self, items: Iterable[Item], size: int) -> None:
        """Hold ``items`` (spans and log records with a trace id), charged ``size`` bytes."""
        batch = [i for i in items if i.trace_id]
        if not batch:
            return
        share, now = size / len(batch), self.clock()
        for item in batch:
            trace_id = item.trace_id
            assert trace_id is not None
            held = self.pending.get(trace_id) or self._reopen(trace_id)
            held.items.append(item)
            held.size += share
            held.last_seen = now
            if isinstance(item, SpanRecord):
                held.new_spans += 1
                held.root_seen = held.root_seen or not item.parent_span_id
        self.pending_bytes += size

    def _reopen(self, trace_id: str) -> HeldTrace:
        conversation_id = self._retained_trace.pop(trace_id, None)
        if conversation_id is None:
            held = self.pending[trace_id] = HeldTrace(trace_id)
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
        """The retained traces of an already scored conversation (empty when none)."""
        return list(self.retained.get(conversation_id, ()))

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
        revision = self.revisions.get(conversation_id, -1) + 1
        self.revisions[conversation_id] = revision
        return revision
