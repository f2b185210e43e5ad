"""OTLP JSON requests (as dicts) -> :class:`SpanRecord`, :class:`LogRecord` and :class:`Skipped`.

Walks ``ExportTraceServiceRequest.resourceSpans[].scopeSpans[].spans[]`` and
``ExportLogsServiceRequest.resourceLogs[].scopeLogs[].logRecords[]`` (OTLP 1.x; the pre-1.0
``instrumentationLibrarySpans``/``instrumentationLibrary`` keys are read too, and snake_case
keys everywhere). A span or log record that breaks the data model becomes a ``Skipped`` item
naming the source, trace id and span id; the rest of the request is still used. Shared by the
OTLP/JSON and OTLP/protobuf containers, and by exports that wrap the same shapes (Tempo).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._spans import (
    Attributes,
    LogRecord,
    SourceLocation,
    SpanEvent,
    SpanRecord,
    new_span_record,
)
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_values import (
    SPAN_ID_BYTES,
    SPAN_KINDS,
    TRACE_ID_BYTES,
    BadValue,
    decode_any_value,
    decode_attributes,
    decode_id,
    decode_kind,
    decode_status,
    decode_uint64,
    field,
)

__all__ = [
    "decode_log_record",
    "decode_span",
    "iter_request",
    "iter_resource_logs",
    "iter_resource_spans",
]

_SCOPE_SPANS_KEYS = (
    ("scopeSpans", "scope_spans"),
    ("instrumentationLibrarySpans", "instrumentation_library_spans"),
)
_SCOPE_LOGS_KEYS = (
    ("scopeLogs", "scope_logs"),
    ("instrumentationLibraryLogs", "instrumentation_library_logs"),
)


def _list(obj: object, *keys: tuple[str, str]) -> list[Any]:
    if type(obj) is not dict:
        raise BadValue("malformed_request", f"{brief(obj)} is not an object")
    for camel, snake in keys:
        value = field(obj, camel, snake)
        if value is not None:
            if type(value) is not list:
                raise BadValue("malformed_request", f"{camel} is not a list")
            return value
    return []


def _string(obj: Mapping[str, Any], key: str, what: str) -> str:
    value = obj.get(key, "")
    if type(value) is not str:
        raise BadValue(
            f"invalid_{what}", f"{what.replace('_', ' ')} {brief(value)} is not a string"
        )
    return value


def _resource(container: Mapping[str, Any]) -> Attributes:
    resource = container.get("resource")
    if resource is None:
        return {}
    if type(resource) is not dict:
        raise BadValue("malformed_request", "resource is not an object")
    return decode_attributes(resource.get("attributes"))


def _scope(scoped: object) -> tuple[str, str]:
    if type(scoped) is not dict:
        raise BadValue("malformed_request", f"scope entry {brief(scoped)} is not an object")
    scope = scoped.get("scope", scoped.get("instrumentationLibrary"))
    if scope is None:
        scope = scoped.get("instrumentation_library")
    if scope is None:
        return "", ""
    if type(scope) is not dict:
        raise BadValue("malformed_request", "scope is not an object")
    return _string(scope, "name", "scope"), _string(scope, "version", "scope")


def _event(event: object) -> SpanEvent:
    if type(event) is not dict:
        raise BadValue("invalid_event", f"span event {brief(event)} is not an object")
    return SpanEvent(
        name=_string(event, "name", "event"),
        time_unix_nano=decode_uint64(field(event, "timeUnixNano", "time_unix_nano"), "event time"),
        attributes=decode_attributes(event.get("attributes")),
    )


def _kind(value: object) -> str:
    """``decode_kind``, with an OTLP enum number (the common encoding) read inline."""
    if type(value) is int and 0 <= value < len(SPAN_KINDS):
        return SPAN_KINDS[value]
    return decode_kind(value)


def _time(value: object, what: str) -> int:
    """``decode_uint64``, with a decimal string (the OTLP JSON encoding) read inline."""
    if type(value) is str and value.isdigit() and value.isascii() and len(value) < 20:
        return int(value)
    return decode_uint64(value, what)


_TRACE_IDS: dict[str, str] = {}
_PARENT_IDS: dict[str, str] = {}
"""Recently decoded trace ids / parent span ids (as written -> lowercase hex): every span of a
trace repeats its trace id, and siblings their parent's id, so a lookup beats checking 32 hex
digits again. Only canonical hex of the right length is remembered (one dict per size, so a
trace id is never taken for a span id); each is emptied when it reaches :data:`_IDS_MAX`."""
_IDS_MAX = 4096


def _repeated_id(value: object, seen: dict[str, str], size: int, what: str) -> str:
    """``decode_id(value, size, what)`` (required), remembered in ``seen``."""
    if type(value) is str:
        found = seen.get(value)
        if found is not None:
            return found
        hex_id = decode_id(value, size, what) or ""
        if len(value) == 2 * size:  # canonical hex (base64 is shorter): worth remembering
            if len(seen) >= _IDS_MAX:
                seen.clear()
            seen[value] = hex_id
        return hex_id
    return decode_id(value, size, what) or ""


def _parent_id(value: object) -> str | None:
    """``decode_id(value, 8, "parent_span_id", optional=True)``, remembered."""
    if type(value) is str:
        found = _PARENT_IDS.get(value)
        if found is not None:
            return found
    hex_id = decode_id(value, SPAN_ID_BYTES, "parent_span_id", optional=True)
    if hex_id is not None and type(value) is str and len(value) == 2 * SPAN_ID_BYTES:
        if len(_PARENT_IDS) >= _IDS_MAX:
            _PARENT_IDS.clear()
        _PARENT_IDS[value] = hex_id
    return hex_id


_CAMEL = ("traceId", "spanId", "parentSpanId", "startTimeUnixNano", "endTimeUnixNano")
_SNAKE = ("trace_id", "span_id", "parent_span_id", "start_time_unix_nano", "end_time_unix_nano")


def decode_span(
    span: Mapping[str, Any],
    resource: Attributes,
    scope: tuple[str, str],
    source: SourceLocation | None,
) -> SpanRecord:
    """Decode one OTLP JSON ``Span`` object (camelCase or snake_case keys).

    Raises:
        BadValue: any field breaks the OTLP data model (the reason names which).

    """
    trace_key, span_key, parent_key, start_key, end_key = _CAMEL if "spanId" in span else _SNAKE
    events = span.get("events")
    if events is not None and type(events) is not list:
        raise BadValue("invalid_event", "span events are not a list")
    status = span.get("status")
    status_code, status_message = ("UNSET", "") if status is None else decode_status(status)
    parent = span.get(parent_key)
    name = span.get("name", "")
    trace_id = _repeated_id(span.get(trace_key), _TRACE_IDS, TRACE_ID_BYTES, "trace_id")
    span_id = decode_id(span.get(span_key), SPAN_ID_BYTES, "span_id") or ""
    return new_span_record(
        trace_id,
        span_id,
        None if parent is None or parent == "" else _parent_id(parent),
        name if type(name) is str else _string(span, "name", "span_name"),
        _kind(span.get("kind")),
        _time(span.get(start_key), "start time"),
        _time(span.get(end_key), "end time"),
        decode_attributes(span.get("attributes")),
        tuple([_event(e) for e in events]) if events else (),
        status_code,
        status_message,
        resource,
        scope[0],
        scope[1],
        source,
    )


def decode_log_record(
    record: Mapping[str, Any], resource: Attributes, source: SourceLocation | None
) -> LogRecord:
    """Decode one OTLP JSON ``LogRecord`` (event name from ``eventName`` or ``event.name``).

    Raises:
        BadValue: any field breaks the OTLP data model.

    """
    attributes = decode_attributes(record.get("attributes"))
    event_name = field(record, "eventName", "event_name") or attributes.get("event.name") or ""
    if type(event_name) is not str:
        raise BadValue("invalid_event", f"event name {brief(event_name)} is not a string")
    time = decode_uint64(field(record, "timeUnixNano", "time_unix_nano"), "time")
    observed = field(record, "observedTimeUnixNano", "observed_time_unix_nano")
    body = record.get("body")
    return LogRecord(
        event_name=event_name,
        trace_id=decode_id(field(record, "traceId", "trace_id"), 16, "trace_id", optional=True),
        span_id=decode_id(field(record, "spanId", "span_id"), 8, "span_id", optional=True),
        time_unix_nano=time or decode_uint64(observed, "observed time"),
        body=None if body is None else decode_any_value(body),
        attributes=attributes,
        resource=resource,
        source=source,
    )


def _raw_id(item: object, camel: str, snake: str, size: int) -> str | None:
    """The item's id as hex for an error message, when it is a valid id."""
    if type(item) is not dict:
        return None
    try:
        return decode_id(field(item, camel, snake), size, "id", optional=True)
    except BadValue:
        return None


def _skipped(exc: BadValue, item: object, source: SourceLocation | None, *, log: bool) -> Skipped:
    return Skipped(
        reason=exc.reason,
        detail=exc.detail,
        source=source,
        trace_id=_raw_id(item, "traceId", "trace_id", TRACE_ID_BYTES),
        span_id=_raw_id(item, "spanId", "span_id", SPAN_ID_BYTES),
        spans=0 if log else 1,
        logs=1 if log else 0,
    )


def _count(container: object, keys: tuple[tuple[str, str], ...], leaf: str) -> int:
    """Best-effort count of the records under a malformed resource (for the accounting)."""
    if type(container) is not dict:
        return 1
    try:
        scoped = _list(container, *keys)
    except BadValue:
        return 1
    lists = [s.get(leaf) for s in scoped if type(s) is dict]
    return sum(len(v) for v in lists if type(v) is list) or 1


def iter_resource_spans(
    resource_spans: list[Any], source: SourceLocation | None
) -> Iterator[SpanRecord | Skipped]:
    """Yield the spans of a ``resourceSpans`` list; bad spans or resources as ``Skipped``."""
    for container in resource_spans:
        try:
            if type(container) is not dict:
                raise BadValue("malformed_request", "a resourceSpans entry is not an object")
            resource = _resource(container)
            scopes = [(s, _scope(s)) for s in _list(container, *_SCOPE_SPANS_KEYS)]
            spans = [(sp, scope) for s, scope in scopes for sp in _list(s, ("spans", "spans"))]
        except BadValue as exc:
            count = _count(container, _SCOPE_SPANS_KEYS, "spans")
            yield Skipped(
                reason=exc.reason,
                detail=exc.detail,
                source=source,
                spans=count,
            )
            continue
        for span, scope in spans:
            try:
                if type(span) is not dict:
                    raise BadValue("malformed_span", f"span {brief(span)} is not an object")
                yield decode_span(span, resource, scope, source)
            except BadValue as exc:
                yield _skipped(exc, span, source, log=False)


def iter_resource_logs(
    resource_logs: list[Any], source: SourceLocation | None
) -> Iterator[LogRecord | Skipped]:
    """Yield the log records of a ``resourceLogs`` list; bad ones as ``Skipped``."""
    for container in resource_logs:
        try:
            if type(container) is not dict:
                raise BadValue("malformed_request", "a resourceLogs entry is not an object")
            resource = _resource(container)
            scopes = _list(container, *_SCOPE_LOGS_KEYS)
            records = [r for s in scopes for r in _list(s, ("logRecords", "log_records"))]
        except BadValue as exc:
            count = _count(container, _SCOPE_LOGS_KEYS, "logRecords")
            yield Skipped(
                reason=exc.reason,
                detail=exc.detail,
                source=source,
                spans=0,
                logs=count,
            )
            continue
        for record in records:
            try:
                if type(record) is not dict:
                    raise BadValue(
                        "invalid_log_record", f"log record {brief(record)} is not an object"
                    )
                yield decode_log_record(record, resource, source)
            except BadValue as exc:
                yield _skipped(exc, record, source, log=True)


def iter_request(request: object, source: SourceLocation | None) -> Iterator[ContainerItem]:
    """Yield everything in one ``Export{Trace,Logs}ServiceRequest`` JSON object.

    An empty object ``{}`` is an empty request (proto3's JSON mapping omits empty lists) and
    yields nothing, as ``{"resourceSpans": []}`` does. Anything else that is neither (no
    ``resourceSpans``/``resourceLogs`` list) yields one ``Skipped`` record with reason
    ``"not_otlp"``.
    """
    if request == {}:
        return
    if type(request) is not dict:
        request = {}
    spans = field(request, "resourceSpans", "resource_spans")
    logs = field(request, "resourceLogs", "resource_logs")
    if type(spans) is not list and type(logs) is not list:
        detail = (
            "not an OTLP export request: expected an object with a resourceSpans or "
            "resourceLogs list"
        )
        yield Skipped(reason="not_otlp", detail=detail, source=source, spans=0)
        return
    if spans is not None and type(spans) is not list:
        yield Skipped(
            reason="malformed_request", detail="resourceSpans is not a list", source=source
        )
    elif spans:
        yield from iter_resource_spans(spans, source)
    if logs is not None and type(logs) is not list:
        detail = "resourceLogs is not a list"
        yield Skipped(reason="malformed_request", detail=detail, source=source, spans=0, logs=1)
    elif logs:
        yield from iter_resource_logs(logs, source)
