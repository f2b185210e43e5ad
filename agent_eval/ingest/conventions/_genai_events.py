"""GenAI messages recorded as events: v1.26 prompt/completion events, v1.28-v1.36 message events.

The events arrive as OTLP log records joined to their span (the SDK's event API) or as span
events (some libraries). Both are reduced here to ``(name, body)`` pairs and read in order:
``gen_ai.system.message`` / ``user`` / ``assistant`` / ``tool`` events are the call's inputs,
``gen_ai.choice`` events its outputs (the lowest ``index`` kept when there are several choices),
``gen_ai.content.prompt`` / ``gen_ai.content.completion`` carry whole JSON message lists. Keys are
in :mod:`agent_eval.ingest.conventions._genai_keys`.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from typing import Any

from agent_eval._trace import AssistantMessage, Message, ToolMessage
from agent_eval.ingest._spans import LogRecord, SpanEvent
from agent_eval.ingest.conventions import _genai_keys as k
from agent_eval.ingest.conventions._messages import (
    decode_json,
    message_from_mapping,
    messages_from_value,
    read_message,
)

__all__ = [
    "EventBody",
    "details_attributes",
    "event_bodies",
    "is_genai_event",
    "messages_from_events",
]

EventBody = tuple[str, Mapping[str, Any]]
"""An event name and its body (log record body, or span-event attributes)."""

_NESTED_FIELDS = ("message", "tool_calls")


def is_genai_event(name: str) -> bool:
    """Whether an event/log name is one of the GenAI message events this module reads."""
    return name in k.MESSAGE_EVENT_ROLES or name in (
        k.CHOICE_EVENT,
        k.CONTENT_PROMPT_EVENT,
        k.CONTENT_COMPLETION_EVENT,
        k.INFERENCE_DETAILS_EVENT,
    )


def details_attributes(
    events: Sequence[SpanEvent], logs: Sequence[LogRecord]
) -> list[Mapping[str, Any]]:
    """Attributes of the v1.37 ``gen_ai.client.inference.operation.details`` events, in order."""
    found: list[Mapping[str, Any]] = [
        e.attributes for e in events if e.name == k.INFERENCE_DETAILS_EVENT
    ]
    found.extend(log.attributes for log in logs if log.event_name == k.INFERENCE_DETAILS_EVENT)
    return found


def event_bodies(events: Sequence[SpanEvent], logs: Sequence[LogRecord]) -> list[EventBody]:
    """The GenAI events of a span, span events first, then log records in time order."""
    bodies = [(e.name, _span_event_body(e)) for e in events if is_genai_event(e.name)]
    ordered = sorted(logs, key=lambda log: log.time_unix_nano)
    bodies.extend((log.event_name, _log_body(log)) for log in ordered)
    return [b for b in bodies if is_genai_event(b[0])]


def _span_event_body(event: SpanEvent) -> Mapping[str, Any]:
    attrs = event.attributes
    whole = decode_json(attrs.get(k.EVENT_CONTENT_ATTRIBUTE))
    if isinstance(whole, Mapping):
        return whole
    return {key: decode_json(v) if key in _NESTED_FIELDS else v for key, v in attrs.items()}


def _log_body(log: LogRecord) -> Mapping[str, Any]:
    body = decode_json(log.body)
    if isinstance(body, Mapping):
        return body
    if isinstance(body, str):
        return {"content": body}
    return dict(log.attributes)


def messages_from_events(
    bodies: Iterable[EventBody], notes: list[str] | None = None
) -> tuple[list[Message], list[Message]]:
    """Read ``(inputs, outputs)`` from GenAI event bodies in recorded order.

    With ``notes`` given, a message event whose role is unknown is left out and noted there
    (its position among the span's events named); the other events are still read.

    Raises:
        ValueError: a message body with an unknown role (only when ``notes`` is ``None``).

    """
    inputs: list[Message] = []
    outputs: list[Message] = []
    choices: list[tuple[int, Message]] = []
    for index, (name, body) in enumerate(bodies):
        if name in k.MESSAGE_EVENT_ROLES:
            try:
                inputs.extend(read_message(body, k.MESSAGE_EVENT_ROLES[name]))
            except ValueError as exc:
                if notes is None:
                    raise
                notes.append(f"event {index} ({name}) left out: {exc}")
        elif name == k.CHOICE_EVENT:
            choices.append(_choice(body))
        elif name == k.CONTENT_PROMPT_EVENT:
            inputs.extend(
                messages_from_value(body.get(k.PROMPT), "user", notes=notes, where=k.PROMPT)
            )
        elif name == k.CONTENT_COMPLETION_EVENT:
            outputs.extend(
                messages_from_value(
                    body.get(k.COMPLETION), "assistant", notes=notes, where=k.COMPLETION
                )
            )
    if choices:
        outputs.append(min(choices, key=lambda c: c[0])[1])
    return _substantial(inputs), _substantial(outputs)


def _choice(body: Mapping[str, Any]) -> tuple[int, Message]:
    """A ``gen_ai.choice`` body: ``message`` a mapping (semconv), a string, or content blocks.

    ``tool_calls`` may sit inside ``message`` or beside it (the semconv YAML model puts
    ``message.tool_calls``; several libraries write ``tool_calls`` at the top of the body):
    either way they are the choice's calls.
    """
    message = decode_json(body.get(k.BODY_MESSAGE))
    if isinstance(message, str | list):  # Strands: the text, or Converse content blocks
        message = {"content": message}
    if not isinstance(message, Mapping):
        message = {key: v for key, v in body.items() if key in ("content", "tool_calls")}
    elif "tool_calls" not in message and body.get("tool_calls") is not None:
        message = {**message, "tool_calls": body["tool_calls"]}
    index = body.get(k.BODY_INDEX, 0)
    return (index if isinstance(index, int) else 0), message_from_mapping(message, "assistant")


def _substantial(messages: list[Message]) -> list[Message]:
    """Drop messages recorded without content (content capture off): nothing to evaluate."""
    return [m for m in messages if _has_substance(m)]


def _has_substance(message: Message) -> bool:
    if message.content or message.parts:
        return True
    if isinstance(message, AssistantMessage):
        return bool(message.tool_calls) or bool(message.reasoning)
    return isinstance(message, ToolMessage) and message.tool_call_id is not None
