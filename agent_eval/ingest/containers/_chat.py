"""OpenAI-style chat messages -> AgentTrace, shared by the chat-log containers (private).

The OpenAI chat shape (``role``, ``content``, assistant ``tool_calls`` with ``function.name`` /
``function.arguments``, tool ``tool_call_id``) is read with
:func:`agent_eval.ingest.conventions._messages.message_from_mapping`; on top of it this module
fills what chat logs leave implicit: a tool result's tool name from the call it answers, the
``name`` of an assistant message as its agent name, ``reasoning`` text, a tool result's
``is_error`` flag (or tau2-bench's ``error``), and tool calls made by a (simulated) user,
kept as opaque ``tool_call`` parts because only assistants carry tool calls in
:class:`~agent_eval._trace.AgentTrace`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from pydantic import JsonValue

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ModelUsage,
    OpaquePart,
    SourceInfo,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest.conventions._messages import message_from_mapping, to_json_value

__all__ = ["chat_messages", "chat_trace", "success_labels"]


def chat_messages(raw: Any) -> tuple[Message, ...]:
    """Our messages for a list of OpenAI-style message objects.

    Raises:
        ValueError: ``raw`` is not a list, or a message is not an object or has an unknown role
            (the message names its index).

    """
    if not isinstance(raw, list):
        raise ValueError(f"messages must be a list, got {type(raw).__name__}")
    tool_names: dict[str, str] = {}
    messages: list[Message] = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping):
            raise ValueError(f"messages[{index}] is not an object: {brief(item)}")
        try:
            message = _enrich(message_from_mapping(item), item)
        except ValueError as exc:
            raise ValueError(f"messages[{index}]: {exc}") from None
        messages.append(_name_tool_result(message, tool_names))
    return tuple(messages)


def _enrich(message: Message, item: Mapping[str, Any]) -> Message:
    if isinstance(message, AssistantMessage):
        update: dict[str, Any] = {}
        if isinstance(item.get("name"), str) and item["name"]:
            update["agent_name"] = item["name"]
        if isinstance(item.get("reasoning"), str) and item["reasoning"]:
            update["reasoning"] = item["reasoning"]
        return message.model_copy(update=update) if update else message
    if isinstance(message, ToolMessage):
        flag = item.get("is_error", item.get("error"))  # Anthropic/MCP-style, tau2-bench
        return message.model_copy(update={"is_error": flag}) if isinstance(flag, bool) else message
    if isinstance(message, UserMessage) and isinstance(item.get("tool_calls"), list):
        calls = tuple(
            OpaquePart(type="tool_call", data=to_json_value(c)) for c in item["tool_calls"]
        )
        return message.model_copy(update={"parts": message.parts + calls})
    return message


def _name_tool_result(message: Message, tool_names: dict[str, str]) -> Message:
    if isinstance(message, AssistantMessage):
        for call in message.tool_calls or ():
            if call.id is not None:
                tool_names[call.id] = call.name
    elif isinstance(message, UserMessage):
        for part in message.parts:
            if part.type == "tool_call" and isinstance(part.data, dict):
                _remember_call(part.data, tool_names)
    elif isinstance(message, ToolMessage) and message.tool_name is None and message.tool_call_id:
        name = tool_names.get(message.tool_call_id)
        if name is not None:
            return message.model_copy(update={"tool_name": name})
    return message


def _remember_call(call: Mapping[str, Any], tool_names: dict[str, str]) -> None:
    """Note the name of a user's tool call (tau2 ``{id, name}`` or OpenAI ``function.name``)."""
    function = call.get("function")
    name = call.get("name") or (function.get("name") if isinstance(function, Mapping) else None)
    call_id = call.get("id")
    if isinstance(call_id, str) and isinstance(name, str):
        tool_names[call_id] = name


def chat_trace(
    *,
    conversation_id: str,
    messages: Sequence[Message],
    container: str,
    path: str,
    reference: str | None = None,
    labels: Mapping[str, JsonValue] | None = None,
    metadata: Mapping[str, JsonValue] | None = None,
    usage: Sequence[ModelUsage] = (),
) -> AgentTrace:
    """An AgentTrace for one chat-log conversation (no spans, so no trace ids)."""
    return AgentTrace(
        conversation_id=conversation_id,
        messages=tuple(messages),
        usage=tuple(usage),
        source=SourceInfo(container=container, files=(path,)),
        reference=reference,
        labels=dict(labels or {}),
        metadata=dict(metadata or {}),
    )


def success_labels(reward: Any) -> dict[str, JsonValue]:
    """``{"reward": r, "success": 1 if r == 1 else 0}`` for a numeric reward, else ``{}``.

    tau-bench and tau2-bench count a task as solved when its reward is 1 (within 1e-6, as
    tau2-bench's own success check allows for float rewards).
    """
    if isinstance(reward, bool) or not isinstance(reward, int | float):
        return {}
    return {"reward": reward, "success": int(abs(reward - 1.0) < 1e-6)}
