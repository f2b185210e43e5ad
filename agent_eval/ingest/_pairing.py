"""Pair tool results with the tool calls they answer.

By call id first (``ToolMessage.tool_call_id == ToolCall.id``), filling the tool name on the
result from its call. A result without a call id is paired by order with the earliest preceding
call that is still unanswered (same tool name preferred); it takes that call's id when the call
has one, and the pairing is recorded in the returned notes, since it is a guess.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_eval._trace import AssistantMessage, Message, ToolCall, ToolMessage

__all__ = ["pair_tool_results"]


def pair_tool_results(messages: Sequence[Message]) -> tuple[list[Message], list[str]]:
    """Return the messages with tool results paired to their calls, and notes on guesses."""
    out: list[Message] = []
    notes: list[str] = []
    open_calls: list[ToolCall] = []
    by_id: dict[str, ToolCall] = {}
    for message in messages:
        if isinstance(message, AssistantMessage) and message.tool_calls:
            open_calls.extend(message.tool_calls)
            by_id.update({c.id: c for c in message.tool_calls if c.id})
            out.append(message)
        elif isinstance(message, ToolMessage):
            out.append(_pair(message, open_calls, by_id, len(out), notes))
        else:
            out.append(message)
    return out, notes


def _pair(
    message: ToolMessage,
    open_calls: list[ToolCall],
    by_id: dict[str, ToolCall],
    position: int,
    notes: list[str],
) -> ToolMessage:
    if message.tool_call_id is not None:
        call = by_id.get(message.tool_call_id)
        if call is not None:
            _remove(open_calls, call)
            if message.tool_name is None:
                return message.model_copy(update={"tool_name": call.name})
        return message
    call = _earliest_open(open_calls, message.tool_name)
    if call is None:
        notes.append(f"tool result at message {position} has no call id and no open call to answer")
        return message
    _remove(open_calls, call)
    notes.append(
        f"tool result at message {position} paired by order with call {call.name!r}"
        + (f" ({call.id})" if call.id else " (neither has a call id)")
    )
    return message.model_copy(
        update={"tool_call_id": call.id, "tool_name": message.tool_name or call.name}
    )


def _earliest_open(open_calls: list[ToolCall], name: str | None) -> ToolCall | None:
    if name is not None:
        named = next((c for c in open_calls if c.name == name), None)
        if named is not None:
            return named
    return open_calls[0] if open_calls else None


def _remove(open_calls: list[ToolCall], call: ToolCall) -> None:
    for i, candidate in enumerate(open_calls):
        if candidate is call:
            del open_calls[i]
            return
