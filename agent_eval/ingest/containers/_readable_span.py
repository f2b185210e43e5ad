"""OpenTelemetry JS ``ReadableSpan`` JSON dumps (``JSON.stringify(span)`` and console exports).

Two shapes of the JS SDK (``@opentelemetry/sdk-trace-base`` 1.x and 2.x) are read, one span per
record (a JSON array, one object, or JSON Lines):

- a serialised ``ReadableSpan``: ``spanContext`` (or the private ``_spanContext``) with
  ``traceId``/``spanId``, ``parentSpanId`` (1.x) or ``parentSpanContext.spanId`` (2.x),
  ``startTime``/``endTime`` as ``[seconds, nanoseconds]`` hrtime tuples, ``kind``,
  ``status: {code, message}``, ``attributes``, ``events: [{name, time, attributes}]``,
  ``resource`` (``attributes`` or ``_attributes``) and ``instrumentationScope`` (2.x) or
  ``instrumentationLibrary`` (1.x);
- ``ConsoleSpanExporter`` output: ``traceId``, ``id``, ``parentId`` or ``parentSpanContext``,
  ``timestamp`` and ``duration`` in microseconds.

``kind`` uses the JS ``SpanKind`` enum (INTERNAL 0, SERVER 1, CLIENT 2, PRODUCER 3, CONSUMER 4),
which is numbered differently from OTLP's; ``status.code`` uses ``SpanStatusCode`` (UNSET 0,
OK 1, ERROR 2).
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers._records import as_list, as_mapping, read_records

__all__ = ["ReadableSpanContainer", "hrtime_to_nanos"]

JS_SPAN_KINDS = ("INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
"""``@opentelemetry/api`` ``SpanKind`` by number."""
JS_STATUS_CODES = ("UNSET", "OK", "ERROR")
"""``@opentelemetry/api`` ``SpanStatusCode`` by number."""
US_TO_NS = 1000


class ReadableSpanContainer(builtin.ReadableSpan):
    """Reads OTel JS ``ReadableSpan`` / ``ConsoleSpanExporter`` JSON dumps."""

    def sniff(self, path: str, head: bytes) -> bool:
        """A ``spanContext`` object, or console spans (``traceId``, ``id``, ``duration``)."""
        if b'"resourceSpans"' in head:
            return False
        if b'"spanContext"' in head or b'"_spanContext"' in head:
            return True
        return b'"traceId"' in head and b'"duration"' in head and b'"id"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one span per record.

        Raises:
            DecodeError: the file is neither JSON nor JSON Lines.

        """
        for item in read_records(path, list_keys=("spans", "data")):
            if isinstance(item, Skipped):
                yield item
            else:
                yield _span(item[1], SourceLocation(path, item[0]))


def _span(raw: Any, source: SourceLocation) -> SpanRecord | Skipped:
    if not isinstance(raw, Mapping):
        return Skipped(reason="invalid_span", detail="record is not an object", source=source)
    context = raw.get("spanContext") or raw.get("_spanContext") or {}
    context = context if isinstance(context, Mapping) else {}
    trace_id = normalize_id(context.get("traceId") or raw.get("traceId"), TRACE_ID_HEX)
    span_id = normalize_id(context.get("spanId") or raw.get("id"), SPAN_ID_HEX)
    if trace_id is None or span_id is None:
        return Skipped(
            reason="invalid_trace_id" if trace_id is None else "invalid_span_id",
            detail="span has no hex traceId/spanId in spanContext (or traceId/id)",
            source=source,
            trace_id=trace_id,
            span_id=span_id,
        )
    start, end = _times(raw)
    status = raw.get("status")
    status = status if isinstance(status, Mapping) else {}
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_parent(raw),
        name=str(raw.get("name") or ""),
        kind=_enum(raw.get("kind"), JS_SPAN_KINDS, "INTERNAL"),
        start_time_unix_nano=start,
        end_time_unix_nano=end,
        attributes=as_mapping(raw.get("attributes")),
        events=tuple(_event(e) for e in as_list(raw.get("events")) if isinstance(e, Mapping)),
        status_code=_enum(status.get("code"), JS_STATUS_CODES, "UNSET"),
        status_message=str(status.get("message") or ""),
        resource=_resource(raw.get("resource")),
        scope_name=str(_scope(raw).get("name") or ""),
        scope_version=str(_scope(raw).get("version") or ""),
        source=source,
    )


def _parent(raw: Mapping[str, Any]) -> str | None:
    parent = raw.get("parentSpanContext")
    if isinstance(parent, Mapping):
        return normalize_id(parent.get("spanId"), SPAN_ID_HEX)
    return normalize_id(raw.get("parentSpanId") or raw.get("parentId"), SPAN_ID_HEX)


def _times(raw: Mapping[str, Any]) -> tuple[int, int]:
    if "startTime" in raw:
        start = hrtime_to_nanos(raw.get("startTime"))
        return start, hrtime_to_nanos(raw.get("endTime")) or start
    start = _number(raw.get("timestamp")) * US_TO_NS
    return start, start + _number(raw.get("duration")) * US_TO_NS


_MAX_UNIX_NANO = 2**64
"""Unix nanoseconds are unsigned 64-bit in OTLP; larger numbers are not times."""


def hrtime_to_nanos(value: Any) -> int:
    """Unix ns from an OTel JS ``HrTime`` ``[seconds, nanoseconds]`` (or an epoch-ms number)."""
    if isinstance(value, list | tuple) and len(value) == 2:
        nanos = _number(value[0]) * 1_000_000_000 + _number(value[1])
    elif isinstance(value, int | float) and not isinstance(value, bool):
        nanos = _number(value * 1_000_000)
    else:
        return 0
    return nanos if 0 <= nanos < _MAX_UNIX_NANO else 0  # 1e308 is no time


def _number(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int | float):
        return 0
    if isinstance(value, float) and not math.isfinite(value):
        return 0
    return int(value) if abs(value) < _MAX_UNIX_NANO else 0


def _enum(value: Any, names: tuple[str, ...], default: str) -> str:
    if isinstance(value, int) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str) and value.upper() in names:
        return value.upper()
    return default


def _event(raw: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_unix_nano=hrtime_to_nanos(raw.get("time")),
        attributes=as_mapping(raw.get("attributes")),
    )


def _resource(value: Any) -> dict[str, Any]:
    if not isinstance(value, Mapping):
        return {}
    attributes = value.get("attributes") or value.get("_attributes") or {}
    return dict(attributes) if isinstance(attributes, Mapping) else {}


def _scope(raw: Mapping[str, Any]) -> Mapping[str, Any]:
    scope = raw.get("instrumentationScope") or raw.get("instrumentationLibrary") or {}
    return scope if isinstance(scope, Mapping) else {}
