"""Vercel AI SDK telemetry: ``ai.*`` span attributes.

Follows the AI SDK's documented telemetry (``experimental_telemetry``; AI SDK 4.x and 5.x):

- ``ai.operationId``: ``ai.generateText`` / ``ai.streamText`` / ``ai.generateObject`` /
  ``ai.streamObject`` (the whole call, possibly several steps), their ``.doGenerate`` /
  ``.doStream`` children (one provider call each), and ``ai.toolCall``;
- ``ai.prompt`` (wrapper spans): JSON ``{system?, prompt?, messages?}``;
- ``ai.prompt.messages`` (provider calls): JSON list of language-model prompt messages,
  ``{role, content}`` with ``content`` a string or a list of parts (``text``, ``tool-call``
  with ``toolCallId``/``toolName``/``args`` (4.x) or ``input`` (5.x), ``tool-result`` with
  ``result`` (4.x) or ``output: {type, value}`` (5.x), ``reasoning``);
- ``ai.response.text``, ``ai.response.toolCalls`` (JSON list of ``{toolCallId, toolName,
  args|input}``), ``ai.response.object``, ``ai.response.model``;
- ``ai.toolCall.name`` / ``.id`` / ``.args`` (or ``.input``) / ``.result`` (or ``.output``);
- ``ai.telemetry.metadata.*`` (user metadata; ``sessionId``/``conversationId``/``threadId``
  there is taken as the conversation id), ``ai.telemetry.functionId``;
- usage ``ai.usage.promptTokens``/``completionTokens`` (4.x) or ``inputTokens``/``outputTokens``
  (5.x); model ``ai.model.id``.

Wrapper spans (no ``.do*`` suffix) are reported as ``chain`` spans without usage: they
summarise the provider calls beneath them, which are the ``llm`` spans and carry the usage.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
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
from agent_eval.ingest._extraction import SpanExtraction
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

__all__ = ["VercelAIConvention"]

OPERATION_ID = "ai.operationId"
PROMPT = "ai.prompt"
PROMPT_MESSAGES = "ai.prompt.messages"
RESPONSE_TEXT = "ai.response.text"
RESPONSE_TOOL_CALLS = "ai.response.toolCalls"
RESPONSE_OBJECT = "ai.response.object"
RESPONSE_MODEL = "ai.response.model"
MODEL_ID = "ai.model.id"
TOOL_CALL_NAME = "ai.toolCall.name"
TOOL_CALL_ID = "ai.toolCall.id"
TOOL_CALL_ARGS = ("ai.toolCall.args", "ai.toolCall.input")
TOOL_CALL_RESULT = ("ai.toolCall.result", "ai.toolCall.output")
METADATA_PREFIX = "ai.telemetry.metadata."
FUNCTION_ID = "ai.telemetry.functionId"
CONVERSATION_METADATA = ("sessionId", "session_id", "conversationId", "threadId")
INPUT_TOKENS = ("ai.usage.promptTokens", "ai.usage.inputTokens", "gen_ai.usage.input_tokens")
OUTPUT_TOKENS = (
    "ai.usage.completionTokens",
    "ai.usage.outputTokens",
    "gen_ai.usage.output_tokens",
)
TOOL_CALL_OPERATION = "ai.toolCall"
ATTACHMENT_PART_TYPES = frozenset({"image", "file"})
"""AI SDK user content parts carrying media (``image``: data or URL; ``file``: data, mediaType)."""


class VercelAIConvention(Convention):
    """Reads the Vercel AI SDK's prompt, response and tool-call attributes."""

    name: ClassVar[str] = "vercel-ai"
    semconv: ClassVar[str] = "Vercel AI SDK telemetry (ai.*), AI SDK 4.x-5.x"
    priority: ClassVar[int] = 30
    triggers: ClassVar[frozenset[str]] = markers_of(
        OPERATION_ID, PROMPT, PROMPT_MESSAGES, TOOL_CALL_NAME
    )

    def detect(self, span: SpanRecord) -> bool:
        """An ``ai.operationId`` or any of the SDK's prompt/response/tool-call attributes."""
        attributes = span.attributes
        return OPERATION_ID in attributes or any(
            key in attributes for key in (PROMPT, PROMPT_MESSAGES, TOOL_CALL_NAME)
        )

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """A provider call (``llm``), a wrapper call (``chain``) or a tool run (``tool``)."""
        attributes = span.attributes
        operation = str(attributes.get(OPERATION_ID) or span.name)
        common: dict[str, Any] = {
            "convention": self.name,
            "conversation_id": _conversation_id(attributes),
            "agent_name": as_str(attributes.get(FUNCTION_ID)),
        }
        if operation == TOOL_CALL_OPERATION or TOOL_CALL_NAME in attributes:
            tool = tool_execution(
                attributes.get(TOOL_CALL_NAME),
                attributes.get(TOOL_CALL_ID),
                maybe_json(first(attributes, TOOL_CALL_ARGS)),
                _tool_output(maybe_json(first(attributes, TOOL_CALL_RESULT))),
            )
            return SpanExtraction(kind="tool", tool=tool, **common)
        inputs = tuple(_input_messages(attributes))
        outputs = tuple(_output_messages(attributes))
        provider_call = ".do" in operation
        return SpanExtraction(
            kind="llm" if provider_call else "chain",
            input_messages=inputs,
            output_messages=outputs,
            model=as_str(first(attributes, (RESPONSE_MODEL, MODEL_ID))),
            input_tokens=as_int(first(attributes, INPUT_TOKENS)) if provider_call else None,
            output_tokens=as_int(first(attributes, OUTPUT_TOKENS)) if provider_call else None,
            ignored_reason=None if inputs or outputs else "no_message_content",
            **common,
        )


def _conversation_id(attributes: Mapping[str, Any]) -> str | None:
    return as_str(first(attributes, [METADATA_PREFIX + key for key in CONVERSATION_METADATA]))


def _input_messages(attributes: Mapping[str, Any]) -> list[Message]:
    messages = maybe_json(attributes.get(PROMPT_MESSAGES))
    if isinstance(messages, list):
        return [m for raw in messages for m in _message(raw)]
    prompt = maybe_json(attributes.get(PROMPT))
    if isinstance(prompt, str) and prompt:
        return [UserMessage(content=prompt)]
    if not isinstance(prompt, Mapping):
        return []
    out: list[Message] = []
    if prompt.get("system"):
        out.append(SystemMessage(content=text_of(prompt["system"])))
    for raw in prompt.get("messages") or ():
        out.extend(_message(raw))
    if prompt.get("prompt"):
        out.append(UserMessage(content=text_of(prompt["prompt"])))
    return out


def _output_messages(attributes: Mapping[str, Any]) -> list[Message]:
    text = attributes.get(RESPONSE_TEXT)
    if text is None and RESPONSE_OBJECT in attributes:
        text = text_of(maybe_json(attributes[RESPONSE_OBJECT]))
    raw_calls = maybe_json(attributes.get(RESPONSE_TOOL_CALLS))
    calls = [_call(c) for c in raw_calls] if isinstance(raw_calls, list) else []
    if text is None and not calls:
        return []
    return [AssistantMessage(content=text_of(text), tool_calls=tuple(calls) if calls else None)]


def _message(raw: Any) -> list[Message]:
    if not isinstance(raw, Mapping):
        return []
    role, content = raw.get("role"), raw.get("content")
    parts = content if isinstance(content, list) else None
    if role == "system":
        return [SystemMessage(content=text_of(content))]
    if role == "user":
        return [_user(parts) if parts is not None else UserMessage(content=text_of(content))]
    if role == "assistant":
        return [
            _assistant(parts) if parts is not None else AssistantMessage(content=text_of(content))
        ]
    if role == "tool":
        return [_tool_result(p) for p in parts or () if isinstance(p, Mapping)]
    return []


def _text(parts: list[Any]) -> str:
    return "".join(
        str(p.get("text") or "")
        for p in parts
        if isinstance(p, Mapping) and p.get("type") == "text"
    )


def _user(parts: list[Any]) -> UserMessage:
    return UserMessage(content=_text(parts), parts=_attachments(parts))


def _attachments(parts: list[Any]) -> tuple[OpaquePart, ...]:
    """The user's ``image`` / ``file`` parts as typed placeholders (no inline base64)."""
    return tuple(
        attachment_part(str(p["type"]), p)
        for p in parts
        if isinstance(p, Mapping) and p.get("type") in ATTACHMENT_PART_TYPES
    )


def _assistant(parts: list[Any]) -> AssistantMessage:
    calls = [_call(p) for p in parts if isinstance(p, Mapping) and p.get("type") == "tool-call"]
    reasoning = "".join(
        str(p.get("text") or "")
        for p in parts
        if isinstance(p, Mapping) and p.get("type") == "reasoning"
    )
    return AssistantMessage(
        content=_text(parts),
        tool_calls=tuple(calls) if calls else None,
        reasoning=reasoning or None,
    )


def _call(raw: Any) -> ToolCall:
    if not isinstance(raw, Mapping):
        return tool_call(None, "", None)
    arguments = raw.get("args", raw.get("input"))
    return tool_call(raw.get("toolCallId"), raw.get("toolName"), arguments)


def _tool_result(part: Mapping[str, Any]) -> ToolMessage:
    output = part.get("output", part.get("result"))
    return ToolMessage(
        content=_tool_output(output) or "",
        tool_call_id=as_str(part.get("toolCallId")),
        tool_name=as_str(part.get("toolName")),
    )


def _tool_output(output: Any) -> str | None:
    """A tool result as text; 5.x wraps it as ``{type: "text"|"json"|..., value}``."""
    if output is None:
        return None
    if isinstance(output, Mapping) and set(output) == {"type", "value"}:
        return text_of(output["value"])
    return text_of(output)
