"""The agent's tool calls in a conversation, with their results, and the judge-free base class.

:func:`agent_calls` lists every tool call the assistant made, in conversation order, each with
the tool message that answered it (paired by call id, the earliest unanswered call of that id
when a recording reuses one; else the earliest unanswered call of that tool) and whether that
result was an error (:func:`error_of`). :class:`JudgeFreeMetric` is the base of the trajectory
metrics: no judge, no formatter, no prompt, one unit per conversation.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

from agent_eval._trace import AgentTrace, AssistantMessage, SpanErrorInfo, ToolCall, ToolMessage
from agent_eval.metrics._base import JudgeFreeMetric

__all__ = ["AgentCall", "JudgeFreeMetric", "agent_calls", "error_of"]

_ERROR_TEXT = 200


@dataclass(frozen=True, slots=True)
class AgentCall:
    """One tool call the agent made.

    Attributes:
        index: 0-based position among the conversation's tool calls.
        call: The call (name, arguments, id).
        message_index: Index in ``AgentTrace.messages`` of the assistant message that made it.
        result: The tool message that answered it, or ``None`` when none was recorded.

    """

    index: int
    call: ToolCall
    message_index: int
    result: ToolMessage | None


def agent_calls(trace: AgentTrace) -> list[AgentCall]:
    """Every tool call of the assistant messages of ``trace``, in order, with its result."""
    calls: list[AgentCall] = []
    open_calls: list[int] = []  # indices of calls still waiting for a result
    results: dict[int, ToolMessage] = {}
    by_id: dict[str, list[int]] = {}  # a recording may reuse an id (tau-bench does)
    for position, message in enumerate(trace.messages):
        if isinstance(message, AssistantMessage):
            for call in message.tool_calls or ():
                index = len(calls)
                calls.append(AgentCall(index, call, position, None))
                open_calls.append(index)
                if call.id is not None:
                    by_id.setdefault(call.id, []).append(index)
        elif isinstance(message, ToolMessage):
            answered = _answered(message, calls, open_calls, by_id)
            if answered is not None:
                results[answered] = message
                open_calls.remove(answered)
    return [
        AgentCall(c.index, c.call, c.message_index, results[c.index]) if c.index in results else c
        for c in calls
    ]


def _answered(
    message: ToolMessage,
    calls: list[AgentCall],
    open_calls: list[int],
    by_id: Mapping[str, list[int]],
) -> int | None:
    """The open call ``message`` answers: the first open one with its id, else by tool name."""
    if message.tool_call_id is not None and message.tool_call_id in by_id:
        return next((i for i in by_id[message.tool_call_id] if i in open_calls), None)
    for index in open_calls:  # no id: the first open call of that tool (or of any tool)
        if message.tool_name in (None, calls[index].call.name):
            return index
    return None


def error_of(call: AgentCall, errors: tuple[SpanErrorInfo, ...]) -> str | None:
    """Why ``call``'s result is an error, or ``None`` when nothing says it is.

    Sources, in order: the result's ``is_error`` flag; a span error recorded on the tool span
    that ran this call (matched by call id, or, without one, by tool name on a span the result
    was read from); OTel span status ``ERROR`` and ``exception`` events both count.
    """
    result = call.result
    if result is not None and result.is_error:
        return f"the tool result is flagged as an error: {_cut(result.content)}"
    span_ids = set(result.span_ids) if result is not None else set()
    for error in errors:
        if error.tool_call_id is not None:
            if error.tool_call_id != call.call.id:
                continue
        elif error.tool_name != call.call.name or error.span_id not in span_ids:
            continue
        kind = f"{error.error_type}: " if error.error_type else ""
        return f"span {error.span_id} ({error.span_name}) recorded an error: {kind}{error.message}"
    return None


def _cut(text: str) -> str:
    text = " ".join(text.split())
    return text if len(text) <= _ERROR_TEXT else text[: _ERROR_TEXT - 1] + "…"
