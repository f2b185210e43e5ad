"""Group span entries into conversations and order them by time and parentage.

A conversation is keyed by the conversation id an extraction reported (``gen_ai.conversation.id``,
``session.id``...). Spans without one take the id of their nearest ancestor that has one, else
the id found on another span of their trace (the earliest), else the trace id. So a
conversation may spread over several traces, and a trace with no conversation id is one
conversation.

Within a conversation spans are ordered by start time, then depth (a parent before a child that
starts at the same instant), then arrival order. Parent links are followed defensively: a parent
that is missing makes the span an orphan (noted, still used), and a parent cycle is broken where
it closes (noted); neither ever raises.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from operator import itemgetter

from agent_eval.ingest._span_entry import SpanEntry

__all__ = ["Conversation", "TraceTree", "conversation_keys", "group_conversations"]

_RANK = itemgetter(0, 1, 2)
MAX_NOTES_PER_KIND = 5
"""How many orphan/cycle notes a trace keeps (the rest are summarised by count)."""


class TraceTree:
    """Parent links of one trace's entries, walked cycle-safely."""

    def __init__(self, entries: Iterable[SpanEntry]) -> None:
        self.by_id = {e.span_id: e for e in entries}
        self.orphans: list[str] = []
        self.cycles: list[str] = []
        self._ancestors: dict[str, list[SpanEntry]] = {}

    def ancestors(self, entry: SpanEntry) -> list[SpanEntry]:
        """The entry's ancestors, nearest first (stops at a missing parent or a cycle)."""
        cached = self._ancestors.get(entry.span_id)
        if cached is not None:
            return cached
        chain: list[SpanEntry] = []
        seen = {entry.span_id}
        parent_id = entry.parent_id
        while parent_id is not None:
            parent = self.by_id.get(parent_id)
            if parent is None:
                self._note(
                    self.orphans, f"{chain[-1].span_id if chain else entry.span_id}->{parent_id}"
                )
                break
            if parent_id in seen:
                self._note(self.cycles, parent_id)
                break
            seen.add(parent_id)
            chain.append(parent)
            parent_id = parent.parent_id
        self._ancestors[entry.span_id] = chain
        return chain

    @staticmethod
    def _note(bucket: list[str], item: str) -> None:
        if item not in bucket:
            bucket.append(item)

    def notes(self, trace_id: str) -> list[str]:
        """Human notes on orphans and cycles found while walking."""
        notes: list[str] = []
        if self.orphans:
            shown = ", ".join(
                f"span {o.replace('->', ' has missing parent ')}"
                for o in self.orphans[:MAX_NOTES_PER_KIND]
            )
            more = len(self.orphans) - MAX_NOTES_PER_KIND
            notes.append(
                f"trace {trace_id}: orphan spans ordered by time: {shown}"
                + (f" (+{more} more)" if more > 0 else "")
            )
        if self.cycles:
            shown = ", ".join(self.cycles[:MAX_NOTES_PER_KIND])
            notes.append(f"trace {trace_id}: parent cycle broken at span(s) {shown}")
        return notes


@dataclass
class Conversation:
    """The entries of one conversation in order, with their trace trees and notes."""

    id: str
    entries: list[SpanEntry] = field(default_factory=list)
    trees: dict[str, TraceTree] = field(default_factory=dict)

    @property
    def trace_ids(self) -> list[str]:
        """Trace ids in first-seen order."""
        return list(dict.fromkeys(e.trace_id for e in self.entries))

    def ancestors(self, entry: SpanEntry) -> list[SpanEntry]:
        """The entry's ancestors within its trace, nearest first."""
        return self.trees[entry.trace_id].ancestors(entry)

    def notes(self) -> list[str]:
        """Orphan and cycle notes of every trace."""
        return [n for trace_id, tree in self.trees.items() for n in tree.notes(trace_id)]


def group_conversations(entries: Iterable[SpanEntry]) -> list[Conversation]:
    """Group entries into conversations, each ordered; conversations ordered by first span."""
    conversations: dict[str, Conversation] = {}
    order: dict[str, list[tuple[int, int, int, SpanEntry]]] = {}
    """Per conversation: (start, depth, seq, entry), the order its entries are sorted by."""
    for key, tree, entry, depth in _keyed(entries):
        conversation = conversations.get(key)
        if conversation is None:
            conversation = conversations[key] = Conversation(key)
            order[key] = []
        order[key].append((entry.start, depth, entry.seq, entry))
        conversation.trees[entry.trace_id] = tree
    for key, conversation in conversations.items():
        ranked = order[key]
        ranked.sort(key=_RANK)  # seq is unique, so the entry itself is never compared
        conversation.entries = [r[3] for r in ranked]
    return sorted(conversations.values(), key=lambda c: (c.entries[0].start, c.entries[0].seq))


def conversation_keys(entries: Iterable[SpanEntry]) -> list[tuple[str, tuple[int, int, int]]]:
    """Each conversation's id and the order key of its first entry, without grouping them.

    Returns:
        ``(conversation id, (start, depth, seq))`` per conversation, in order of first entry:
        the ids :func:`group_conversations` gives and the ``(start, depth, seq)`` of the entry
        it puts first in each (the least by that key).

    """
    firsts: dict[str, tuple[int, int, int]] = {}
    for key, _, entry, depth in _keyed(entries):
        rank = (entry.start, depth, entry.seq)
        first = firsts.get(key)
        if first is None or rank < first:
            firsts[key] = rank
    return sorted(firsts.items(), key=lambda item: (item[1][0], item[1][2]))


def _keyed(entries: Iterable[SpanEntry]) -> Iterator[tuple[str, TraceTree, SpanEntry, int]]:
    """``(conversation id, trace tree, entry, depth)`` per entry, trace by trace.

    Traces in order of first entry, each trace's entries in arrival order; the id is the
    entry's own (or its nearest ancestor's), else the trace's, else the trace id.
    """
    by_trace: dict[str, list[SpanEntry]] = {}
    for entry in entries:
        by_trace.setdefault(entry.trace_id, []).append(entry)
    for trace_id, trace_entries in by_trace.items():
        tree = TraceTree(trace_entries)
        default = _trace_conversation_id(trace_entries) or trace_id
        for entry in trace_entries:
            chain = tree.ancestors(entry)
            yield _own_conversation_id(entry, chain) or default, tree, entry, len(chain)


def _own_conversation_id(entry: SpanEntry, ancestors: list[SpanEntry]) -> str | None:
    """The conversation id on the span, else on its nearest ancestor that has one."""
    ex = entry.extraction
    if ex is not None and ex.conversation_id:
        return ex.conversation_id
    for candidate in ancestors:
        ex = candidate.extraction
        if ex is not None and ex.conversation_id:
            return ex.conversation_id
    return None


def _trace_conversation_id(entries: list[SpanEntry]) -> str | None:
    found = [e for e in entries if e.extraction is not None and e.extraction.conversation_id]
    if not found:
        return None
    first = min(found, key=lambda e: (e.start, e.seq))
    assert first.extraction is not None
    return first.extraction.conversation_id
