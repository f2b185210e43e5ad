"""Amazon Bedrock Converse content blocks, as Strands Agents records message content.

A Converse message ``content`` is a list of blocks, each a mapping with exactly one key naming
its type (Bedrock Runtime API reference, ``ContentBlock``): ``{"text": str}``,
``{"toolUse": {"toolUseId", "name", "input"}}``, ``{"toolResult": {"toolUseId", "status",
"content": [blocks]}}``, ``{"reasoningContent": {"reasoningText": {"text"}}}``, and media blocks
``image`` / ``document`` / ``video`` / ``audio`` (``{"format", "source": {"bytes" | ...}}``).
Strands writes such lists, JSON-encoded, as the ``content`` of its per-message span events
and as the ``message`` of its ``gen_ai.choice`` events.

:func:`converse_messages` turns one such message into ours: text blocks joined, ``toolUse``
blocks as tool calls, each ``toolResult`` as its own tool message (in block order), reasoning
kept, media blocks as :class:`~agent_eval._trace.OpaquePart` placeholders without their bytes.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, TypeGuard

import orjson

from agent_eval._trace import (
    AssistantMessage,
    Message,
    OpaquePart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest.conventions._attachments import attachment_part
from agent_eval.ingest.conventions._json_values import to_json_value

__all__ = ["BLOCK_TYPES", "converse_messages", "is_converse_content"]

BLOCK_TYPES = frozenset(
    {
        "text", "toolUse", "toolResult", "reasoningContent", "image", "document", "video",
        "audio", "json", "cachePoint", "guardContent", "citationsContent",
    }
)  # fmt: skip
"""Keys a Converse ``ContentBlock`` is made of (one per block)."""
_MEDIA = frozenset({"image", "document", "video", "audio"})
_SKIPPED = frozenset({"cachePoint"})
"""Blocks that carry no content (a prompt-cache marker)."""


def is_converse_content(value: Any) -> TypeGuard[list[Mapping[str, Any]]]:
    """Whether ``value`` is a non-empty list of Converse blocks (and not OpenAI/GenAI parts)."""
    if not isinstance(value, list) or not value:
        return False
    return all(
        isinstance(block, Mapping) and "type" not in block and len(block) == 1
        and next(iter(block)) in BLOCK_TYPES
        for block in value
    )  # fmt: skip


def converse_messages(role: str, blocks: Sequence[Mapping[str, Any]]) -> list[Message]:
    """Our message(s) for one Converse message of ``role`` (already canonical: four roles).

    Returns one message, or, when the blocks hold ``toolResult`` blocks, one tool message per
    result followed by a message of ``role`` for the other blocks (if they hold anything).
    """
    texts: list[str] = []
    calls: list[ToolCall] = []
    results: list[ToolMessage] = []
    reasoning: list[str] = []
    parts: list[OpaquePart] = []
    for block in blocks:
        kind, body = next(iter(block.items()))
        if kind == "text" and isinstance(body, str):
            texts.append(body)
        elif kind == "toolUse" and isinstance(body, Mapping):
            calls.append(_tool_use(body))
        elif kind == "toolResult" and isinstance(body, Mapping):
            results.append(_tool_result(body))
        elif kind == "reasoningContent" and isinstance(body, Mapping):
            text = body.get("reasoningText")
            if isinstance(text, Mapping) and isinstance(text.get("text"), str):
                reasoning.append(text["text"])
        elif kind in _MEDIA:
            parts.append(attachment_part(kind, body))
        elif kind not in _SKIPPED:
            parts.append(OpaquePart(type=kind, data=to_json_value(body)))
    text = "\n".join(t for t in texts if t)
    rest = _message(role, text, calls, reasoning, parts)
    if not results:
        return [rest]
    return [*results, rest] if (text or calls or parts) else list(results)


def _message(
    role: str, text: str, calls: list[ToolCall], reasoning: list[str], parts: list[OpaquePart]
) -> Message:
    extra = tuple(parts)
    if role == "assistant":
        return AssistantMessage(
            content=text, parts=extra, tool_calls=tuple(calls) if calls else None,
            reasoning="\n".join(reasoning) or None,
        )  # fmt: skip
    if role == "system":
        return SystemMessage(content=text, parts=extra)
    if role == "tool":
        return ToolMessage(content=text, parts=extra)
    return UserMessage(content=text, parts=extra)


def _tool_use(body: Mapping[str, Any]) -> ToolCall:
    call_id = body.get("toolUseId")
    return ToolCall(
        id=str(call_id) if call_id else None,
        name=str(body.get("name") or ""),
        arguments=to_json_value(body.get("input")),
    )


def _tool_result(body: Mapping[str, Any]) -> ToolMessage:
    call_id = body.get("toolUseId")
    content = body.get("content")
    texts: list[str] = []
    parts: list[OpaquePart] = []
    for block in content if isinstance(content, list) else ():
        if not isinstance(block, Mapping) or len(block) != 1:
            continue
        kind, value = next(iter(block.items()))
        if kind == "text" and isinstance(value, str):
            texts.append(value)
        elif kind == "json":
            texts.append(orjson.dumps(to_json_value(value)).decode())
        elif kind in _MEDIA:
            parts.append(attachment_part(kind, value))
    return ToolMessage(
        content="\n".join(texts),
        parts=tuple(parts),
        tool_call_id=str(call_id) if call_id else None,
    )
