"""The OpenTelemetry GenAI semantic conventions, v1.26 through v1.37+ (convention ``genai``).

Reads, per span (keys and versions in :mod:`~agent_eval.ingest.conventions._genai_keys`):

- messages from the v1.37+ attributes ``gen_ai.system_instructions``, ``gen_ai.input.messages``
  and ``gen_ai.output.messages`` (JSON strings, or already structured values), on the span or on
  a ``gen_ai.client.inference.operation.details`` span event or log record;
- else from the v1.26 ``gen_ai.prompt`` / ``gen_ai.completion`` attributes (on the span or on its
  ``gen_ai.content.*`` events);
- else from the v1.28-v1.36 per-message events, as span events or as the OTLP log records the
  assembler joined to the span by trace and span id
  (:mod:`~agent_eval.ingest.conventions._genai_events`);
- ``execute_tool`` spans as a :class:`ToolExecution` (``gen_ai.tool.*``);
- ``gen_ai.agent.name``, ``gen_ai.conversation.id``, the response (else request) model and the
  usage attributes (current and pre-v1.27 names).

Tool-call arguments are parsed JSON; a string that is not valid JSON is kept verbatim in
``raw_arguments``. Message parts other than text, tool calls, tool responses and reasoning are
kept as :class:`~agent_eval._trace.OpaquePart`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from itertools import repeat
from typing import Any, ClassVar

import orjson

from agent_eval._trace import AssistantMessage, Message, SystemMessage, ToolMessage
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._extraction import (
    SpanExtraction,
    SpanKind,
    ToolExecution,
    new_span_extraction,
)
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions import _genai_keys as k
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._content_parts import is_text_part
from agent_eval.ingest.conventions._genai_events import (
    details_attributes,
    event_bodies,
    messages_from_events,
)
from agent_eval.ingest.conventions._messages import (
    decode_json,
    messages_from_value,
    parse_arguments,
    text_of,
    to_json_value,
    tool_call,
)
from agent_eval.ingest.conventions._text_hints import AUTOGEN_SYSTEM, AUTOGEN_TRACING_HINT

__all__ = ["GenAIConvention", "conversation_id", "tool_execution"]

Messages = tuple[list[Message], list[Message]]
_CONVERSATION_ID_KEYS = (k.CONVERSATION_ID, *k.CONVERSATION_ID_FALLBACKS)


class GenAIConvention(Convention):
    """OTel GenAI semantic conventions v1.26-v1.37+ (events, log records and JSON attributes)."""

    name: ClassVar[str] = "genai"
    semconv: ClassVar[str] = "OpenTelemetry GenAI semantic conventions v1.26-v1.37"
    priority: ClassVar[int] = 50
    triggers: ClassVar[frozenset[str]] = markers_of(k.PREFIX)

    def detect(self, span: SpanRecord) -> bool:
        """Whether any attribute or event name is in the ``gen_ai.`` namespace."""
        if any(map(str.startswith, span.attributes, repeat(k.PREFIX))):  # one C-level pass
            return True
        return any(event.name.startswith(k.PREFIX) for event in span.events)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """Read messages, tool run, agent, conversation, model and usage from one span.

        A message with an unknown role is left out with a note (the trace's notes name the
        span, the attribute or event, and the role); the rest of the span is kept.

        Raises:
            InvalidSpanError: a non-integer token count, messages that cannot be read at all, or
                a span whose only messages were left out (nothing else is usable).

        """
        attrs = span.attributes
        notes: list[str] = []
        try:
            inputs, outputs = _messages(span, logs, notes)
        except ValueError as exc:
            raise InvalidSpanError(str(exc), trace_id=span.trace_id, span_id=span.span_id) from exc
        kind = _kind(attrs, bool(inputs or outputs))
        tool = None
        if kind == "tool":
            # Strands writes an execute_tool span's call and result as role-"tool" messages
            # (events or attributes): they describe the run, they are not conversation turns.
            events = event_bodies(span.events, logs) if span.events or logs else ()
            tool = tool_execution(attrs, inputs, outputs, events)
            inputs, outputs = [], []
        model = _str(attrs.get(k.RESPONSE_MODEL)) or _str(attrs.get(k.REQUEST_MODEL))
        input_tokens = _tokens(span, k.USAGE_INPUT_TOKENS, k.USAGE_PROMPT_TOKENS)
        output_tokens = _tokens(span, k.USAGE_OUTPUT_TOKENS, k.USAGE_COMPLETION_TOKENS)
        empty = not (inputs or outputs or tool)  # SpanExtraction.is_empty of what is built
        if empty and notes:
            # nothing but unreadable messages: the span is invalid, with what was wrong
            raise InvalidSpanError("; ".join(notes), trace_id=span.trace_id, span_id=span.span_id)
        return new_span_extraction(
            self.name,
            kind,
            tuple(inputs),
            tuple(outputs),
            tool,
            _str(attrs.get(k.AGENT_NAME)),
            conversation_id(attrs),
            model,
            input_tokens,
            output_tokens,
            None,  # retrieval_query
            (),  # documents
            "no_genai_content" if empty else None,  # ignored_reason
            tuple(f"span {span.span_id}: {note}" for note in notes) if notes else (),
            text_hint=AUTOGEN_TRACING_HINT if attrs.get(k.SYSTEM) == AUTOGEN_SYSTEM else None,
        )


def conversation_id(attrs: Mapping[str, Any]) -> str | None:
    """``gen_ai.conversation.id``, else the first of ``genai_keys.CONVERSATION_ID_FALLBACKS``."""
    for key in _CONVERSATION_ID_KEYS:
        found = _str(attrs.get(key))
        if found is not None:
            return found
    return None


def _messages(span: SpanRecord, logs: Sequence[LogRecord], notes: list[str]) -> Messages:
    attrs = span.attributes
    inputs, outputs = _v137_messages(attrs, notes)
    events = span.events
    if not (inputs or outputs) and (events or logs):
        # v1.37 details events: one event may hold all three attributes, or (Strands) each
        # event one of them; every event of the span is read, in order.
        for source in details_attributes(events, logs):
            more_inputs, more_outputs = _v137_messages(source, notes)
            inputs += more_inputs
            outputs += more_outputs
    if not inputs:
        inputs = messages_from_value(attrs.get(k.PROMPT), "user", notes=notes, where=k.PROMPT)
    if not outputs:
        outputs = messages_from_value(
            attrs.get(k.COMPLETION), "assistant", notes=notes, where=k.COMPLETION
        )
    if outputs and k.LITELLM_FUNCTION_CALL_NAME.format(0) in attrs:
        outputs = _litellm_calls(attrs, outputs)
    if inputs or outputs or not (events or logs):
        return inputs, outputs
    return messages_from_events(event_bodies(events, logs), notes)


def _litellm_calls(attrs: Mapping[str, Any], outputs: list[Message]) -> list[Message]:
    """LiteLLM's reply with its tool calls, which its ``gen_ai.output.messages`` leaves out.

    LiteLLM's OpenTelemetry callback writes a tool-calling reply as an assistant message with no
    parts, and each call as ``gen_ai.completion.{i}.function_call.name`` / ``.arguments``
    (no call id; the next call's input replays them with their ids).
    """
    reply = outputs[0] if len(outputs) == 1 else None
    if not isinstance(reply, AssistantMessage) or reply.tool_calls or reply.content:
        return outputs  # (keys left from an earlier call on the same span: not this reply's)
    calls = []
    index = 0
    while (name := attrs.get(k.LITELLM_FUNCTION_CALL_NAME.format(index))) is not None:
        arguments = attrs.get(k.LITELLM_FUNCTION_CALL_ARGUMENTS.format(index))
        calls.append(tool_call(name, arguments))
        index += 1
    return [reply.model_copy(update={"tool_calls": tuple(calls)})]


def _v137_messages(attrs: Mapping[str, Any], notes: list[str]) -> Messages:
    inputs = messages_from_value(
        attrs.get(k.INPUT_MESSAGES), "user", notes=notes, where=k.INPUT_MESSAGES
    )
    outputs = messages_from_value(
        attrs.get(k.OUTPUT_MESSAGES), "assistant", notes=notes, where=k.OUTPUT_MESSAGES
    )
    return _with_instructions(attrs.get(k.SYSTEM_INSTRUCTIONS), inputs), outputs


def _with_instructions(value: Any, inputs: list[Message]) -> list[Message]:
    if value is None:
        return inputs
    value = decode_json(value)
    if value is None or value in ("", []):
        return inputs
    text = text_of(value)
    if inputs and isinstance(inputs[0], SystemMessage) and inputs[0].content == text:
        return inputs
    return [SystemMessage(content=text), *inputs]


def _kind(attrs: Mapping[str, Any], has_messages: bool) -> SpanKind:
    operation = attrs.get(k.OPERATION_NAME)
    if not isinstance(operation, str):
        operation = None
    if operation in k.LLM_OPERATIONS:
        return "llm"
    if operation in k.TOOL_OPERATIONS or (operation is None and k.TOOL_NAME in attrs):
        return "tool"
    if operation in k.AGENT_OPERATIONS:
        return "agent"
    if has_messages:
        return "llm"
    return "other"


def tool_execution(
    attrs: Mapping[str, Any],
    inputs: Sequence[Message] = (),
    outputs: Sequence[Message] = (),
    events: Sequence[tuple[str, Mapping[str, Any]]] = (),
) -> ToolExecution:
    """An ``execute_tool`` span's run: the ``gen_ai.tool.*`` attributes, else its messages.

    Without ``gen_ai.tool.call.arguments`` / ``result``, the run is read from what the span
    recorded as messages (Strands): a ``tool_call`` part in the input (arguments) and a
    ``tool_call_response`` part in the output (result), or, in the v1.28-v1.36 event form, a
    ``gen_ai.tool.message`` event whose ``content`` holds the arguments and a ``gen_ai.choice``
    event whose ``message`` holds the result.
    """
    raw_args = attrs.get(k.TOOL_CALL_ARGUMENTS, attrs.get(k.TOOL_INPUT_FALLBACK))
    result = attrs.get(k.TOOL_CALL_RESULT, attrs.get(k.TOOL_OUTPUT_FALLBACK))
    call_id = _str(attrs.get(k.TOOL_CALL_ID))
    if raw_args is None:
        calls = [c for m in inputs if isinstance(m, AssistantMessage) for c in m.tool_calls or ()]
        if calls:
            raw_args = orjson.dumps(calls[0].arguments).decode()
            call_id = call_id or calls[0].id
        else:
            raw_args = next((b.get("content") for n, b in events if n == k.TOOL_MESSAGE_EVENT),
                            None)  # fmt: skip
    if result is None:
        results = [m for m in outputs if isinstance(m, ToolMessage)]
        if results:
            result = results[0].content
        else:
            result = next((b.get(k.BODY_MESSAGE) for n, b in events if n == k.CHOICE_EVENT), None)
            result = decode_json(result)
    arguments, raw = parse_arguments(raw_args)
    return ToolExecution(
        name=_str(attrs.get(k.TOOL_NAME)),
        call_id=call_id,
        arguments=arguments,
        raw_arguments=raw,
        result=None if result is None else _result_text(result),
    )


def _result_text(value: Any) -> str:
    if isinstance(value, str):
        decoded = decode_json(value)
        if isinstance(decoded, list) and decoded and all(is_text_part(p) for p in decoded):
            return text_of(decoded)  # a JSON list of text blocks (Strands)
        return _unquoted(value)
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, list) and value and all(is_text_part(p) for p in value):
        return text_of(value)  # a list of text parts (MCP-style content)
    return orjson.dumps(to_json_value(value)).decode()


def _unquoted(text: str) -> str:
    """A result written as a JSON string literal as its text; any other string verbatim.

    Microsoft Agent Framework JSON-encodes string tool results, so ``gen_ai.tool.call.result``
    holds a quoted literal (with JSON escapes) rather than the text.
    """
    if len(text) >= 2 and text[0] == text[-1] == '"':
        try:
            decoded = safe_json_loads(text)
        except orjson.JSONDecodeError:
            return text
        if isinstance(decoded, str):
            return decoded
    return text


def _tokens(span: SpanRecord, key: str, old_key: str) -> int | None:
    attrs = span.attributes
    value = attrs.get(key, _ABSENT)
    if value is _ABSENT:
        value = attrs.get(old_key)
    if value is None or type(value) is int:  # absent, or the usual exact int
        return value
    try:
        if isinstance(value, bool | bytes):
            raise TypeError(type(value).__name__)
        return int(value)
    except (TypeError, ValueError, OverflowError):
        raise InvalidSpanError(
            f"{key} must be an integer token count, got {brief(value)}",
            trace_id=span.trace_id,
            span_id=span.span_id,
        ) from None


_ABSENT: Any = object()


def _str(value: Any) -> str | None:
    if type(value) is str:  # the usual case: str(value) is value, "" is the only empty one
        return value or None
    return None if value in (None, "") else str(value)
