"""LangChain interop: langchain-core messages <-> :class:`~agent_eval._trace.AgentTrace`.

Both directions keep roles, content, tool calls (ids, names, arguments) and each tool
result's ``tool_call_id`` exactly, following langchain-core's message classes
(``SystemMessage``, ``HumanMessage``, ``AIMessage`` with ``tool_calls`` /
``invalid_tool_calls``, ``ToolMessage``):

======================  ===========================================================
AgentTrace              langchain-core
======================  ===========================================================
``system``              ``SystemMessage``
``user``                ``HumanMessage``
``assistant``           ``AIMessage``; ``agent_name`` <-> ``name``; ``model`` <->
                        ``response_metadata["model_name"]``; ``reasoning`` <->
                        ``additional_kwargs["reasoning_content"]``
tool call, object args  ``AIMessage.tool_calls`` entry ``{id, name, args}``
other tool call args    ``AIMessage.invalid_tool_calls`` entry, args as the JSON text
                        (or the verbatim ``raw_arguments`` when they never parsed)
``tool``                ``ToolMessage``; ``tool_name`` <-> ``name``; ``is_error`` ->
                        ``status`` ``"error"``/``"success"`` and
                        ``additional_kwargs["is_error"]`` (read back from either)
opaque parts            content blocks after a ``{"type": "text"}`` block
======================  ===========================================================

Not carried: span ids, retrievals, usage; the order of calls when valid and invalid tool calls
are mixed in one message (valid ones come first); an empty tool-call list (read back as none).
"""

from __future__ import annotations

import hashlib
from collections.abc import Mapping, Sequence
from typing import Any

import orjson
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    HumanMessage,
    InvalidToolCall,
    SystemMessage,
    convert_to_messages,
)
from langchain_core.messages import ToolCall as LCToolCall
from langchain_core.messages import ToolMessage as LCToolMessage
from pydantic import JsonValue

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    OpaquePart,
    SourceInfo,
    ToolCall,
    ToolMessage,
)
from agent_eval.errors import InputError
from agent_eval.ingest.conventions._messages import (
    build_message,
    opaque_parts_of,
    text_of,
    to_json_value,
    tool_call,
)

__all__ = ["from_langchain", "to_langchain"]

_ROLE_OF_TYPE = {"system": "system", "human": "user", "ai": "assistant", "tool": "tool"}


def from_langchain(
    messages: Sequence[BaseMessage | dict[str, Any] | tuple[str, str] | str],
    *,
    conversation_id: str | None = None,
    reference: str | None = None,
    labels: Mapping[str, JsonValue] | None = None,
    metadata: Mapping[str, JsonValue] | None = None,
) -> AgentTrace:
    """An AgentTrace from a langchain-core message list.

    Args:
        messages: ``BaseMessage`` objects, or anything ``convert_to_messages`` accepts (OpenAI
            style dicts, ``(role, text)`` tuples, strings).
        conversation_id: The id; ``langchain-<first 16 hex of sha256 of the messages>`` when
            ``None``, so the same messages always get the same id.
        reference: A reference goal for the conversation.
        labels: Ground-truth labels, e.g. ``{"success": 1}``.
        metadata: Other facts to keep with the conversation.

    Raises:
        InputError: a message of a kind AgentTrace has no role for (names its index).

    """
    converted = [_message(m, i) for i, m in enumerate(convert_to_messages(list(messages)))]
    return AgentTrace(
        conversation_id=conversation_id or _default_id(converted),
        messages=tuple(converted),
        source=SourceInfo(container="langchain"),
        reference=reference,
        labels=dict(labels or {}),
        metadata=dict(metadata or {}),
    )


def to_langchain(trace: AgentTrace) -> list[BaseMessage]:
    """The conversation's messages as langchain-core messages (see the module table)."""
    return [_to_lc(message) for message in trace.messages]


def _message(message: BaseMessage, index: int) -> Message:
    kind = "ai" if message.type == "AIMessageChunk" else message.type
    role = _ROLE_OF_TYPE.get(kind) or getattr(message, "role", None)
    if kind == "function":
        role = "tool"
    content, parts = text_of(message.content), opaque_parts_of(message.content)
    try:
        if role == "assistant" and isinstance(message, AIMessage):
            return _assistant(message, content, parts)
        if role == "tool":
            call_id = getattr(message, "tool_call_id", None) or None
            built = build_message(
                "tool", content, tool_call_id=call_id, tool_name=message.name, parts=parts
            )
            return built.model_copy(update={"is_error": _is_error(message)})
        return build_message(role, content, parts=parts)
    except ValueError as exc:
        raise InputError(
            f"messages[{index}]: a LangChain {type(message).__name__} has no AgentTrace role "
            f"({exc}); use system, human, ai or tool messages"
        ) from None


def _is_error(message: BaseMessage) -> bool | None:
    flag = message.additional_kwargs.get("is_error")
    if isinstance(flag, bool):
        return flag
    return True if getattr(message, "status", None) == "error" else None


def _assistant(message: AIMessage, content: str, parts: tuple[OpaquePart, ...]) -> Message:
    calls = [
        ToolCall(id=c["id"], name=c["name"], arguments=to_json_value(c["args"]))
        for c in message.tool_calls
    ]
    calls += [tool_call(c["name"], c["args"], c["id"]) for c in message.invalid_tool_calls]
    reasoning = message.additional_kwargs.get("reasoning_content")
    model = message.response_metadata.get("model_name")
    return AssistantMessage(
        content=content,
        parts=parts,
        tool_calls=tuple(calls) or None,
        agent_name=message.name,
        model=model if isinstance(model, str) else None,
        reasoning=reasoning if isinstance(reasoning, str) else None,
    )


def _to_lc(message: Message) -> BaseMessage:
    content = _lc_content(message.content, message.parts)
    if isinstance(message, AssistantMessage):
        return _ai(message, content)
    if isinstance(message, ToolMessage):
        return LCToolMessage(
            content=content,
            tool_call_id=message.tool_call_id or "",
            name=message.tool_name,
            status="error" if message.is_error else "success",
            additional_kwargs={} if message.is_error is None else {"is_error": message.is_error},
        )
    if message.role == "system":
        return SystemMessage(content=content)
    return HumanMessage(content=content)


def _ai(message: AssistantMessage, content: str | list[str | dict[str, Any]]) -> AIMessage:
    valid: list[LCToolCall] = []
    invalid: list[InvalidToolCall] = []
    for call in message.tool_calls or ():
        if isinstance(call.arguments, dict) and call.raw_arguments is None:
            valid.append(
                LCToolCall(name=call.name, args=call.arguments, id=call.id, type="tool_call")
            )
        else:
            args = call.raw_arguments if call.raw_arguments is not None else _dumps(call.arguments)
            invalid.append(
                InvalidToolCall(
                    name=call.name, args=args, id=call.id, error=None, type="invalid_tool_call"
                )
            )
    extra = {"reasoning_content": message.reasoning} if message.reasoning is not None else {}
    metadata = {"model_name": message.model} if message.model is not None else {}
    return AIMessage(
        content=content, tool_calls=valid, invalid_tool_calls=invalid, name=message.agent_name,
        additional_kwargs=extra, response_metadata=metadata,
    )  # fmt: skip


def _lc_content(text: str, parts: tuple[OpaquePart, ...]) -> str | list[str | dict[str, Any]]:
    if not parts:
        return text
    blocks: list[str | dict[str, Any]] = [{"type": "text", "text": text}] if text else []
    for part in parts:
        data = part.data
        if isinstance(data, dict) and data.get("type") == part.type:
            blocks.append(dict(data))
        else:
            blocks.append({"type": part.type, "data": data})
    return blocks


def _dumps(value: JsonValue) -> str:
    return "" if value is None else orjson.dumps(value).decode()


def _default_id(messages: Sequence[Message]) -> str:
    dumped = orjson.dumps(
        [m.model_dump(mode="json") for m in messages], option=orjson.OPT_SORT_KEYS
    )
    return f"langchain-{hashlib.sha256(dumped).hexdigest()[:16]}"
