"""When two sightings of a message are the same message, and how they are merged.

LLM calls replay earlier messages, often re-serialised by another library (whitespace, key
order of tool arguments, ``None`` vs ``""`` content). :func:`message_key` is the identity the
transcript deduplicates by:

- an assistant message with tool calls that all have ids: its call ids;
- an assistant message with tool calls without ids: its text plus each call's name and
  canonical (key-sorted) JSON arguments;
- a tool result with a call id: that id;
- anything else: role plus whitespace-normalised text.

:func:`merge_sightings` fills what the first sighting lacked (tool name, agent, model,
reasoning, tool calls) from a later one; :func:`fill_from` fills every field a sighting lacks
(also a tool result's error flag and opaque parts) from another, for folding a trace's messages
into the later trace that replays them; :func:`with_speaker` labels a fresh LLM output with the
agent and model that produced it.
"""

from __future__ import annotations

from typing import Any

import orjson

from agent_eval._trace import AssistantMessage, Message, ToolMessage

__all__ = [
    "MessageKey",
    "fill_from",
    "merge_sightings",
    "message_key",
    "tool_result_key",
    "with_speaker",
]

MessageKey = tuple[Any, ...]

_ASSISTANT_FILLABLE = ("agent_name", "model", "reasoning", "tool_calls")


def message_key(message: Message) -> MessageKey:
    """The identity used to recognise a replayed message (see the module docstring)."""
    if isinstance(message, AssistantMessage) and message.tool_calls:
        ids = tuple(c.id for c in message.tool_calls)
        if all(ids):
            return ("assistant", "ids", ids)
        calls = tuple(
            (c.name, _canonical(c.arguments), c.raw_arguments) for c in message.tool_calls
        )
        return ("assistant", _norm(message.content), calls)
    if isinstance(message, ToolMessage) and message.tool_call_id:
        return tool_result_key(message.tool_call_id)
    return (message.role, _norm(message.content))


def tool_result_key(call_id: str) -> MessageKey:
    """The key of the tool result answering ``call_id``."""
    return ("tool", "id", call_id)


def _norm(text: str) -> str:
    return " ".join(text.split())


def _canonical(value: Any) -> str:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()


def with_speaker(message: Message, agent_name: str | None, model: str | None) -> Message:
    """An LLM output labelled with its agent and model (assistant messages only)."""
    if not isinstance(message, AssistantMessage):
        return message
    update = {}
    if agent_name and not message.agent_name:
        update["agent_name"] = agent_name
    if model and not message.model:
        update["model"] = model
    return message.model_copy(update=update) if update else message


def merge_sightings(first: Message, other: Message) -> Message:
    """The first sighting with what it lacked filled from a later sighting of the same message."""
    update: dict[str, Any] = {}
    if not first.content and other.content:
        update["content"] = other.content
    if (
        isinstance(first, ToolMessage)
        and isinstance(other, ToolMessage)
        and first.tool_name is None
        and other.tool_name
    ):
        update["tool_name"] = other.tool_name
    if isinstance(first, AssistantMessage) and isinstance(other, AssistantMessage):
        for name in _ASSISTANT_FILLABLE:
            if getattr(first, name) is None and getattr(other, name) is not None:
                update[name] = getattr(other, name)
    return first.model_copy(update=update) if update else first


def fill_from(message: Message, other: Message) -> Message:
    """``message`` with every field it lacks taken from ``other``, a sighting of the same message.

    What :func:`merge_sightings` fills, and a tool result's ``is_error`` (when ``None``) and the
    opaque ``parts`` (when there are none). Span ids are not touched. Used when an earlier trace
    is folded into the later one that replays it: the replay keeps its values, the call that
    produced the message fills in what the replay did not record (its model, its reasoning).
    """
    merged = merge_sightings(message, other)
    update: dict[str, Any] = {}
    if not merged.parts and other.parts:
        update["parts"] = other.parts
    if (
        isinstance(merged, ToolMessage)
        and isinstance(other, ToolMessage)
        and merged.is_error is None
        and other.is_error is not None
    ):
        update["is_error"] = other.is_error
    return merged.model_copy(update=update) if update else merged
