"""Jaeger UI JSON export: ``{"data": [{"traceID", "spans", "processes"}]}``.

The format of Jaeger's query API (``/api/traces``) and of the UI's "Download JSON" button
(Jaeger v1 model, ``model/json``). Differences from OTLP handled here:

- times are microseconds (``startTime``, ``duration``, log ``timestamp``);
- parentage is in ``references`` (``CHILD_OF``, else ``FOLLOWS_FROM``), or a legacy
  ``parentSpanID``;
- attributes are ``tags`` of ``{key, type, value}``; OTLP array attributes arrive flattened to
  JSON strings and are restored when they hold a homogeneous list of scalars;
- OTel data Jaeger maps to tags (``span.kind``, ``otel.scope.name``/``otel.scope.version``,
  ``otel.status_code``/``otel.status_description``, ``error``) goes back to span fields;
- the process (``serviceName`` plus ``tags``) is the resource; span ``logs`` are span events
  (the ``event`` field names them).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers._records import as_list, as_mapping, load_json

__all__ = ["JaegerContainer"]

US_TO_NS = 1000
"""Jaeger times are microseconds; ours are nanoseconds."""

TAG_SPAN_KIND = "span.kind"
TAG_SCOPE_NAME = "otel.scope.name"
TAG_SCOPE_VERSION = "otel.scope.version"
TAG_LIBRARY_NAME = "otel.library.name"
TAG_LIBRARY_VERSION = "otel.library.version"
TAG_STATUS_CODE = "otel.status_code"
TAG_STATUS_DESCRIPTION = "otel.status_description"
TAG_ERROR = "error"
LOG_EVENT_FIELD = "event"

_MAPPED_TAGS = frozenset(
    {
        TAG_SPAN_KIND,
        TAG_SCOPE_NAME,
        TAG_SCOPE_VERSION,
        TAG_LIBRARY_NAME,
        TAG_LIBRARY_VERSION,
        TAG_STATUS_CODE,
        TAG_STATUS_DESCRIPTION,
        TAG_ERROR,
    }
)
_KINDS = {"client", "server", "internal", "producer", "consumer"}


_JSON_HINT = "; export the trace again from the Jaeger UI"


class JaegerContainer(builtin.Jaeger):
    """Reads a Jaeger UI/query-API JSON export (one or many traces)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """Jaeger JSON has ``traceID`` (capital ID) next to ``operationName`` or ``processes``."""
        return b'"traceID"' in head and (b'"operationName"' in head or b'"processes"' in head)

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the spans of every trace in the file.

        Raises:
            DecodeError: the file is not JSON or has no Jaeger trace list.

        """
        for trace in _traces(load_json(path, _JSON_HINT), path):
            yield from _read_trace(trace, path)


def _traces(document: Any, path: str) -> list[Mapping[str, Any]]:
    if isinstance(document, Mapping) and isinstance(document.get("data"), list):
        traces = document["data"]
    elif isinstance(document, Mapping) and "spans" in document:
        traces = [document]
    elif isinstance(document, list):
        traces = document
    else:
        raise DecodeError(
            'expected a Jaeger export {"data": [{"traceID", "spans", "processes"}]}', path=path
        )
    return [t for t in traces if isinstance(t, Mapping)]


def _read_trace(trace: Mapping[str, Any], path: str) -> Iterator[ContainerItem]:
    processes = as_mapping(trace.get("processes"))
    source = SourceLocation(path)
    for raw in as_list(trace.get("spans")):
        if not isinstance(raw, Mapping):
            yield Skipped(reason="invalid_span", detail=f"span is not an object: {brief(raw)}")
            continue
        yield _span(raw, processes, source)


def _span(
    raw: Mapping[str, Any], processes: Mapping[str, Any], source: SourceLocation
) -> SpanRecord | Skipped:
    trace_id = normalize_id(raw.get("traceID"), TRACE_ID_HEX)
    span_id = normalize_id(raw.get("spanID"), SPAN_ID_HEX)
    if trace_id is None or span_id is None:
        bad = "traceID" if trace_id is None else "spanID"
        return Skipped(
            reason="invalid_span_id" if span_id is None else "invalid_trace_id",
            detail=f"{bad} {brief(raw.get(bad))} is not a hex id; the span was skipped",
            source=source,
            trace_id=trace_id,
            span_id=span_id,
        )
    tags = _tags(raw.get("tags"))
    start = _int(raw.get("startTime")) * US_TO_NS
    process = processes.get(str(raw.get("processID"))) or raw.get("process")
    status_code, status_message = _status(tags)
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_parent(raw),
        name=str(raw.get("operationName") or ""),
        kind=_kind(tags.get(TAG_SPAN_KIND)),
        start_time_unix_nano=start,
        end_time_unix_nano=start + _int(raw.get("duration")) * US_TO_NS,
        attributes={k: v for k, v in tags.items() if k not in _MAPPED_TAGS},
        events=tuple(_event(log) for log in as_list(raw.get("logs")) if isinstance(log, Mapping)),
        status_code=status_code,
        status_message=status_message,
        resource=_resource(process),
        scope_name=str(tags.get(TAG_SCOPE_NAME) or tags.get(TAG_LIBRARY_NAME) or ""),
        scope_version=str(tags.get(TAG_SCOPE_VERSION) or tags.get(TAG_LIBRARY_VERSION) or ""),
        source=source,
    )


def _parent(raw: Mapping[str, Any]) -> str | None:
    references = [r for r in as_list(raw.get("references")) if isinstance(r, Mapping)]
    own_trace = raw.get("traceID")
    ordered = sorted(references, key=lambda r: r.get("refType") != "CHILD_OF")
    for ref in ordered:
        if ref.get("traceID") in (None, own_trace):
            parent = normalize_id(ref.get("spanID"), SPAN_ID_HEX)
            if parent is not None:
                return parent
    return normalize_id(raw.get("parentSpanID"), SPAN_ID_HEX)


def _tags(tags: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for tag in as_list(tags):
        if isinstance(tag, Mapping) and isinstance(tag.get("key"), str):
            out[tag["key"]] = _tag_value(tag.get("type"), tag.get("value"))
    return out


def _tag_value(kind: Any, value: Any) -> Any:
    if kind == "int64" and isinstance(value, str | float):
        try:
            return int(value)
        except (ValueError, OverflowError):  # "abc", 5,000 digits, inf
            return value
    if kind == "float64" and isinstance(value, str | int):
        try:
            return float(value)
        except ValueError:
            return value
    if isinstance(value, str) and value[:1] == "[":
        return _unflatten_array(value)
    return value


def _unflatten_array(value: str) -> Any:
    """Restore an OTLP array attribute Jaeger wrote as a JSON string (homogeneous scalars)."""
    try:
        items = safe_json_loads(value)
    except orjson.JSONDecodeError:
        return value
    if not isinstance(items, list):
        return value
    kinds = {type(item) for item in items}
    if len(kinds) <= 1 and kinds <= {str, bool, int, float}:
        return items
    return value


def _status(tags: Mapping[str, Any]) -> tuple[str, str]:
    code = str(tags.get(TAG_STATUS_CODE) or "").upper()
    message = str(tags.get(TAG_STATUS_DESCRIPTION) or "")
    if code in ("OK", "ERROR"):
        return code, message
    if tags.get(TAG_ERROR) in (True, "true"):
        return "ERROR", message
    return "UNSET", message


def _kind(value: Any) -> str:
    text = str(value or "").lower()
    return text.upper() if text in _KINDS else "INTERNAL"


def _event(log: Mapping[str, Any]) -> SpanEvent:
    fields = _tags(log.get("fields"))
    name = str(fields.pop(LOG_EVENT_FIELD, "") or "log")
    return SpanEvent(
        name=name, time_unix_nano=_int(log.get("timestamp")) * US_TO_NS, attributes=fields
    )


def _resource(process: Any) -> dict[str, Any]:
    if not isinstance(process, Mapping):
        return {}
    resource = _tags(process.get("tags"))
    if process.get("serviceName"):
        resource["service.name"] = process["serviceName"]
    return resource


def _int(value: Any) -> int:
    try:
        return int(value)
    except (TypeError, ValueError, OverflowError):
        return 0
