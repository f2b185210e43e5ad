"""One deduplicated transcript from the LLM calls and tool runs of a conversation.

Each LLM call usually replays the whole history in its input. :meth:`Transcript.add_call` aligns
the call's input with the transcript so far and appends only what is new, then the call's
output. Two input shapes are recognised:

- the **history**, up to the input's last assistant message, is matched in order against the
  transcript (a cursor moves forward, so a replayed sub-history of one agent among others, or a
  truncated window, aligns too); a message never seen is inserted before the next matched one;
  system messages match anywhere (a sub-agent's own instructions appear once, where that agent
  first speaks), and so do tool results with a call id (parallel results replayed in another
  order than they ran are each kept once);
- the **new turn** after it (user message, tool results) is matched only after the position of
  that assistant message, so a repeated "yes" is a new message. An input without any assistant
  message (first call, or a **stateful server** such as the Responses API with
  ``previous_response_id``, whose input holds only the new messages) is matched only against the
  messages added since the transcript's last assistant message.

Messages are compared by :func:`~agent_eval.ingest.message_identity.message_key`. Every
sighting adds the span id to the message. Tool runs recorded on their own spans
(:meth:`Transcript.add_tool_run`) supply the tool result when the next LLM input lacks it.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_eval.ingest.extraction import ToolExecution
from agent_eval.ingest.message_identity import (
    MessageKey,
    merge_sightings,
    message_key,
    tool_result_key,
    with_speaker,
)
from agent_eval.trace import AssistantMessage, Message, SystemMessage, ToolCall, ToolMessage

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
        inputs = coalesce_tool_calls(inputs)
        input_keys = tuple(map(self._key, inputs))
        signature = (input_keys, tuple(map(self._key, outputs)))
        seen = self._calls.get(signature)
        if seen is not None:
            for slot, message in zip(seen, (*inputs, *outputs), strict=False):
                slot.link(message, span_id)
            return False
        after, appended = self._add_inputs(inputs, input_keys, span_id)
        self.inputs_end = len(self._slots)
        for message in outputs:
            found = None if appended else self._find(self._key(message), after)
            if found is None:
                self._append(message, span_id)
            else:
                self._link(found, message, span_id)
                after = found + 1
        self._calls[signature] = [slot for slot in self._slots if slot.seen_on(span_id)]
        return True

    def _add_inputs(
        self, inputs: tuple[Message, ...], keys: tuple[MessageKey, ...], span_id: str
    ) -> tuple[int, bool]:
        """Align the input with the transcript; returns (position after it, whether it grew)."""
        last = max((i for i, m in enumerate(inputs) if isinstance(m, AssistantMessage)), default=-1)
        size = len(self._slots)
        if last >= 0:
            cursor = self._add_history(inputs[: last + 1], keys, span_id)
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
        return cursor, len(self._slots) > size

    def _add_history(
        self, history: tuple[Message, ...], keys: tuple[MessageKey, ...], span_id: str
    ) -> int:
        """Match replayed history in order; insert what was never seen before its successor."""
        cursor = 0
        pending: list[Message] = []
        for i, message in enumerate(history):
            key = keys[i]
            if isinstance(message, SystemMessage):
                found = self._find(key, 0)
                if found is None:
                    pending.append(message)
                else:
                    self._link(found, message, span_id)
                continue
            found = self._find(key, 0 if _anywhere(message) else cursor)
            if found is None:
                found = self._combined_results(message, cursor)
            if found is not None:
                self._link(found, message, span_id, replay=True)
                cursor = max(cursor, found + 1)
                continue
            at = self._next_match(history[i + 1 :], cursor)
            for extra in [*pending, message]:
                self._insert(at, extra, span_id)
                at += 1
            pending, cursor = [], at
        for extra in pending:
            self._insert(cursor, extra, span_id)
            cursor += 1
        return cursor

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
        slots = self._slots
        if start < len(slots) and slots[start].key == key:
            return start  # a replay in order: the common case
        for i in range(start + 1, len(slots)):
            if slots[i].key == key:
                return i
        return None

    def _append(self, message: Message, span_id: str | None) -> None:
        self._slots.append(_Slot(message, [span_id] if span_id else [], self._key(message)))

    def _insert(self, at: int, message: Message, span_id: str) -> None:
        self._slots.insert(at, _Slot(message, [span_id], self._key(message)))

    def _link(
        self, index: int, message: Message, span_id: str | None, *, replay: bool = False
    ) -> None:
        slot = self._slots[index]
        if replay and slot.from_tool_span and isinstance(message, ToolMessage):
            self._confirm(message.tool_call_id)
        slot.link(message, span_id, replay=replay)

    def _confirm(self, call_id: str | None) -> None:
        """An LLM input replayed the result of ``call_id``: its pairing is no longer a guess."""
        note = self._guesses.pop(call_id, None) if call_id is not None else None
        if note is not None and note in self.notes:
            self.notes.remove(note)

    # Tool runs recorded on their own spans -------------------------------------------------

    def add_tool_run(self, tool: ToolExecution, span_id: str, agent_name: str | None) -> None:
        """Add a tool run: its call (when no assistant message requested it) and its result."""
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
            return
        call_id = tool.call_id or call.id
        if call_id is not None and (found := self._find(tool_result_key(call_id), 0)) is not None:
            self._link(
                found, ToolMessage(content=tool.result, tool_name=call.name or None), span_id
            )
            return
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

    def _find_call(self, tool: ToolExecution) -> tuple[int, int] | None:
        """The call a tool run answers, by call id, else by name.

        Without a call id: the earliest unanswered call of that name, preferring one with the
        same arguments (parallel calls of one tool).
        """
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
        self._slots[index].replace(message.model_copy(update={"tool_calls": tuple(calls)}))
