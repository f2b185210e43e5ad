"""LiteLLM's own OpenTelemetry callback: the ``raw_gen_ai_request`` span (convention ``litellm``).

Follows what ``litellm.integrations.opentelemetry.OpenTelemetry`` (litellm 1.7x-1.11x) writes.
For each call it records a ``litellm_request`` span (or, when the application has a span of its
own current, the same attributes written onto that span) with GenAI
``gen_ai.input.messages`` / ``gen_ai.output.messages`` (read by the ``genai`` convention), whose
reply leaves tool calls out: they are flattened into ``gen_ai.completion.{i}.function_call.*``
without their call ids. Beneath it, a ``raw_gen_ai_request`` span holds the provider's raw
request and response as **Python reprs** of the dicts LiteLLM sent and received:

- ``llm.{provider}.messages``: the request's chat messages (OpenAI shape, tool calls and
  ``tool_call_id`` included);
- ``llm.{provider}.choices``: the response's choices (``[{"message": {"role", "content",
  "tool_calls": [{"id", "function": {"name", "arguments"}}]}}]``);
- ``llm.{provider}.model``: the response model.

This convention reads that span as the LLM call it is, ids and all; the reprs are parsed with
:func:`ast.literal_eval` (literals only, never code). Keys are named below.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any, ClassVar, Final

from agent_eval._trace import Message
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._messages import message_from_mapping, messages_from_value

__all__ = ["LiteLLMConvention"]

SCOPE: Final = "litellm"
"""The instrumentation scope (tracer name) of LiteLLM's callback (``OTEL_TRACER_NAME``)."""
RAW_SPAN_NAME: Final = "raw_gen_ai_request"
PREFIX: Final = "llm."
MESSAGES_SUFFIX: Final = ".messages"
CHOICES_SUFFIX: Final = ".choices"
MODEL_SUFFIX: Final = ".model"
MAX_REPR_CHARS: Final = 8 * 1024 * 1024
"""Longer reprs are not parsed (the call is then read from its ``litellm_request`` span)."""


class LiteLLMConvention(Convention):
    """The raw request/response span of LiteLLM's OpenTelemetry callback."""

    name: ClassVar[str] = "litellm"
    semconv: ClassVar[str] = (
        "LiteLLM OpenTelemetry callback (litellm 1.7x-1.11x raw_gen_ai_request)"
    )
    priority: ClassVar[int] = 40
    triggers: ClassVar[frozenset[str]] = markers_of(PREFIX)

    def detect(self, span: SpanRecord) -> bool:
        """A ``raw_gen_ai_request`` span with ``llm.{provider}.messages``."""
        return span.name == RAW_SPAN_NAME and _provider(span.attributes) is not None

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """The call's request messages and reply, read from the provider's raw reprs."""
        attrs = span.attributes
        provider = _provider(attrs) or ""
        base = f"{PREFIX}{provider}"
        notes: list[str] = []
        inputs = messages_from_value(
            _literal(attrs.get(base + MESSAGES_SUFFIX)), "user", notes=notes, where=base
        )
        outputs = _choices(_literal(attrs.get(base + CHOICES_SUFFIX)))
        model = attrs.get(base + MODEL_SUFFIX)
        return SpanExtraction(
            convention=self.name,
            kind="llm",
            input_messages=tuple(inputs),
            output_messages=tuple(outputs),
            model=model if isinstance(model, str) and model else None,
            notes=tuple(f"span {span.span_id}: {note}" for note in notes),
            ignored_reason=None if inputs or outputs else "no_message_content",
        )


def _provider(attrs: Mapping[str, Any]) -> str | None:
    for key in attrs:
        if key.startswith(PREFIX) and key.endswith(MESSAGES_SUFFIX):
            provider = key[len(PREFIX) : -len(MESSAGES_SUFFIX)]
            if provider and "." not in provider:
                return provider
    return None


def _literal(value: Any) -> Any:
    """A Python-repr attribute as its value; anything unreadable gives ``None``."""
    if not isinstance(value, str) or len(value) > MAX_REPR_CHARS:
        return None
    try:
        return ast.literal_eval(value)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return None


def _choices(value: Any) -> list[Message]:
    if not isinstance(value, list) or not value or not isinstance(value[0], Mapping):
        return []
    message = value[0].get("message")
    if not isinstance(message, Mapping):
        return []
    try:
        return [message_from_mapping(message, "assistant")]
    except ValueError:
        return []
