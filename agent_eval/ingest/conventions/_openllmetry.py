"""OpenLLMetry / Traceloop: flattened ``gen_ai.prompt.{i}.*`` and ``gen_ai.completion.{i}.*``.

Follows the attributes written by Traceloop's OpenLLMetry instrumentations
(``opentelemetry-instrumentation-openai`` 0.2x-0.4x, ``@traceloop/node-server-sdk``), which
predate OTel GenAI semantic conventions v1.28 and flatten each message into indexed keys:

- ``gen_ai.prompt.{i}.role`` / ``.content`` / ``.tool_call_id`` and, for assistant turns in the
  history, ``.tool_calls.{j}.id`` / ``.name`` / ``.arguments``;
- ``gen_ai.completion.{i}.role`` / ``.content`` / ``.finish_reason`` / ``.tool_calls.{j}.*``
  (older releases: ``.function_call.name`` / ``.arguments``);
- ``llm.request.functions.{i}.name`` / ``.description`` / ``.parameters``: the tool definitions
  (recognised for detection; agent-eval keeps no tool definitions);
- the newer parts-JSON form: ``content`` holding a JSON list of content parts
  (``[{"type": "text", "text": ...}, {"type": "image_url", ...}]``: text parts joined, the
  others kept as attachment placeholders without their base64 data), or, as Koog writes it,
  a JSON list of OpenAI tool calls
  (``[{"id", "type": "function", "function": {"name", "arguments"}}]``), read as the
  assistant's tool calls whatever role was recorded (Koog records each parallel call of one
  response as its own completion; they are kept as recorded, one assistant turn each);
- ``traceloop.association.properties.session_id`` (conversation id; also read on spans whose
  messages are in GenAI ``gen_ai.input.messages``, which recent OpenLLMetry releases write and
  the ``genai`` convention reads),
  ``traceloop.span.kind`` (``workflow``, ``task``, ``agent``, ``tool``) with
  ``traceloop.entity.name`` / ``.input`` / ``.output`` (decorated functions; a tool's input is
  ``{"args": [...], "kwargs": {...}}``);
- usage ``gen_ai.usage.prompt_tokens`` / ``completion_tokens`` (or ``input_tokens`` /
  ``output_tokens``), ``gen_ai.request.model`` / ``gen_ai.response.model``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any, ClassVar

from agent_eval._trace import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._extraction import SpanExtraction, SpanKind, ToolExecution
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._tool_outputs import langchain_tool_message
from agent_eval.ingest.conventions._values import (
    as_int,
    as_str,
    content_of,
    first,
    indexed,
    maybe_json,
    text_of,
    tool_call,
    tool_execution,
)

__all__ = ["OpenLLMetryConvention"]

PROMPT_PREFIX = "gen_ai.prompt."
COMPLETION_PREFIX = "gen_ai.completion."
FUNCTIONS_PREFIX = "llm.request.functions."
ROLE = "role"
CONTENT = "content"
TOOL_CALL_ID = "tool_call_id"
TOOL_CALLS_PREFIX = "tool_calls."
FUNCTION_CALL_NAME = "function_call.name"
FUNCTION_CALL_ARGUMENTS = "function_call.arguments"
SESSION_ID = "traceloop.association.properties.session_id"
SPAN_KIND = "traceloop.span.kind"
ENTITY_NAME = "traceloop.entity.name"
ENTITY_INPUT = "traceloop.entity.input"
ENTITY_OUTPUT = "traceloop.entity.output"
REQUEST_MODEL = "gen_ai.request.model"
RESPONSE_MODEL = "gen_ai.response.model"
INPUT_TOKENS = ("gen_ai.usage.prompt_tokens", "gen_ai.usage.input_tokens")
OUTPUT_TOKENS = ("gen_ai.usage.completion_tokens", "gen_ai.usage.output_tokens")
AGENT_NAME = "gen_ai.agent.name"
CONVERSATION_ID = "gen_ai.conversation.id"
GENAI_OUTPUT_MESSAGES = "gen_ai.output.messages"

_INDEXED_PREFIXES = (PROMPT_PREFIX, COMPLETION_PREFIX, FUNCTIONS_PREFIX)

_ENTITY_KINDS: dict[str, SpanKind] = {
    "tool": "tool",
    "agent": "agent",
    "workflow": "chain",
    "task": "chain",
}


class OpenLLMetryConvention(Convention):
    """Reads OpenLLMetry's flattened prompt/completion attributes and Traceloop entities."""

    name: ClassVar[str] = "openllmetry"
    semconv: ClassVar[str] = "OpenLLMetry (Traceloop) semantic conventions, 0.2x-0.4x"
    priority: ClassVar[int] = 45
    triggers: ClassVar[frozenset[str]] = markers_of(
        SPAN_KIND, SESSION_ID, PROMPT_PREFIX, COMPLETION_PREFIX, FUNCTIONS_PREFIX
    )

    def detect(self, span: SpanRecord) -> bool:
        """Any flattened prompt/completion/function key, a Traceloop span kind or session id."""
        attributes = span.attributes
        if SPAN_KIND in attributes or SESSION_ID in attributes:
            return True
        if not any(map(str.startswith, attributes, repeat(_INDEXED_PREFIXES))):
            return False  # the common miss (a GenAI span of another convention): one C pass
        return any(_is_indexed(key) for key in attributes)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """Messages of an LLM span, or the tool run / agent of a Traceloop entity span."""
        attributes = span.attributes
        entity_kind = _ENTITY_KINDS.get(str(attributes.get(SPAN_KIND) or ""))
        inputs = tuple(_messages(indexed(attributes, PROMPT_PREFIX)))
        outputs = tuple(_messages(indexed(attributes, COMPLETION_PREFIX), completion=True))
        if GENAI_OUTPUT_MESSAGES in attributes and not inputs:
            # LiteLLM writes its reply's tool calls as gen_ai.completion.N.function_call.* beside
            # GenAI gen_ai.input/output.messages: the genai convention reads them together
            outputs = ()
        common: dict[str, Any] = {
            "convention": self.name,
            "conversation_id": as_str(attributes.get(SESSION_ID))
            or as_str(attributes.get(CONVERSATION_ID)),
            "agent_name": as_str(attributes.get(AGENT_NAME)),
        }
        if inputs or outputs or FUNCTIONS_PREFIX + "0.name" in attributes:
            return SpanExtraction(
                kind="llm",
                input_messages=inputs,
                output_messages=outputs,
                model=as_str(first(attributes, (RESPONSE_MODEL, REQUEST_MODEL))),
                input_tokens=as_int(first(attributes, INPUT_TOKENS)),
                output_tokens=as_int(first(attributes, OUTPUT_TOKENS)),
                ignored_reason=None if inputs or outputs else "no_message_content",
                **common,
            )
        if entity_kind == "tool":
            return SpanExtraction(kind="tool", tool=_entity_tool(attributes), **common)
        if entity_kind == "agent":
            common["agent_name"] = common["agent_name"] or as_str(attributes.get(ENTITY_NAME))
            return SpanExtraction(kind="agent", **common)
        return SpanExtraction(
            kind=entity_kind or "other", ignored_reason="no_message_content", **common
        )


def _is_indexed(key: str) -> bool:
    if not key.startswith(_INDEXED_PREFIXES):  # one C call for the common miss
        return False
    for prefix in _INDEXED_PREFIXES:
        if key.startswith(prefix):
            return key[len(prefix) : len(prefix) + 1].isdigit()
    return False


def _messages(entries: list[dict[str, Any]], *, completion: bool = False) -> list[Message]:
    return [m for entry in entries if (m := _message(entry, completion)) is not None]


def _message(entry: Mapping[str, Any], completion: bool) -> Message | None:
    role = str(entry.get(ROLE) or ("assistant" if completion else "user"))
    content = maybe_json(entry.get(CONTENT))
    calls = _tool_calls(entry) or _openai_tool_calls(content)
    if calls:
        text = "" if _openai_tool_calls(content) else text_of(content)
        return AssistantMessage(content=text, tool_calls=tuple(calls))
    text, parts = content_of(entry.get(CONTENT) if isinstance(content, str) else content)
    if role in {"system", "developer"}:
        return SystemMessage(content=text, parts=parts)
    if role == "assistant":
        return AssistantMessage(content=text, parts=parts)
    if role in {"tool", "function"}:
        tool_call_id = as_str(entry.get(TOOL_CALL_ID))
        return ToolMessage(content=text, parts=parts, tool_call_id=tool_call_id)
    if role == "user":
        return UserMessage(content=text, parts=parts)
    return None if not (text or parts) else UserMessage(content=text, parts=parts)


def _tool_calls(entry: Mapping[str, Any]) -> list[ToolCall]:
    calls = [
        tool_call(c.get("id"), c.get("name"), c.get("arguments"))
        for c in indexed(entry, TOOL_CALLS_PREFIX)
        if c.get("name")
    ]
    if not calls and entry.get(FUNCTION_CALL_NAME):
        calls = [tool_call(None, entry[FUNCTION_CALL_NAME], entry.get(FUNCTION_CALL_ARGUMENTS))]
    return calls


def _openai_tool_calls(content: Any) -> list[ToolCall]:
    """Tool calls written as an OpenAI ``tool_calls`` JSON list into ``content`` (Koog)."""
    if not isinstance(content, list) or not content:
        return []
    calls = []
    for item in content:
        function = item.get("function") if isinstance(item, Mapping) else None
        if not isinstance(function, Mapping) or not function.get("name"):
            return []
        calls.append(tool_call(item.get("id"), function["name"], function.get("arguments")))
    return calls


def _entity_tool(attributes: Mapping[str, Any]) -> ToolExecution:
    raw_input = maybe_json(attributes.get(ENTITY_INPUT))
    arguments = raw_input
    if isinstance(raw_input, Mapping) and set(raw_input) <= {"args", "kwargs", "inputs"}:
        kwargs, args = raw_input.get("kwargs"), raw_input.get("args")
        arguments = kwargs if kwargs or not args else raw_input
    output = maybe_json(attributes.get(ENTITY_OUTPUT))
    message = langchain_tool_message(output)  # LangChain's ToolMessage, as sent to the model
    if message is not None:
        content, call_id = message
        return tool_execution(attributes.get(ENTITY_NAME), call_id, arguments, content)
    return tool_execution(attributes.get(ENTITY_NAME), None, arguments, output)
