"""Google Agent Development Kit (ADK): ``gcp.vertex.agent.*`` span attributes.

Follows the attributes ADK's ``google.adk.telemetry`` module writes (ADK 1.x, seen with 1.22):

- ``call_llm`` spans: ``gcp.vertex.agent.llm_request``, a JSON ``LlmRequest`` (``model``,
  ``config.system_instruction``, ``config.labels.adk_agent_name``, ``contents`` of
  ``{role: "user"|"model", parts: [{text} | {function_call: {id, name, args}} |
  {function_response: {id, name, response}}]}``), and ``gcp.vertex.agent.llm_response``, a JSON
  ``LlmResponse`` (``content`` in the same shape, ``usage_metadata``);
- ``execute_tool <name>`` spans: ``gcp.vertex.agent.tool_call_args`` and
  ``gcp.vertex.agent.tool_response`` (JSON) next to GenAI ``gen_ai.tool.name`` /
  ``gen_ai.tool.call.id``;
- ``gcp.vertex.agent.session_id`` (the conversation), ``gcp.vertex.agent.invocation_id``,
  ``gcp.vertex.agent.event_id``.

A function response is rendered as the model was shown it: an MCP ``CallToolResult``
(``{"content": [{"type": "text", "text"}...], "isError"}``) as its text, ADK's ``{"result": x}``
wrapper as ``x``, anything else as JSON.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from agent_eval._trace import (
    AssistantMessage,
    Message,
    OpaquePart,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._extraction import SpanExtraction, ToolExecution
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._attachments import attachment_part
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._values import (
    as_int,
    as_str,
    first,
    maybe_json,
    text_of,
    tool_call,
    tool_execution,
)

__all__ = ["GoogleADKConvention"]

PREFIX = "gcp.vertex.agent."
LLM_REQUEST = "gcp.vertex.agent.llm_request"
LLM_RESPONSE = "gcp.vertex.agent.llm_response"
TOOL_CALL_ARGS = "gcp.vertex.agent.tool_call_args"
TOOL_RESPONSE = "gcp.vertex.agent.tool_response"
SESSION_ID = "gcp.vertex.agent.session_id"
INVOCATION_ID = "gcp.vertex.agent.invocation_id"
EVENT_ID = "gcp.vertex.agent.event_id"
TOOL_NAME = "gen_ai.tool.name"
TOOL_CALL_ID = "gen_ai.tool.call.id"
CONVERSATION_ID = "gen_ai.conversation.id"
AGENT_NAME = "gen_ai.agent.name"
REQUEST_MODEL = "gen_ai.request.model"
INPUT_TOKENS = "gen_ai.usage.input_tokens"
OUTPUT_TOKENS = "gen_ai.usage.output_tokens"
LABEL_AGENT_NAME = "adk_agent_name"
MEDIA_PART_KEYS = ("inline_data", "file_data")
"""google-genai ``Part`` fields holding media: ``Blob`` (``mime_type``, base64 ``data``) and
``FileData`` (``mime_type``, ``file_uri``)."""


class GoogleADKConvention(Convention):
    """Reads ADK's LLM request/response JSON and tool call attributes."""

    name: ClassVar[str] = "google-adk"
    semconv: ClassVar[str] = "Google ADK telemetry (gcp.vertex.agent.*), ADK 1.x"
    priority: ClassVar[int] = 40
    triggers: ClassVar[frozenset[str]] = markers_of(PREFIX)

    def detect(self, span: SpanRecord) -> bool:
        """Any ``gcp.vertex.agent.*`` attribute."""
        return any(key.startswith(PREFIX) for key in span.attributes)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """An LLM call from request/response JSON, or a tool run from its args/response."""
        attributes = span.attributes
        common: dict[str, Any] = {
            "convention": self.name,
            "conversation_id": as_str(first(attributes, (SESSION_ID, CONVERSATION_ID))),
        }
        if TOOL_CALL_ARGS in attributes or TOOL_RESPONSE in attributes:
            return SpanExtraction(kind="tool", tool=_tool(attributes), **common)
        request = _object(attributes.get(LLM_REQUEST))
        response = _object(attributes.get(LLM_RESPONSE))
        if not request and not response:
            return SpanExtraction(kind="other", ignored_reason="no_message_content", **common)
        config = _object(request.get("config"))
        usage = _object(response.get("usage_metadata"))
        return SpanExtraction(
            kind="llm",
            input_messages=tuple(_request_messages(request, config)),
            output_messages=tuple(_content_messages(response.get("content"))),
            agent_name=as_str(_object(config.get("labels")).get(LABEL_AGENT_NAME))
            or as_str(attributes.get(AGENT_NAME)),
            model=as_str(request.get("model")) or as_str(attributes.get(REQUEST_MODEL)),
            input_tokens=as_int(attributes.get(INPUT_TOKENS))
            or as_int(usage.get("prompt_token_count")),
            output_tokens=as_int(attributes.get(OUTPUT_TOKENS))
            or as_int(usage.get("candidates_token_count")),
            **common,
        )


def _object(value: Any) -> Mapping[str, Any]:
    value = maybe_json(value)
    return value if isinstance(value, Mapping) else {}


def _request_messages(request: Mapping[str, Any], config: Mapping[str, Any]) -> list[Message]:
    messages: list[Message] = []
    system = config.get("system_instruction")
    if system:
        messages.append(SystemMessage(content=_system_text(system)))
    for content in request.get("contents") or ():
        messages.extend(_content_messages(content))
    return messages


def _system_text(system: Any) -> str:
    if isinstance(system, Mapping):
        return "".join(str(p.get("text") or "") for p in system.get("parts") or ())
    return text_of(system)


def _content_messages(content: Any) -> list[Message]:
    """One ``Content`` (role + parts) as our messages: text, tool calls, function responses."""
    if not isinstance(content, Mapping):
        return []
    parts = [p for p in content.get("parts") or () if isinstance(p, Mapping)]
    texts = [str(p["text"]) for p in parts if p.get("text") and not p.get("thought")]
    thoughts = [str(p["text"]) for p in parts if p.get("text") and p.get("thought")]
    calls = [
        _call(p["function_call"]) for p in parts if isinstance(p.get("function_call"), Mapping)
    ]
    responses = [
        _response(p["function_response"])
        for p in parts
        if isinstance(p.get("function_response"), Mapping)
    ]
    if content.get("role") == "model":
        if not (texts or calls or thoughts):
            return []
        return [
            AssistantMessage(
                content="".join(texts),
                tool_calls=tuple(calls) if calls else None,
                reasoning="".join(thoughts) or None,
            )
        ]
    messages: list[Message] = list(responses)
    media = _media(parts)
    if texts or media:
        messages.append(UserMessage(content="".join(texts), parts=media))
    return messages


def _media(parts: list[Mapping[str, Any]]) -> tuple[OpaquePart, ...]:
    """``inline_data`` / ``file_data`` parts (images, audio, files) as typed placeholders."""
    return tuple(
        attachment_part(kind, part[kind])
        for part in parts
        for kind in MEDIA_PART_KEYS
        if isinstance(part.get(kind), Mapping)
    )


def _call(call: Mapping[str, Any]) -> ToolCall:
    return tool_call(call.get("id"), call.get("name"), call.get("args"))


def _response(response: Mapping[str, Any]) -> ToolMessage:
    return ToolMessage(
        content=_response_text(response.get("response")),
        tool_call_id=as_str(response.get("id")),
        tool_name=as_str(response.get("name")),
    )


def _response_text(value: Any) -> str:
    value = maybe_json(value)
    if isinstance(value, Mapping):
        content = value.get("content")
        if (
            isinstance(content, list)
            and content
            and all(isinstance(p, Mapping) and p.get("type") == "text" for p in content)
        ):
            return "".join(str(p.get("text") or "") for p in content)
        if set(value) == {"result"}:
            return text_of(value["result"])
    return text_of(value)


def _tool(attributes: Mapping[str, Any]) -> ToolExecution:
    execution = tool_execution(
        attributes.get(TOOL_NAME),
        attributes.get(TOOL_CALL_ID),
        maybe_json(attributes.get(TOOL_CALL_ARGS)),
        None,
    )
    if TOOL_RESPONSE not in attributes:
        return execution
    return replace(execution, result=_response_text(attributes[TOOL_RESPONSE]))
