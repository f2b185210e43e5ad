"""Building blocks every convention uses to turn recorded message shapes into our messages.

Conventions meet the same few shapes again and again: JSON inside a string attribute, OpenAI
chat messages (``{"role", "content", "tool_calls": [{"id", "function": {"name",
"arguments"}}], "tool_call_id"}``), and OTel GenAI v1.37 part lists (``{"role", "parts":
[{"type": "text" | "tool_call" | "tool_call_response" | "reasoning" | ..., ...}]}``). The
helpers here decode those once so every convention module stays small:

- :func:`decode_json` parses JSON held in a string, leaving anything else as it is;
- :func:`parse_arguments` gives tool-call arguments as parsed JSON, or the verbatim string in
  ``raw_arguments`` when it is not valid JSON;
- :func:`build_message` maps a role name to our message type;
- :func:`message_from_mapping` reads one message in either the OpenAI or the parts shape.

Unknown roles raise :class:`ValueError`; conventions turn it into ``InvalidSpanError`` naming the
span and attribute.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

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
from agent_eval.ingest._safe_text import MAX_NESTING
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest.conventions._attachments import attachment_part
from agent_eval.ingest.conventions._content_parts import (
    TEXT_PART_TYPES,
    is_text_part,
    opaque_parts_of,
    text_of,
)
from agent_eval.ingest.conventions._converse_blocks import converse_messages, is_converse_content
from agent_eval.ingest.conventions._history_cache import HISTORY_MIN_CHARS, read_history
from agent_eval.ingest.conventions._json_values import decode_json, parse_arguments, to_json_value

__all__ = [
    "MESSAGE_CACHE_MAX_BYTES",
    "MESSAGE_CACHE_SIZE",
    "ROLE_ALIASES",
    "build_message",
    "clear_message_cache",
    "decode_json",
    "message_from_mapping",
    "messages_from_value",
    "opaque_parts_of",
    "parse_arguments",
    "read_message",
    "split_tool_responses",
    "text_of",
    "to_json_value",
    "tool_call",
]

MESSAGE_CACHE_SIZE = 8192
"""How many distinct recorded messages :func:`read_message` keeps (a bounded LRU cache)."""
MESSAGE_CACHE_MAX_BYTES = 8 * 1024
"""Messages larger than this (as JSON) are not cached, so the cache stays under ~64 MiB."""

ROLE_ALIASES: Mapping[str, str] = {
    "system": "system",
    "developer": "system",
    "user": "user",
    "human": "user",
    "assistant": "assistant",
    "ai": "assistant",
    "model": "assistant",
    "bot": "assistant",
    "tool": "tool",
    "function": "tool",
    "ipython": "tool",
}
"""Role names seen in the wild -> our four roles (OpenAI, LangChain, Gemini, Llama)."""
_ROLE_LOOKUP: dict[str, str] = dict(ROLE_ALIASES)
""":data:`ROLE_ALIASES` as a plain dict, for the exact lower-case role most messages carry."""


def tool_call(name: Any, arguments: Any, call_id: Any = None) -> ToolCall:
    """A :class:`ToolCall` with arguments parsed (invalid JSON kept in ``raw_arguments``)."""
    parsed, raw = parse_arguments(arguments)
    return ToolCall(
        id=None if call_id in (None, "") else str(call_id),
        name="" if name is None else str(name),
        arguments=parsed,
        raw_arguments=raw,
    )


def build_message(
    role: Any,
    content: str = "",
    *,
    tool_calls: Sequence[ToolCall] | None = None,
    tool_call_id: str | None = None,
    tool_name: str | None = None,
    reasoning: str | None = None,
    parts: Iterable[OpaquePart] = (),
    agent_name: str | None = None,
) -> Message:
    """One of our message types for ``role`` (aliases such as ``developer``/``ai`` accepted).

    ``tool_name`` is kept on tool results only, ``agent_name`` on assistant messages only.

    Raises:
        ValueError: the role is not one of :data:`ROLE_ALIASES`.

    """
    canonical = _ROLE_LOOKUP.get(role) if type(role) is str else None
    if canonical is None and role is not None:
        canonical = ROLE_ALIASES.get(str(role).lower())
    extra = parts if type(parts) is tuple else tuple(parts)
    if canonical == "system":
        return SystemMessage(content=content, parts=extra)
    if canonical == "user":
        return UserMessage(content=content, parts=extra)
    if canonical == "tool":
        return ToolMessage(
            content=content, parts=extra, tool_call_id=tool_call_id, tool_name=tool_name
        )
    if canonical == "assistant":
        calls = None if tool_calls is None else tuple(tool_calls)
        return AssistantMessage(
            content=content,
            parts=extra,
            tool_calls=calls,
            reasoning=reasoning,
            agent_name=agent_name,
        )
    raise ValueError(f"unknown message role {role!r}; expected one of {sorted(ROLE_ALIASES)}")


def message_from_mapping(data: Mapping[str, Any], default_role: str | None = None) -> Message:
    """Read one message in the OpenAI chat shape or the GenAI v1.37 parts shape.

    Raises:
        ValueError: no usable role.

    """
    role = data.get("role") or default_role
    if isinstance(data.get("parts"), list):
        return _from_parts(role, data["parts"])
    return _from_openai(role, data)


def _from_openai(role: Any, data: Mapping[str, Any]) -> Message:
    content = data.get("content", data.get("text"))
    if _is_parts_json(content) or _is_blocks_json(content):
        content = decode_json(content)
    if is_converse_content(content):
        messages = converse_messages(_canonical_role(role), content)
        if len(messages) == 1:
            return messages[0]
    calls = _openai_tool_calls(data)
    name = _str_or_none(data.get("name"))
    return build_message(
        role,
        text_of(content),
        tool_calls=calls,
        tool_call_id=_str_or_none(data.get("tool_call_id") or data.get("id")),
        tool_name=name,
        parts=opaque_parts_of(content),
        agent_name=name,  # an assistant message's name: the participant (agent) that spoke
    )


def _is_parts_json(value: Any) -> bool:
    return isinstance(value, str) and value.lstrip().startswith('[{"type"')


def _is_blocks_json(value: Any) -> bool:
    """A JSON list of Converse content blocks (Strands), e.g. ``[{"text": ...}]``."""
    if not (isinstance(value, str) and value.lstrip().startswith('[{"')):
        return False
    return is_converse_content(decode_json(value))


def _canonical_role(role: Any) -> str:
    canonical = ROLE_ALIASES.get(str(role).lower()) if role is not None else None
    if canonical is None:
        raise ValueError(f"unknown message role {role!r}; expected one of {sorted(ROLE_ALIASES)}")
    return canonical


def _openai_tool_calls(data: Mapping[str, Any]) -> list[ToolCall] | None:
    raw = decode_json(data.get("tool_calls"))
    calls: list[ToolCall] = []
    if isinstance(raw, list):
        for item in raw:
            if isinstance(item, Mapping):
                function = item.get("function")
                fn: Mapping[str, Any] = function if isinstance(function, Mapping) else item
                calls.append(tool_call(fn.get("name"), fn.get("arguments"), item.get("id")))
    function_call = data.get("function_call")
    if isinstance(function_call, Mapping):
        calls.append(tool_call(function_call.get("name"), function_call.get("arguments")))
    if not calls and raw is None and function_call is None:
        return None
    return calls


def _from_parts(role: Any, parts: Sequence[Any]) -> Message:
    texts: list[str] = []
    reasoning: list[str] = []
    calls: list[ToolCall] = []
    opaque: list[OpaquePart] = []
    response_id: str | None = None
    for part in parts:
        if not (type(part) is dict or isinstance(part, Mapping)):  # parsed JSON: no ABC check
            texts.append(text_of(part))
            continue
        kind = part.get("type")
        if kind in TEXT_PART_TYPES:
            texts.append(_part_text(part))
        elif kind == "reasoning":
            reasoning.append(text_of(part))
        elif kind == "tool_call":
            calls.append(tool_call(part.get("name"), part.get("arguments"), part.get("id")))
        elif kind == "tool_call_response":
            response_id = _str_or_none(part.get("id"))
            texts.append(_response_text(part.get("response")))
        else:
            opaque.append(attachment_part(str(kind or "unknown"), part))
    return build_message(
        role,
        "\n".join([t for t in texts if t]),
        tool_calls=calls or None,
        tool_call_id=response_id,
        reasoning="\n".join(reasoning) or None,
        parts=opaque,
    )


def _part_text(part: Mapping[str, Any]) -> str:
    """:func:`text_of` a text part, reading an exact-``str`` ``text``/``content`` at once."""
    text = part.get("text")
    if text is None:
        text = part.get("content")
    return text if type(text) is str else text_of(part)


def _response_text(response: Any) -> str:
    """A ``tool_call_response`` part's result as the text the model received.

    Microsoft Agent Framework records the result as its serialized ``FunctionResultContent``,
    ``{"type": "function_result", "call_id", "result"}``; the result inside is the text.
    """
    if type(response) is str:  # plain text (no JSON object/array to unwrap) is the text
        first = response[:1]
        if not first or (first not in "[{" and not first.isspace()):
            return response
    wrapped = decode_json(response) if isinstance(response, str) else response
    if isinstance(wrapped, Mapping) and wrapped.get("type") == "function_result":
        response = wrapped.get("result")
    if isinstance(response, str):
        return response
    if response is None:
        return ""
    if isinstance(response, list) and response and all(is_text_part(p) for p in response):
        return text_of(response)  # a list of text blocks (Strands, MCP content)
    return orjson.dumps(to_json_value(response)).decode()


def messages_from_value(
    value: Any,
    default_role: str | None = None,
    *,
    notes: list[str] | None = None,
    where: str = "",
) -> list[Message]:
    """Messages from a decoded attribute: a list of message mappings, one mapping, or text.

    A mapping with a ``messages`` list (a request body) yields those messages; a bare string
    becomes one message of ``default_role`` (nothing when no default is given).

    With ``notes`` given, a message that cannot be read (an unknown role) is left out and a
    sentence naming it (``where``, e.g. the attribute key, and its index) is appended to
    ``notes``; the other messages are kept (issue 19, item 9).

    Raises:
        ValueError: a message with an unknown role (only when ``notes`` is ``None``).

    """
    if value is None:
        return []  # the attribute is absent: nothing to decode
    if type(value) is str and len(value) >= HISTORY_MIN_CHARS:

        def read_items(items: list[Any], role: str | None) -> list[Message]:
            return _read_items(items, role, notes, where)

        history = read_history(value, default_role, read_items)
        if history is not None:  # a replayed history: only its new messages are read
            return history
    value = decode_json(value)
    if type(value) is list:  # parsed JSON: the usual case, without the ABC checks
        return _read_items(value, default_role, notes, where)
    if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
        value = value["messages"]
    if isinstance(value, Mapping):
        value = [value]
    if isinstance(value, list):
        return _read_items(value, default_role, notes, where)
    if isinstance(value, str) and value and default_role:
        return [build_message(default_role, value)]
    return []


def _read_items(
    items: list[Any],
    default_role: str | None,
    notes: list[str] | None = None,
    where: str = "",
) -> list[Message]:
    if notes is None:
        return [
            m
            for item in items
            if type(item) is dict or isinstance(item, Mapping)
            for m in read_message(item, default_role)
        ]
    out: list[Message] = []
    for index, item in enumerate(items):
        if type(item) is dict or isinstance(item, Mapping):  # parsed JSON: no ABC check
            try:
                out.extend(read_message(item, default_role))
            except ValueError as exc:
                notes.append(f"message {where or 'messages'}[{index}] left out: {exc}")
    return out


def read_message(data: Mapping[str, Any], default_role: str | None = None) -> tuple[Message, ...]:
    """The message(s) one recorded message mapping stands for, memoised on its JSON.

    Usually one; a parts-shaped message holding several tool results gives one tool message per
    result (:func:`split_tool_responses`). Every LLM call replays the history, so the same
    mapping is read again and again; the (frozen) messages built the first time are reused.
    Mappings that are not JSON-serialisable, or larger than :data:`MESSAGE_CACHE_MAX_BYTES`, are
    read without the cache.

    Raises:
        ValueError: a message with an unknown role.

    """
    try:
        raw = orjson.dumps(data)
    except TypeError:
        return _read_message(data, default_role)
    if len(raw) > MESSAGE_CACHE_MAX_BYTES:
        return _read_message(data, default_role)
    # The default role only fills a missing role: a recorded role makes it irrelevant, so an
    # output message and its replays in later inputs share one cache entry.
    return _read_message_json(raw, None if data.get("role") else default_role)


def clear_message_cache() -> None:
    """Forget every message :func:`read_message` remembered.

    ``agent-eval serve`` calls it when it closes conversations, so a long-running receiver
    keeps none of those gone.
    """
    _read_message_json.cache_clear()


@functools.lru_cache(maxsize=MESSAGE_CACHE_SIZE)
def _read_message_json(raw: bytes, default_role: str | None) -> tuple[Message, ...]:
    # ``raw`` is orjson's own output (valid UTF-8, no lone surrogates): with too few brackets to
    # nest past the limit, safe_text.loads would only add the checks it cannot fail.
    if raw.count(b"[") + raw.count(b"{") <= MAX_NESTING:
        return _read_message(orjson.loads(raw), default_role)
    return _read_message(safe_json_loads(raw), default_role)


def _read_message(data: Mapping[str, Any], default_role: str | None) -> tuple[Message, ...]:
    parts = data.get("parts")
    if type(parts) is list and not _splits(data, parts):  # GenAI parts shape, one message
        message = _from_parts(data.get("role") or default_role, parts)
        if "tool_calls" in data or "tool_call_id" in data:
            message = _with_openai_fields(message, data)
        return (message,)
    content = data.get("content") if "parts" not in data else None
    if _is_blocks_json(content):
        content = decode_json(content)
    if is_converse_content(content):  # Converse blocks: tool results become their own messages
        return tuple(converse_messages(_canonical_role(data.get("role") or default_role), content))
    return tuple(message_from_mapping(one, default_role) for one in split_tool_responses(data))


def _with_openai_fields(message: Message, data: Mapping[str, Any]) -> Message:
    """A parts-shaped message completed by OpenAI-shaped ``tool_calls`` / ``tool_call_id``.

    LiteLLM's OpenTelemetry callback writes ``gen_ai.input.messages`` with text ``parts`` and
    keeps the OpenAI message's own ``tool_calls`` (``[{"id", "function": {"name",
    "arguments"}}]``) and ``tool_call_id`` beside them; parts that already hold tool calls or a
    call id win.
    """
    if isinstance(message, AssistantMessage) and not message.tool_calls:
        calls = _openai_tool_calls(data)
        if calls:
            return message.model_copy(update={"tool_calls": tuple(calls)})
    if isinstance(message, ToolMessage) and not message.tool_call_id:
        call_id = _str_or_none(data.get("tool_call_id"))
        if call_id:
            return message.model_copy(update={"tool_call_id": call_id})
    return message


def _splits(data: Mapping[str, Any], parts: list[Any]) -> bool:
    """Whether :func:`split_tool_responses` gives more than ``data`` itself for these parts."""
    for p in parts:
        if (type(p) is dict or isinstance(p, Mapping)) and p.get("type") == "tool_call_response":
            return not (len(parts) == 1 and data.get("role") == "tool")
    return False


def split_tool_responses(data: Mapping[str, Any]) -> list[Mapping[str, Any]]:
    """One ``tool`` message per ``tool_call_response`` part of a parts-shaped message.

    GenAI v1.37 lets one message carry several parts: .NET Microsoft.Extensions.AI and Microsoft
    Agent Framework put the results of parallel tool calls in one ``tool`` message, pydantic-ai
    puts tool results in a ``user`` message. Each result becomes its own message (in part
    order), followed by the message's other parts, if any.
    """
    parts = data.get("parts")
    if not isinstance(parts, list):
        return [data]
    responses = [
        p for p in parts if isinstance(p, Mapping) and p.get("type") == "tool_call_response"
    ]
    if not responses or (len(parts) == 1 and data.get("role") == "tool"):
        return [data]
    rest = [p for p in parts if p not in responses]
    split: list[Mapping[str, Any]] = [{"role": "tool", "parts": [p]} for p in responses]
    return [*split, {**data, "parts": rest}] if rest else split


def _str_or_none(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
