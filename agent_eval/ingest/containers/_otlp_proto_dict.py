"""Parsed OTLP protobuf export requests walked into the OTLP/JSON shape (private).

One walker for every protobuf path: the ``otlp-proto`` file container and ``agent-eval serve``'s
OTLP/HTTP protobuf bodies (:mod:`agent_eval.live._payloads`), so the same bytes give the same
spans both ways; :func:`~agent_eval.ingest.containers._otlp_records.iter_request` then
validates them as it validates OTLP/JSON. About 3x faster than protobuf's generic
``json_format.MessageToDict`` (which also turns ids into base64 text, read back by guessing).
"""

from __future__ import annotations

import base64
from typing import Any

__all__ = ["request_dict"]


def _any(value: Any) -> dict[str, Any]:  # noqa: PLR0911  (one branch per AnyValue kind)
    kind = value.WhichOneof("value")
    if kind == "string_value":
        return {"stringValue": value.string_value}
    if kind == "int_value":
        return {"intValue": value.int_value}
    if kind == "bool_value":
        return {"boolValue": value.bool_value}
    if kind == "double_value":
        return {"doubleValue": value.double_value}
    if kind == "array_value":
        return {"arrayValue": {"values": [_any(v) for v in value.array_value.values]}}
    if kind == "kvlist_value":
        return {"kvlistValue": {"values": _attributes(value.kvlist_value.values)}}
    if kind == "bytes_value":
        return {"bytesValue": base64.b64encode(value.bytes_value).decode()}
    return {}


def _attributes(items: Any) -> list[dict[str, Any]]:
    return [{"key": kv.key, "value": _any(kv.value)} for kv in items]


def _scope(scope: Any) -> dict[str, Any]:
    return {"name": scope.name, "version": scope.version}


def _span(span: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "traceId": span.trace_id,
        "spanId": span.span_id,
        "name": span.name,
        "kind": span.kind,
        "startTimeUnixNano": str(span.start_time_unix_nano),
        "endTimeUnixNano": str(span.end_time_unix_nano),
        "attributes": _attributes(span.attributes),
    }
    if span.parent_span_id:
        out["parentSpanId"] = span.parent_span_id
    if span.events:
        out["events"] = [
            {
                "name": e.name,
                "timeUnixNano": str(e.time_unix_nano),
                "attributes": _attributes(e.attributes),
            }
            for e in span.events
        ]
    if span.HasField("status"):
        out["status"] = {"code": span.status.code, "message": span.status.message}
    return out


def _log(record: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "timeUnixNano": str(record.time_unix_nano),
        "observedTimeUnixNano": str(record.observed_time_unix_nano),
        "attributes": _attributes(record.attributes),
    }
    if record.event_name:
        out["eventName"] = record.event_name
    if record.HasField("body"):
        out["body"] = _any(record.body)
    if record.trace_id:
        out["traceId"] = record.trace_id
    if record.span_id:
        out["spanId"] = record.span_id
    return out


def request_dict(message: Any) -> dict[str, Any]:
    """A parsed protobuf export request in the OTLP/JSON shape ``iter_request`` reads.

    ``message`` is an ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``. Ids stay
    the raw ``bytes`` of the message: :func:`~agent_eval.ingest.containers._otlp_values.decode_id`
    takes bytes of the OTLP length (16 for a trace id, 8 for a span id) and refuses any other
    length, so an id of the wrong length is never read as hex in one path and base64 in another.
    """
    if hasattr(message, "resource_spans"):
        return {
            "resourceSpans": [
                {
                    "resource": {"attributes": _attributes(r.resource.attributes)},
                    "scopeSpans": [
                        {"scope": _scope(s.scope), "spans": [_span(x) for x in s.spans]}
                        for s in r.scope_spans
                    ],
                }
                for r in message.resource_spans
            ]
        }
    return {
        "resourceLogs": [
            {
                "resource": {"attributes": _attributes(r.resource.attributes)},
                "scopeLogs": [
                    {"scope": _scope(s.scope), "logRecords": [_log(x) for x in s.log_records]}
                    for s in r.scope_logs
                ],
            }
            for r in message.resource_logs
        ]
    }
