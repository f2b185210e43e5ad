"""Spans the Langfuse SDK writes itself: ``langfuse.observation.*`` (Langfuse Python SDK >= 3).

The Langfuse SDK is built on OpenTelemetry: its observations (``start_as_current_observation``,
``@observe``, the ``langfuse.openai`` drop-in client) are spans it sends over OTLP/HTTP to
``/api/public/otel/v1/traces``, a span exporter like any other. Recorded from langfuse 5.2
(``fixtures/langfuse/``), a generation span carries:

- ``langfuse.observation.type``: ``generation`` (also ``agent``, ``tool``, ``span``, ``chain``,
  ``retriever``, ``event``...);
- ``langfuse.observation.input``: JSON; for ``langfuse.openai`` the request, ``{"messages":
  [...], "tools": [...]}`` (OpenAI chat messages), else whatever the caller passed (a message
  list, one message, text);
- ``langfuse.observation.output``: JSON; one assistant message (``{"role", "content",
  "tool_calls"}``), a list of them, or text;
- ``langfuse.observation.model.name`` and ``langfuse.observation.usage_details`` (JSON:
  ``input``/``output``, or OpenAI's ``prompt_tokens``/``completion_tokens``);
- ``session.id`` from ``propagate_attributes(session_id=...)`` (``langfuse.session.id`` on
  older SDKs) as the conversation id.

``agent`` observations name the agent (the span name); ``tool`` observations are tool runs (span
name, ``input`` as arguments, ``output`` as result). Once such spans reach a Langfuse server,
its export holds them as native observations (the ``langfuse`` container reads those).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agent_eval._trace import Message
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._extraction import SpanExtraction, SpanKind
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._messages import messages_from_value
from agent_eval.ingest.conventions._values import (
    as_int,
    as_str,
    first,
    maybe_json,
    tool_execution,
)

__all__ = ["LangfuseSDKConvention"]

TYPE = "langfuse.observation.type"
INPUT = "langfuse.observation.input"
OUTPUT = "langfuse.observation.output"
MODEL = "langfuse.observation.model.name"
USAGE = "langfuse.observation.usage_details"
SESSION_KEYS = ("session.id", "langfuse.session.id")
INPUT_USAGE_KEYS = ("input", "prompt_tokens", "input_tokens")
OUTPUT_USAGE_KEYS = ("output", "completion_tokens", "output_tokens")

_KINDS: dict[str, SpanKind] = {
    "generation": "llm",
    "agent": "agent",
    "tool": "tool",
    "retriever": "retriever",
    "chain": "chain",
}


class LangfuseSDKConvention(Convention):
    """Reads the Langfuse SDK's own observation spans (``langfuse.observation.type``)."""

    name: ClassVar[str] = "langfuse-sdk"
    semconv: ClassVar[str] = "Langfuse SDK observation attributes (langfuse.observation.*), v3-v5"
    priority: ClassVar[int] = 55
    triggers: ClassVar[frozenset[str]] = markers_of(TYPE)

    def detect(self, span: SpanRecord) -> bool:
        """A ``langfuse.observation.type`` attribute."""
        return isinstance(span.attributes.get(TYPE), str)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """A generation's messages, model and usage; an agent's name; a tool's run.

        Raises:
            InvalidSpanError: a message in the input or output has an unknown role.

        """
        attributes = span.attributes
        kind = _KINDS.get(str(attributes[TYPE]).lower(), "other")
        common: dict[str, Any] = {
            "convention": self.name,
            "conversation_id": as_str(first(attributes, SESSION_KEYS)),
        }
        inputs, outputs = maybe_json(attributes.get(INPUT)), maybe_json(attributes.get(OUTPUT))
        if kind == "agent":
            return SpanExtraction(kind="agent", agent_name=as_str(span.name), **common)
        if kind == "tool":
            tool = tool_execution(span.name, None, inputs, outputs)
            return SpanExtraction(kind="tool", tool=tool, **common)
        if kind != "llm":
            return SpanExtraction(kind=kind, ignored_reason="no_genai_content", **common)
        usage = maybe_json(attributes.get(USAGE))
        usage = usage if isinstance(usage, Mapping) else {}
        in_messages = _messages(span, INPUT, inputs, "user")
        out_messages = _messages(span, OUTPUT, outputs, "assistant")
        return SpanExtraction(
            kind="llm",
            input_messages=in_messages,
            output_messages=out_messages[:1],
            model=as_str(attributes.get(MODEL)),
            input_tokens=as_int(first(usage, INPUT_USAGE_KEYS)),
            output_tokens=as_int(first(usage, OUTPUT_USAGE_KEYS)),
            ignored_reason=None if in_messages or out_messages else "no_message_content",
            **common,
        )


def _messages(span: SpanRecord, key: str, value: Any, role: str) -> tuple[Message, ...]:
    if value is None:
        return ()
    try:
        return tuple(messages_from_value(value, role))
    except ValueError as exc:
        raise InvalidSpanError(f"{key}: {exc}", span_id=span.span_id) from None
