"""pydantic-ai instrumentation (``Agent.instrument_all()`` / Logfire): its own message attributes.

Follows what pydantic-ai's ``InstrumentationSettings`` writes (pydantic-ai 0.x-1.x, scope
``pydantic-ai``), in both of its instrumentation versions:

- version 1 (events form): chat spans carry ``events``, a JSON list of GenAI v1.28-style event
  bodies (``{"event.name": "gen_ai.user.message", "role", "content"}``, assistant messages
  with OpenAI ``tool_calls``, ``gen_ai.tool.message`` with ``id``/``name``, and
  ``gen_ai.choice`` with ``message``); agent run spans carry ``all_messages_events`` in the
  same form;
- version 2+ (messages form): chat spans carry ``gen_ai.input.messages`` /
  ``gen_ai.output.messages`` and agent run spans ``pydantic_ai.all_messages`` (with
  ``pydantic_ai.new_message_index`` and ``gen_ai.system_instructions``), messages of
  ``{role, parts}`` where a tool result part is ``{type: "tool_call_response", id, name,
  result}``: ``result``, where the GenAI spec says ``response``;
- tool spans (``running tool: <name>``): ``gen_ai.tool.name``, ``gen_ai.tool.call.id`` and the
  arguments/result under ``tool_arguments`` / ``tool_response`` (GenAI semconv v1.37 names them
  ``gen_ai.tool.call.arguments`` / ``gen_ai.tool.call.result``, which newer pydantic-ai releases
  write and which are read too);
- ``agent_name`` / ``gen_ai.agent.name``, ``model_name``, ``final_result``, usage
  ``gen_ai.usage.input_tokens`` / ``output_tokens`` (reported for chat spans only: on an agent
  run span they are the sum of its chat spans).

An agent run span's transcript is reported as its ``input_messages`` (kind ``agent``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

import orjson

from agent_eval._trace import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._attachments import attachment_part
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._values import (
    as_int,
    as_str,
    content_of,
    first,
    maybe_json,
    text_of,
    tool_call,
    tool_execution,
)

__all__ = ["PydanticAIConvention"]

SCOPE = "pydantic-ai"
ALL_MESSAGES = "pydantic_ai.all_messages"
ALL_MESSAGES_EVENTS = "all_messages_events"
EVENTS = "events"
INPUT_MESSAGES = "gen_ai.input.messages"
OUTPUT_MESSAGES = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS = "gen_ai.system_instructions"
TOOL_ARGUMENTS = ("tool_arguments", "gen_ai.tool.call.arguments")
TOOL_RESPONSE = ("tool_response", "gen_ai.tool.call.result")
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
AGENT_NAME = ("gen_ai.agent.name", "agent_name")
MODEL = ("gen_ai.response.model", "gen_ai.request.model", "model_name")
CONVERSATION_ID = "gen_ai.conversation.id"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
CHOICE_EVENT = "gen_ai.choice"
EVENT_NAME = "event.name"
_OWN_KEYS = (ALL_MESSAGES, ALL_MESSAGES_EVENTS, "tool_arguments", "tool_response")


class PydanticAIConvention(Convention):
    """Reads pydantic-ai's agent-run transcripts, chat messages and tool runs."""

    name: ClassVar[str] = "pydantic-ai"
    semconv: ClassVar[str] = "pydantic-ai instrumentation, versions 1-2 (pydantic-ai 0.x-1.x)"
    priority: ClassVar[int] = 30
    triggers: ClassVar[frozenset[str]] = markers_of(SCOPE, *_OWN_KEYS)

    def detect(self, span: SpanRecord) -> bool:
        """pydantic-ai's own keys, or any span of the ``pydantic-ai`` instrumentation scope."""
        return span.scope_name == SCOPE or any(key in span.attributes for key in _OWN_KEYS)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """An agent run, a chat call or a tool run."""
        attributes = span.attributes
        common: dict[str, Any] = {
            "convention": self.name,
            "agent_name": as_str(first(attributes, AGENT_NAME)),
            "conversation_id": as_str(attributes.get(CONVERSATION_ID)),
        }
        if any(key in attributes for key in TOOL_ARGUMENTS + TOOL_RESPONSE):
            tool = tool_execution(
                attributes.get(TOOL_NAME),
                attributes.get(TOOL_CALL_ID),
                maybe_json(first(attributes, TOOL_ARGUMENTS)),
                first(attributes, TOOL_RESPONSE),
            )
            return SpanExtraction(kind="tool", tool=tool, **common)
        transcript = _transcript(attributes)
        if transcript is not None:
            return SpanExtraction(kind="agent", input_messages=tuple(transcript), **common)
        inputs, outputs = _chat(attributes)
        if not inputs and not outputs:
            return SpanExtraction(kind="other", ignored_reason="no_message_content", **common)
        return SpanExtraction(
            kind="llm",
            input_messages=tuple(inputs),
            output_messages=tuple(outputs),
            model=as_str(first(attributes, MODEL)),
            input_tokens=as_int(attributes.get(INPUT_TOKENS)),
            output_tokens=as_int(attributes.get(OUTPUT_TOKENS)),
            **common,
        )


def _transcript(attributes: Mapping[str, Any]) -> list[Message] | None:
    messages = maybe_json(attributes.get(ALL_MESSAGES))
    if isinstance(messages, list):
        out = _parts_messages(messages)
        system = _system_instructions(attributes.get(SYSTEM_INSTRUCTIONS))
        if system and not any(isinstance(m, SystemMessage) for m in out):
            out.insert(0, system)
        return out
    events = maybe_json(attributes.get(ALL_MESSAGES_EVENTS))
    if isinstance(events, list):
        return [m for event in events for m in _event_messages(event)]
    return None


def _chat(attributes: Mapping[str, Any]) -> tuple[list[Message], list[Message]]:
    inputs = maybe_json(attributes.get(INPUT_MESSAGES))
    outputs = maybe_json(attributes.get(OUTPUT_MESSAGES))
    if isinstance(inputs, list) or isinstance(outputs, list):
        in_messages = _parts_messages(inputs if isinstance(inputs, list) else [])
        system = _system_instructions(attributes.get(SYSTEM_INSTRUCTIONS))
        if system and not any(isinstance(m, SystemMessage) for m in in_messages):
            in_messages.insert(0, system)
        return in_messages, _parts_messages(outputs if isinstance(outputs, list) else [])
    events = maybe_json(attributes.get(EVENTS))
    if not isinstance(events, list):
        return [], []
    choices = [e for e in events if isinstance(e, Mapping) and e.get(EVENT_NAME) == CHOICE_EVENT]
    others = [e for e in events if e not in choices]
    return (
        [m for e in others for m in _event_messages(e)],
        [m for e in choices for m in _event_messages(e)],
    )


def _system_instructions(value: Any) -> SystemMessage | None:
    parts = maybe_json(value)
    if isinstance(parts, list) and parts:
        return SystemMessage(
            content="\n".join(text_of(p.get("content")) for p in parts if isinstance(p, Mapping))
        )
    return None


def _parts_messages(messages: list[Any]) -> list[Message]:
    out: list[Message] = []
    for message in messages:
        if isinstance(message, Mapping):
            out.extend(_parts_message(str(message.get("role") or ""), message.get("parts") or []))
    return out


def _parts_message(role: str, parts: list[Any]) -> list[Message]:
    parts = [p for p in parts if isinstance(p, Mapping)]
    texts = "".join(text_of(p.get("content")) for p in parts if p.get("type") == "text")
    opaque = tuple(
        attachment_part(str(p.get("type")), _jsonable(p))
        for p in parts
        if p.get("type") not in ("text", "thinking", "tool_call", "tool_call_response")
    )
    if role == "assistant":
        calls = [
            tool_call(p.get("id"), p.get("name"), p.get("arguments"))
            for p in parts
            if p.get("type") == "tool_call"
        ]
        thinking = "".join(text_of(p.get("content")) for p in parts if p.get("type") == "thinking")
        return [
            AssistantMessage(
                content=texts,
                tool_calls=tuple(calls) if calls else None,
                reasoning=thinking or None,
                parts=opaque,
            )
        ]
    out: list[Message] = [
        ToolMessage(
            content=text_of(p.get("result", p.get("response"))),
            tool_call_id=as_str(p.get("id")),
            tool_name=as_str(p.get("name")),
        )
        for p in parts
        if p.get("type") == "tool_call_response"
    ]
    if texts or opaque or not out:
        cls = SystemMessage if role == "system" else UserMessage
        out.append(cls(content=texts, parts=opaque))
    return out


def _jsonable(part: Mapping[str, Any]) -> Any:
    return maybe_json(orjson.dumps(part, default=str).decode())


def _openai_call(call: Mapping[str, Any]) -> ToolCall:
    function = call.get("function")
    function = function if isinstance(function, Mapping) else {}
    return tool_call(call.get("id"), function.get("name"), function.get("arguments"))


def _event_messages(event: Any) -> list[Message]:
    if not isinstance(event, Mapping):
        return []
    message = event.get("message")
    body: Mapping[str, Any] = message if isinstance(message, Mapping) else event
    role = str(body.get("role") or "")
    content = body.get("content")
    if role == "assistant":
        calls = [_openai_call(c) for c in body.get("tool_calls") or () if isinstance(c, Mapping)]
        return [
            AssistantMessage(content=text_of(content), tool_calls=tuple(calls) if calls else None)
        ]
    if role == "tool":
        return [
            ToolMessage(
                content=text_of(content),
                tool_call_id=as_str(body.get("id") or body.get("tool_call_id")),
                tool_name=as_str(body.get("name")),
            )
        ]
    if role == "system":
        return [SystemMessage(content=text_of(content))]
    text, parts = content_of(content)  # images etc.: typed placeholders
    return [UserMessage(content=text, parts=parts)] if role == "user" else []
