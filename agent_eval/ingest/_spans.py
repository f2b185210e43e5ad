"""Our own typed span and log record: the one shape every container decodes into.

Containers (OTLP/JSON, OTLP/protobuf, the SDK exporter, Jaeger, Tempo, Langfuse...) convert
their foreign shapes into :class:`SpanRecord` and :class:`LogRecord` once, at the edge; nothing
after ingest sees a foreign type. These are slotted frozen dataclasses rather than pydantic models
because ingest builds millions of them; validation of ids and types happens in the decoders.

Conventions follow the OpenTelemetry data model (trace spec, OTLP 1.x): ids are lowercase hex
(trace 32, span 16 characters); times are Unix nanoseconds; attribute values are str, bool,
int, float, bytes, homogeneous lists of those, or (OTLP ``kvlistValue``) nested mappings.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from typing import Any, TypeAlias

__all__ = [
    "AttributeValue",
    "Attributes",
    "LogRecord",
    "SourceLocation",
    "SpanEvent",
    "SpanRecord",
    "new_span_record",
]

AttributeValue: TypeAlias = Any
"""A decoded OTLP AnyValue: str | bool | int | float | bytes | None | list | dict."""

Attributes: TypeAlias = Mapping[str, AttributeValue]


@dataclass(frozen=True, slots=True)
class SourceLocation:
    """Where a span or record was read from: a file and, for JSON Lines, a 1-based line."""

    path: str
    line: int | None = None

    def __str__(self) -> str:
        return self.path if self.line is None else f"{self.path}:{self.line}"


@dataclass(frozen=True, slots=True)
class SpanEvent:
    """A span event (OTLP ``Span.Event``): name, time in Unix ns, attributes."""

    name: str
    time_unix_nano: int = 0
    attributes: Attributes = field(default_factory=dict)


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanRecord:
    """One finished span, decoded.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters.
        parent_span_id: 16 hex, or ``None`` for a root span.
        name: The span name.
        kind: ``"INTERNAL"``, ``"SERVER"``, ``"CLIENT"``, ``"PRODUCER"``, ``"CONSUMER"`` or
            ``"UNSPECIFIED"``.
        start_time_unix_nano / end_time_unix_nano: Unix nanoseconds.
        attributes: Span attributes, decoded (kvlists become dicts).
        events: Span events in recorded order.
        status_code: ``"UNSET"``, ``"OK"`` or ``"ERROR"``.
        status_message: The status description.
        resource: Resource attributes (``service.name``...).
        scope_name / scope_version: The instrumentation scope.
        source: File (and line) the span was read from.

    """

    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    name: str = ""
    kind: str = "INTERNAL"
    start_time_unix_nano: int = 0
    end_time_unix_nano: int = 0
    attributes: Attributes = field(default_factory=dict)
    events: tuple[SpanEvent, ...] = ()
    status_code: str = "UNSET"
    status_message: str = ""
    resource: Attributes = field(default_factory=dict)
    scope_name: str = ""
    scope_version: str = ""
    source: SourceLocation | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LogRecord:
    """One OTLP log record; GenAI events (semconv v1.28-1.36) arrive as these.

    Attributes:
        event_name: The event name (``LogRecord.event_name``, or the ``event.name`` attribute
            older SDKs wrote), e.g. ``"gen_ai.user.message"``.
        trace_id / span_id: The span the event belongs to (hex), when the record carried them.
        time_unix_nano: Record time (or observed time when time is unset), Unix ns.
        body: The decoded body (usually a mapping for GenAI events).
        attributes: Record attributes.
        resource: Resource attributes.
        source: File (and line) it was read from.

    """

    event_name: str
    trace_id: str | None = None
    span_id: str | None = None
    time_unix_nano: int = 0
    body: AttributeValue = None
    attributes: Attributes = field(default_factory=dict)
    resource: Attributes = field(default_factory=dict)
    source: SourceLocation | None = None


_new = object.__new__
(
    _set_trace_id,
    _set_span_id,
    _set_parent_span_id,
    _set_name,
    _set_kind,
    _set_start,
    _set_end,
    _set_attributes,
    _set_events,
    _set_status_code,
    _set_status_message,
    _set_resource,
    _set_scope_name,
    _set_scope_version,
    _set_source,
) = (getattr(SpanRecord, f.name).__set__ for f in fields(SpanRecord))


def new_span_record(  # noqa: PLR0917  (one argument per field, positional for speed)
    trace_id: str,
    span_id: str,
    parent_span_id: str | None,
    name: str,
    kind: str,
    start_time_unix_nano: int,
    end_time_unix_nano: int,
    attributes: Attributes,
    events: tuple[SpanEvent, ...],
    status_code: str,
    status_message: str,
    resource: Attributes,
    scope_name: str,
    scope_version: str,
    source: SourceLocation | None,
) -> SpanRecord:
    """A :class:`SpanRecord` equal to ``SpanRecord(...)`` of the same fields, built faster.

    For decoders that build one per span (the OTLP containers): the frozen dataclass
    ``__init__`` sets each of the 15 slots through ``object.__setattr__`` and parses keyword
    arguments, about 3x the cost of setting the slots directly. The arguments are the fields in
    declaration order; no checks are made (the decoders have validated the values).
    """
    record = _new(SpanRecord)
    _set_trace_id(record, trace_id)
    _set_span_id(record, span_id)
    _set_parent_span_id(record, parent_span_id)
    _set_name(record, name)
    _set_kind(record, kind)
    _set_start(record, start_time_unix_nano)
    _set_end(record, end_time_unix_nano)
    _set_attributes(record, attributes)
    _set_events(record, events)
    _set_status_code(record, status_code)
    _set_status_message(record, status_message)
    _set_resource(record, resource)
    _set_scope_name(record, scope_name)
    _set_scope_version(record, scope_version)
    _set_source(record, source)
    return record
