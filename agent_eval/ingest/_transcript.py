"""One deduplicated transcript from the LLM calls and tool runs of a conversation.

Each LLM call usually replays the whole history in its input. :meth:`Transcript.add_call` aligns
the call's input with the transcript so far and appends only what is new, then the call's
output. Two input shapes are recognised:

- the **history**, up to the input's last assistant message, is matched in order against the
  transcript (a cursor moves forward, so a replayed sub-history of one agent among others, or a
  truncated window, aligns too); a message never seen is inserted before the next matched one;
  system messages match anywhere (a sub-agent's own instructions appear once, where that agent
  first speaks), and so do tool results with a call id (parallel results replayed in another
  order than they ran are each kept once; results read from tool spans take the order of the
  first input that replays them, the order the model was sent them);
- the **new turn** after it (user message, tool results) is matched only after the position of
  that assistant message, so a repeated "yes" is a new message. An input without any assistant
  message (first call, or a **stateful server** such as the Responses API with
  ``previous_response_id``, whose input holds only the new messages) is matched only against the
  messages added since the transcript's last assistant message.

Messages are compared by :func:`~agent_eval.ingest._message_identity.message_key`. Every
sighting adds the span id to the message. Tool runs recorded on their own spans
(:meth:`Transcript.add_tool_run`) supply the tool result when the next LLM input lacks it.

Cost: each call replays the history of the one before, so the work per call must not grow with
the whole history in Python. Slots are indexed by message key and by tool-call id (a lookup away
from the cursor is not a scan); the input's start that equals the previous call's input (the same
message objects, shared by the history cache) is not coalesced or keyed again; and the start of
a history that repeats the previous call's *run* (messages that each only added their span id to
the slot they matched) is replayed in one pass, cut where a slot it read has changed since.
Each shortcut has the effect of the general path it replaces
(``tests/ingest/test_transcript_shortcuts.py`` compares them with a transcript that has them off).
"""

from __future__ import annotations

import sys
from bisect import bisect_left
from collections import deque
from dataclasses import dataclass, field
from itertools import repeat
from operator import attrgetter, is_
from typing import Any

from agent_eval._trace import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage
from agent_eval.ingest._extraction import ToolExecution
from agent_eval.ingest._message_identity import (
    MessageKey,
    merge_sightings,
    message_key,
    tool_result_key,
    with_speaker,
)

__all__ = ["Transcript", "coalesce_tool_calls"]


def _anywhere(message: Message) -> bool:
    """Messages matched anywhere in the transcript, not only after the cursor.

    System messages (a sub-agent's instructions) and tool results with a call id: call ids are
    unique, so a result is the same wherever a replay puts it (parallel results come back in
    any order).
    """
    return isinstance(message, SystemMessage) or (
        isinstance(message, ToolMessage) and message.tool_call_id is not None
    )


def coalesce_tool_calls(messages: tuple[Message, ...]) -> tuple[Message, ...]:
    """Consecutive assistant messages of tool calls as the one assistant turn they were.

    The OpenAI Responses API has one input item per ``function_call``, so an instrumentation
    replaying it (openinference on the Agents SDK) records a turn with two parallel calls as two
    assistant messages; the model's output was one. A message holding only tool calls (no text)
    is merged into the assistant message with tool calls right before it.
    """
    if len(messages) < 2:
        return messages
    out: list[Message] = []
    for message in messages:
        previous = out[-1] if out else None
        if (
            isinstance(message, AssistantMessage)
            and message.tool_calls
            and not message.content
            and isinstance(previous, AssistantMessage)
            and previous.tool_calls
        ):
            calls = (*previous.tool_calls, *message.tool_calls)
            out[-1] = previous.model_copy(update={"tool_calls": calls})
        else:
            out.append(message)
    return messages if len(out) == len(messages) else tuple(out)


@dataclass(slots=True)
class _Slot:
    message: Message
    span_ids: list[str] = field(default_factory=list)
    key: MessageKey = ()
    absorbed: Message | None = None
    """The last other sighting merged without effect (frozen, so merging it again is a no-op)."""
    from_tool_span: bool = False
    """A tool result read from a tool span, not yet replayed by an LLM input."""
    pos: int = -1
    """The slot's index in the transcript (valid while the transcript's positions are)."""

    def __post_init__(self) -> None:
        if not self.key:
            self.key = message_key(self.message)

    def replace(self, message: Message) -> None:
        self.message, self.key, self.absorbed = message, message_key(message), None

    def seen_on(self, span_id: str) -> bool:
        """Whether ``span_id`` was already recorded on this message.

        Spans are added one at a time and each adds all its sightings before the next, so only
        the last recorded span id can match (constant time, however long the list).
        """
        return bool(self.span_ids) and self.span_ids[-1] == span_id

    def link(self, message: Message, span_id: str | None, *, replay: bool = False) -> None:
        """Record another sighting: add the span id, fill what this message lacked.

        ``replay``: the sighting is an LLM input. A tool result first read from a tool span then
        takes the replay's content, the text the model was actually sent (tool spans often
        record a serialized wrapper object instead).
        """
        if span_id and not self.seen_on(span_id):
            self.span_ids.append(span_id)
        if replay and self.from_tool_span and isinstance(message, ToolMessage):
            self.from_tool_span = False
            if message.content and message.content != self.message.content:
                self.replace(self.message.model_copy(update={"content": message.content}))
        if message is self.message or message is self.absorbed:  # replays share cached objects
            return
        merged = merge_sightings(self.message, message)
        if merged is not self.message:
            self.replace(merged)
        else:
            self.absorbed = message


_POSITION = attrgetter("pos")
_SPAN_IDS = attrgetter("span_ids")


def _unlist(index: dict[Any, list[_Slot]], key: Any, slot: _Slot) -> None:
    """Remove ``slot`` (by identity) from ``index[key]``, dropping the key when emptied."""
    same = index[key]
    del same[next(i for i, s in enumerate(same) if s is slot)]
    if not same:
        del index[key]


def _is_call_turn(message: Message) -> bool:
    """An assistant message with tool calls (what ``coalesce_tool_calls`` merges into)."""
    return isinstance(message, AssistantMessage) and bool(message.tool_calls)


def _extends_call_turn(message: Message) -> bool:
    """Whether ``coalesce_tool_calls`` would merge ``message`` into a call turn before it."""
    return _is_call_turn(message) and not message.content


@dataclass(slots=True)
class _Run:
    """Messages of a history that each only added a span id to the slot they matched.

    Per message: the slot, ``reach`` (the highest slot position read so far: the run is valid
    while no slot before it changed) and the cursor after it.
    """

    messages: list[Message] = field(default_factory=list)
    slots: list[_Slot] = field(default_factory=list)
    reach: list[int] = field(default_factory=list)
    cursors: list[int] = field(default_factory=list)
    again: list[bool | None] = field(default_factory=list)
    """Whether the slot is already earlier in the run (``None``: not known)."""

    def add(
        self, message: Message, slot: _Slot, position: int, cursor: int, again: bool | None
    ) -> None:
        self.messages.append(message)
        self.slots.append(slot)
        self.reach.append(max(position, cursor - 1, self.reach[-1] if self.reach else 0))
        self.cursors.append(cursor)
        self.again.append(again)

    def cut(self, n: int) -> None:
        for values in (self.messages, self.slots, self.reach, self.cursors, self.again):
            del values[n:]

    def distinct(self) -> bool:
        """Whether every slot of the run is known to appear in it once."""
        again = self.again
        return again.count(False) == len(again)


class Transcript:
    """A growing, deduplicated list of messages with the span ids each came from."""

    def __init__(self) -> None:
        self._slots: list[_Slot] = []
        self.notes: list[str] = []
        self._calls: dict[tuple[tuple[MessageKey, ...], ...], list[_Slot]] = {}
        self._keys: dict[int, tuple[Message, MessageKey]] = {}
        self.inputs_end = 0
        """Transcript length after the last new call's input (where its context is complete)."""
        self._guesses: dict[str, str] = {}
        """Notes on tool results paired to a call by order, by call id, until a replay confirms."""
        self._by_key: dict[MessageKey, list[_Slot]] = {}
        """Slots per message key (any order), so a lookup away from the cursor is not a scan."""
        self._positions_valid = True
        """Whether every slot's ``pos`` is its index (an insert shifts them; renumbered lazily)."""
        self._span_ids: set[str] = set()
        """Span ids of the calls and tool runs added so far."""
        self._touched: list[_Slot] = []
        """Slots the call being added recorded its span id on, each once."""
        self._call_slots: dict[str, list[_Slot]] = {}
        """Assistant slots per tool call id they hold (any order)."""
        self._run = _Run()
        """The last call's run of sightings (see :meth:`_replay_run`)."""
        self._stable = 0
        """Slots before this position are unchanged since the run was recorded (inserts,
        replaced messages, other absorbed sightings and tool-span flags lower it)."""
        self._changes = 0
        self._fresh = False
        """Whether no slot held the span id of the call being added when it started."""
        """How many slot changes :meth:`_changed` saw (a link that changed nothing adds none)."""
        self._last_input: tuple[
            tuple[Message, ...], tuple[Message, ...], tuple[MessageKey, ...]
        ] = ((), (), ())
        """The last call's input as given, coalesced, and its keys (see ``_prepared``)."""
        self._replayed: list[_Slot] = []
        """Tool results read from tool spans that the input being added replays, in its order."""

    def __len__(self) -> int:
        return len(self._slots)

    @property
    def slots(self) -> list[_Slot]:
        """The transcript's slots (message and span ids), in order; read-only use."""
        return self._slots

    def messages(self) -> list[Message]:
        """The messages so far, ``span_ids`` filled (first sighting first)."""
        return [s.message.model_copy(update={"span_ids": tuple(s.span_ids)}) for s in self._slots]

    def add_call(
        self,
        inputs: tuple[Message, ...],
        outputs: tuple[Message, ...],
        span_id: str,
        *,
        agent_name: str | None = None,
        model: str | None = None,
    ) -> bool:
        """Add one LLM call: the new part of its input, then its output.

        Returns:
            ``False`` when the very same call (same input and output messages) was added before,
            e.g. recorded by two instrumentations on sibling spans; its messages then only gain
            the span id.

        """
        outputs = tuple(with_speaker(m, agent_name, model) for m in outputs)
        inputs, input_keys = self._prepared(inputs)
        signature = (input_keys, tuple(map(self._key, outputs)))
        seen = self._calls.get(signature)
        repeated = span_id in self._span_ids
        self._span_ids.add(span_id)
        self._fresh = not repeated
        if seen is not None:
            for slot, message in zip(seen, (*inputs, *outputs), strict=False):
                self._link_slot(slot, message, span_id)
            return False
        self._touched = []
        after, appended = self._add_inputs(inputs, input_keys, span_id)
        self.inputs_end = len(self._slots)
        for message in outputs:
            found = None if appended else self._find(self._key(message), after)
            if found is None:
                self._append(message, span_id)
            else:
                self._link(found, message, span_id)
                after = found + 1
        self._calls[signature] = self._seen_on(span_id, repeated)
        self._touched = []
        return True

    def _prepared(
        self, raw: tuple[Message, ...]
    ) -> tuple[tuple[Message, ...], tuple[MessageKey, ...]]:
        """The input with tool calls coalesced, and its message keys.

        Each call usually replays the previous call's input (the same message objects, shared
        by the history cache) plus a tail: that prefix is not coalesced or keyed again. Reusing
        it is exact: an equal prefix coalesces to the same messages, and ``coalesce_tool_calls``
        never merges across its last message unless the tail starts with a call-only assistant
        message, in which case the whole input is done again.
        """
        last_raw, last_inputs, last_keys = self._last_input
        k = len(last_raw)
        if (
            k
            and len(raw) > k
            and raw[k - 1] is last_raw[k - 1]
            and raw[:k] == last_raw
            and not (_extends_call_turn(raw[k]) and _is_call_turn(last_inputs[-1]))
        ):
            tail = coalesce_tool_calls(raw[k:])
            inputs = (*last_inputs, *tail)
            keys = (*last_keys, *map(self._key, tail))
        else:
            inputs = coalesce_tool_calls(raw)
            keys = tuple(map(self._key, inputs))
        self._last_input = (raw, inputs, keys)
        return inputs, keys

    def _seen_on(self, span_id: str, repeated: bool) -> list[_Slot]:
        """The slots whose last sighting is ``span_id``, in transcript order.

        Those are the slots the call just recorded its span id on (``_touched``, each once),
        unless the span id was used before (the same span id in two traces of one
        conversation) or is empty: then every slot is checked.
        """
        if repeated or not span_id:
            return [slot for slot in self._slots if slot.seen_on(span_id)]
        self._renumber()
        return sorted(self._touched, key=_POSITION)

    def _add_inputs(
        self, inputs: tuple[Message, ...], keys: tuple[MessageKey, ...], span_id: str
    ) -> tuple[int, bool]:
        """Align the input with the transcript; returns (position after it, whether it grew)."""
        last = len(inputs) - 1
        while last >= 0 and not isinstance(inputs[last], AssistantMessage):
            last -= 1
        size = len(self._slots)
        instructions: list[Message] = []
        if last >= 0:
            cursor = self._add_history(inputs[: last + 1], keys, span_id, instructions)
        else:
            cursor = self._last_assistant() + 1
        for message, key in zip(inputs[last + 1 :], keys[last + 1 :], strict=True):
            start = 0 if _anywhere(message) else cursor
            found = self._find(key, start)
            if found is None:
                found = self._combined_results(message, cursor)
            if found is None:
                self._append(message, span_id)
                cursor = len(self._slots)
            else:
                self._link(found, message, span_id, replay=True)
                cursor = max(cursor, found + 1)
        self._follow_replayed_order()
        for message in instructions:  # an agent's own, never seen: where it first speaks
            self._insert(cursor, message, span_id)
            cursor += 1
        return cursor, len(self._slots) > size

    def _add_history(
        self,
        history: tuple[Message, ...],
        keys: tuple[MessageKey, ...],
        span_id: str,
        instructions: list[Message],
    ) -> int:
        """Match replayed history in order; insert what was never seen before its successor.

        System messages never seen that no later new message follows (an agent's own
        instructions, e.g. the agent a handoff moved to) are left in ``instructions`` for the
        caller, which places them after the input's new turn: where that agent first speaks.
        The start that replays the last call's run is done in one pass (:meth:`_replay_run`);
        matching resumes after it, and the run is extended while each message only adds its
        span id to the slot it matched.
        """
        slots, by_key, touched = self._slots, self._by_key, self._touched
        run = self._run
        start = self._replay_run(history, span_id)
        cursor = run.cursors[start - 1] if start else 0
        self._stable = sys.maxsize
        recording, fresh = True, self._fresh and bool(span_id)
        pending: list[Message] = []
        for i in range(start, len(history)):
            message, key = history[i], keys[i]
            if cursor < len(slots):
                # Fast path, the same effect as the general one below: the message replays, in
                # order, the very object the slot at the cursor holds or absorbed, and nothing
                # earlier has its key (or it is matched only after the cursor anyway). The key
                # starts with the role (``message_key``); a tool result may be matched from the
                # start (``_anywhere``), which finds the cursor when its key is unique.
                slot = slots[cursor]
                if (
                    (message is slot.message or message is slot.absorbed)
                    and slot.key == key
                    and not slot.from_tool_span
                    and key[0] != "system"
                    and (key[0] != "tool" or len(by_key[key]) == 1)
                ):
                    ids = slot.span_ids
                    again = not (span_id and (not ids or ids[-1] != span_id))
                    if not again:
                        ids.append(span_id)
                        touched.append(slot)
                    cursor += 1
                    if recording:
                        run.add(message, slot, cursor - 1, cursor, again if fresh else None)
                    continue
            sightings = len(touched)
            cursor, found = self._match(history, i, key, span_id, cursor=cursor, pending=pending)
            if recording and found is not None:
                again = len(touched) == sightings
                run.add(message, slots[found], found, cursor, again if fresh else None)
            else:
                recording = False
        instructions.extend(pending)
        return cursor

    def _match(
        self,
        history: tuple[Message, ...],
        i: int,
        key: MessageKey,
        span_id: str,
        *,
        cursor: int,
        pending: list[Message],
    ) -> tuple[int, int | None]:
        """Match ``history[i]`` (the general path of :meth:`_add_history`).

        Returns:
            The cursor after it, and the position of the slot it matched when that only added
            the span id (``None`` when it changed, inserted or deferred anything).

        """
        message = history[i]
        changes = self._changes
        if isinstance(message, SystemMessage):
            found = self._find(key, 0)
            if found is None:
                pending.append(message)
                return cursor, None
            self._link(found, message, span_id)
            return cursor, found if self._changes == changes else None
        found = self._find(key, 0 if _anywhere(message) else cursor)
        if found is not None:
            self._link(found, message, span_id, replay=True)
            return max(cursor, found + 1), found if self._changes == changes else None
        found = self._combined_results(message, cursor)
        if found is not None:
            self._link(found, message, span_id, replay=True)
            return max(cursor, found + 1), None
        at = self._next_match(history[i + 1 :], cursor)
        for extra in [*pending, message]:
            self._insert(at, extra, span_id)
            at += 1
        pending.clear()
        return at, None

    def _replay_run(self, history: tuple[Message, ...], span_id: str) -> int:
        """How much of ``history`` replays the last run; that part's sightings are recorded.

        The run (:class:`_Run`) is the start of the last history in which every message only
        added its span id to the slot it matched. When this history starts with the same
        message objects and none of the slots that matching read changed since (``_stable``:
        no insert before them, no other message, absorbed sighting, key or tool-span flag), each
        would match the same slot again with the same effect: the span id on each slot, applied
        here in one pass. The run is cut to what was replayed.
        """
        run = self._run
        n = min(len(run.messages), len(history), bisect_left(run.reach, self._stable))
        if not (n and history[n - 1] is run.messages[n - 1]):
            n = 0
        elif not all(map(is_, history[:n], run.messages)):
            n = next(i for i in range(n) if history[i] is not run.messages[i])
        run.cut(n)
        if not span_id:
            return n
        touched = self._touched
        if self._fresh and run.distinct():  # no slot holds the span id yet: append to each
            deque(map(list.append, map(_SPAN_IDS, run.slots), repeat(span_id)), maxlen=0)
            touched.extend(run.slots)
            return n
        for slot in run.slots:
            ids = slot.span_ids
            if not ids or ids[-1] != span_id:
                ids.append(span_id)
                touched.append(slot)
        return n

    def _changed(self, position: int) -> None:
        """The slot at ``position`` (or an earlier estimate of it) changed."""
        self._changes += 1
        self._stable = min(self._stable, position)

    def _combined_results(self, message: Message, cursor: int) -> int | None:
        """Where an id-less tool result replays, in one text, the results of parallel calls.

        smolagents replays the results of one step's calls as a single observation without a
        call id. When the assistant turn before ``cursor`` has several calls with ids and every
        one already has its result (from the tool spans), that message is their replay: the
        position of the last of those results is returned (and their pairing is confirmed);
        ``None`` otherwise.
        """
        if not isinstance(message, ToolMessage) or message.tool_call_id is not None:
            return None
        turn = next((i for i in range(min(cursor, len(self._slots)) - 1, -1, -1)
                     if isinstance(self._slots[i].message, AssistantMessage)), None)  # fmt: skip
        if turn is None:
            return None
        calls = self._slots[turn].message.tool_calls or ()  # type: ignore[union-attr]
        ids = [c.id for c in calls]
        if len(ids) < 2 or not all(ids):
            return None
        found = [self._find(tool_result_key(i), turn + 1) for i in ids if i is not None]
        if any(f is None for f in found):
            return None
        for call_id, at in zip(ids, found, strict=True):
            self._confirm(call_id)
            if at is not None:  # confirmed; each keeps its own text, not the combined one
                self._slots[at].from_tool_span = False
                self._changed(at)
        return max(f for f in found if f is not None)

    def _next_match(self, rest: tuple[Message, ...], cursor: int) -> int:
        for message in rest:
            found = self._find(self._key(message), cursor)
            if found is not None:
                return found
        return len(self._slots)

    def _last_assistant(self) -> int:
        for i in range(len(self._slots) - 1, -1, -1):
            if isinstance(self._slots[i].message, AssistantMessage):
                return i
        return -1

    def _key(self, message: Message) -> MessageKey:
        """``message_key``, memoised per message object (replays share cached messages)."""
        memo = self._keys.get(id(message))
        if memo is None or memo[0] is not message:
            memo = self._keys[id(message)] = (message, message_key(message))
        return memo[1]

    def _find(self, key: MessageKey, start: int) -> int | None:
        """The first position at or after ``start`` whose slot has ``key``, else ``None``."""
        slots = self._slots
        if start < len(slots) and slots[start].key == key:
            return start  # a replay in order: the common case
        candidates = self._by_key.get(key)
        if not candidates:
            return None
        self._renumber()
        found = [slot.pos for slot in candidates if slot.pos >= start]
        return min(found) if found else None

    def _renumber(self) -> None:
        if not self._positions_valid:
            for i, slot in enumerate(self._slots):
                slot.pos = i
            self._positions_valid = True

    def _index(self, slot: _Slot) -> None:
        self._by_key.setdefault(slot.key, []).append(slot)
        message = slot.message
        if isinstance(message, AssistantMessage) and message.tool_calls:
            for call_id in {c.id for c in message.tool_calls if c.id is not None}:
                self._call_slots.setdefault(call_id, []).append(slot)

    def _reindex(self, slot: _Slot, old: MessageKey, old_message: Message) -> None:
        """Move ``slot`` (which held ``old_message``, keyed ``old``) to its new entries."""
        _unlist(self._by_key, old, slot)
        if isinstance(old_message, AssistantMessage) and old_message.tool_calls:
            for call_id in {c.id for c in old_message.tool_calls if c.id is not None}:
                _unlist(self._call_slots, call_id, slot)
        self._index(slot)

    def _append(self, message: Message, span_id: str | None) -> None:
        ids = [span_id] if span_id else []
        slot = _Slot(message, ids, self._key(message), pos=len(self._slots))
        self._slots.append(slot)
        self._index(slot)
        if span_id:
            self._touched.append(slot)

    def _insert(self, at: int, message: Message, span_id: str) -> None:
        slot = _Slot(message, [span_id], self._key(message))
        self._slots.insert(at, slot)
        self._positions_valid = False
        self._changed(at)
        self._index(slot)
        self._touched.append(slot)

    def _replace(self, slot: _Slot, message: Message) -> None:
        old, old_message = slot.key, slot.message
        slot.replace(message)
        self._reindex(slot, old, old_message)
        self._changed(slot.pos)

    def _link_slot(
        self, slot: _Slot, message: Message, span_id: str | None, *, replay: bool = False
    ) -> None:
        old, old_message, sightings = slot.key, slot.message, len(slot.span_ids)
        absorbed, from_tool_span = slot.absorbed, slot.from_tool_span
        slot.link(message, span_id, replay=replay)
        if slot.key is not old:  # the message was replaced (its key is always computed anew)
            self._reindex(slot, old, old_message)
        if (
            slot.message is not old_message
            or slot.absorbed is not absorbed
            or slot.from_tool_span != from_tool_span
        ):
            self._changed(slot.pos)
        if len(slot.span_ids) > sightings:
            self._touched.append(slot)

    def _link(
        self, index: int, message: Message, span_id: str | None, *, replay: bool = False
    ) -> None:
        slot = self._slots[index]
        if replay and slot.from_tool_span and isinstance(message, ToolMessage):
            self._confirm(message.tool_call_id)
            self._replayed.append(slot)
        self._link_slot(slot, message, span_id, replay=replay)

    def _follow_replayed_order(self) -> None:
        """Put tool results the input replays for the first time in the input's order.

        Results read from tool spans sit in the order the tools ran (parallel calls finish in any
        order); the first LLM input that replays them shows the order the model was sent them.
        Each block of such results that are adjacent in the transcript is reordered in place, as
        that input has them; nothing else moves.
        """
        replayed, self._replayed = self._replayed, []
        if len(replayed) < 2:
            return
        self._renumber()
        order = {id(slot): n for n, slot in enumerate(replayed)}
        positions = sorted(slot.pos for slot in replayed)
        first = 0
        for n in range(1, len(positions) + 1):
            if n < len(positions) and positions[n] == positions[n - 1] + 1:
                continue
            start, stop = positions[first], positions[n - 1] + 1
            first = n
            block = self._slots[start:stop]
            wanted = sorted(block, key=lambda slot: order[id(slot)])
            if all(map(is_, block, wanted)):
                continue
            self._slots[start:stop] = wanted
            for pos, slot in enumerate(wanted, start):
                slot.pos = pos
            self._changed(start)

    def _confirm(self, call_id: str | None) -> None:
        """An LLM input replayed the result of ``call_id``: its pairing is no longer a guess."""
        note = self._guesses.pop(call_id, None) if call_id is not None else None
        if note is not None and note in self.notes:
            self.notes.remove(note)

    # Tool runs recorded on their own spans -------------------------------------------------

    def add_tool_run(self, tool: ToolExecution, span_id: str, agent_name: str | None) -> ToolCall:
        """Add a tool run: its call (when no assistant message requested it) and its result.

        Returns the call the run was paired to (by call id, else by name), whose ``id`` names the
        run's call when the run's span did not record one.
        """
        self._span_ids.add(span_id)
        self._touched = []
        located = self._find_call(tool)
        if located is None:
            call = ToolCall(
                id=tool.call_id,
                name=tool.name or "",
                arguments=tool.arguments,
                raw_arguments=tool.raw_arguments,
            )
            self._append(AssistantMessage(tool_calls=(call,), agent_name=agent_name), span_id)
            self.notes.append(
                f"tool call {call.name!r} taken from tool span {span_id} "
                "(no recorded LLM output requested it)"
            )
        else:
            self._fill_arguments(*located, tool)
            call = self._call_at(*located)
        if tool.result is None:
            return call
        call_id = tool.call_id or call.id
        if call_id is not None and (found := self._find(tool_result_key(call_id), 0)) is not None:
            self._link(
                found, ToolMessage(content=tool.result, tool_name=call.name or None), span_id
            )
            return call
        if tool.call_id is None and call.id is not None:
            note = f"tool span {span_id} ({call.name}) paired to call {call.id} by order"
            self.notes.append(note)
            self._guesses[call.id] = note
        self._append(
            ToolMessage(
                content=tool.result, tool_call_id=call_id, tool_name=tool.name or call.name or None
            ),
            span_id,
        )
        self._slots[-1].from_tool_span = True
        self._changed(len(self._slots) - 1)
        return call

    def _find_call(self, tool: ToolExecution) -> tuple[int, int] | None:
        """The call a tool run answers, by call id, else by name.

        Without a call id: the earliest unanswered call of that name, preferring one with the
        same arguments (parallel calls of one tool).
        """
        if tool.call_id is not None:
            holders = self._call_slots.get(tool.call_id)
            if not holders:
                return None
            self._renumber()
            slot = min(holders, key=_POSITION)
            message = slot.message
            assert isinstance(message, AssistantMessage) and message.tool_calls  # indexed so
            return slot.pos, next(
                j for j, c in enumerate(message.tool_calls) if c.id == tool.call_id
            )
        answered: set[str | None] | None = None  # only needed to pair by name
        by_name: tuple[int, int] | None = None
        for i, slot in enumerate(self._slots):
            message = slot.message
            if not isinstance(message, AssistantMessage) or not message.tool_calls:
                continue
            for j, call in enumerate(message.tool_calls):
                if tool.call_id is not None and call.id == tool.call_id:
                    return i, j
                if tool.call_id is None and call.name == tool.name:
                    if answered is None:
                        answered = self._answered()
                    if call.id is not None and call.id in answered:
                        continue
                    if tool.arguments is not None and call.arguments == tool.arguments:
                        return i, j
                    by_name = by_name or (i, j)
        return by_name

    def _answered(self) -> set[str | None]:
        return {s.message.tool_call_id for s in self._slots if isinstance(s.message, ToolMessage)}

    def _call_at(self, index: int, call_index: int) -> ToolCall:
        message = self._slots[index].message
        assert isinstance(message, AssistantMessage) and message.tool_calls
        return message.tool_calls[call_index]

    def _fill_arguments(self, index: int, call_index: int, tool: ToolExecution) -> None:
        call = self._call_at(index, call_index)
        if call.arguments is not None or call.raw_arguments is not None:
            return
        if tool.arguments is None and tool.raw_arguments is None:
            return
        message = self._slots[index].message
        assert isinstance(message, AssistantMessage) and message.tool_calls
        calls = list(message.tool_calls)
        calls[call_index] = call.model_copy(
            update={"arguments": tool.arguments, "raw_arguments": tool.raw_arguments}
        )
        self._replace(self._slots[index], message.model_copy(update={"tool_calls": tuple(calls)}))
