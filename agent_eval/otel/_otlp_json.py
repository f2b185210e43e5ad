"""Builders for OTLP/JSON export requests: ``serve``'s warm-up probe, tests and benchmarks.

They write the OTLP 1.x JSON encoding the Collector's file exporter writes: hex ids, 64-bit
integers as strings, ``AnyValue`` objects. ``export_request(...)`` returns a dict ready for
``orjson.dumps``.
"""

from __future__ import annotations

import base64
import math
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

__all__ = ["any_value", "export_request", "key_values", "log_record", "span"]

_NON_FINITE = {"nan": "NaN", "inf": "Infinity", "-inf": "-Infinity"}


def any_value(value: Any) -> dict[str, Any]:  # noqa: PLR0911  (one branch per AnyValue kind)
    """The OTLP JSON ``AnyValue`` of a Python value (str, bool, int, float, bytes, list, dict)."""
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):  # proto3 JSON spells non-finite doubles as strings
        return {"doubleValue": value if math.isfinite(value) else _NON_FINITE[str(value)]}
    if isinstance(value, str):
        return {"stringValue": value}
    if isinstance(value, bytes):
        return {"bytesValue": base64.b64encode(value).decode()}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": key_values(value)}}
    if isinstance(value, Sequence):
        return {"arrayValue": {"values": [any_value(v) for v in value]}}
    if value is None:
        return {}
    raise TypeError(f"no OTLP AnyValue for {type(value).__name__}")


def key_values(attributes: Mapping[str, Any]) -> list[dict[str, Any]]:
    """An OTLP ``KeyValue`` list."""
    return [{"key": k, "value": any_value(v)} for k, v in attributes.items()]


def span(
    trace_id: str,
    span_id: str,
    name: str = "span",
    *,
    parent_span_id: str | None = None,
    kind: int = 1,
    start: int = 1_700_000_000_000_000_000,
    end: int | None = None,
    attributes: Mapping[str, Any] | None = None,
    events: Iterable[tuple[str, int, Mapping[str, Any]]] = (),
    status: tuple[int, str] | None = None,
) -> dict[str, Any]:
    """An OTLP JSON ``Span``; ``events`` as ``(name, time_unix_nano, attributes)``."""
    out: dict[str, Any] = {
        "traceId": trace_id,
        "spanId": span_id,
        "name": name,
        "kind": kind,
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1_000_000 if end is None else end),
        "attributes": key_values(attributes or {}),
    }
    if parent_span_id:
        out["parentSpanId"] = parent_span_id
    if events:
        out["events"] = [
            {"name": n, "timeUnixNano": str(t), "attributes": key_values(a)} for n, t, a in events
        ]
    if status:
        out["status"] = {"code": status[0], "message": status[1]}
    return out


def log_record(
    event_name: str,
    body: Any = None,
    *,
    trace_id: str | None = None,
    span_id: str | None = None,
    time: int = 1_700_000_000_000_000_000,
    attributes: Mapping[str, Any] | None = None,
) -> dict[str, Any]:
    """An OTLP JSON ``LogRecord`` carrying a GenAI event (``eventName`` set)."""
    out: dict[str, Any] = {
        "timeUnixNano": str(time),
        "eventName": event_name,
        "attributes": key_values(attributes or {}),
    }
    if body is not None:
        out["body"] = any_value(body)
    if trace_id:
        out["traceId"] = trace_id
    if span_id:
        out["spanId"] = span_id
    return out


def export_request(
    spans: Iterable[dict[str, Any]] = (),
    logs: Iterable[dict[str, Any]] = (),
    *,
    resource: Mapping[str, Any] | None = None,
    scope: tuple[str, str] = ("agent_eval.testing", "1"),
) -> dict[str, Any]:
    """An export request with one resource and one scope (``resourceSpans``/``resourceLogs``)."""
    res = {"attributes": key_values(resource or {"service.name": "test-agent"})}
    scope_obj = {"name": scope[0], "version": scope[1]}
    out: dict[str, Any] = {}
    span_list, log_list = list(spans), list(logs)
    if span_list:
        out["resourceSpans"] = [
            {"resource": res, "scopeSpans": [{"scope": scope_obj, "spans": span_list}]}
        ]
    if log_list:
        out["resourceLogs"] = [
            {"resource": res, "scopeLogs": [{"scope": scope_obj, "logRecords": log_list}]}
        ]
    return out
