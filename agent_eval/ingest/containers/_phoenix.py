"""Arize Phoenix span export: JSON (array, ``{"data": [...]}``) or JSON Lines of spans.

The span shape of Phoenix's REST API (``GET /v1/projects/{id}/spans``) and its span JSON
encoder: ``{name, context: {trace_id, span_id}, parent_id, span_kind, start_time, end_time,
status_code, status_message, attributes, events}``. ``attributes`` are nested objects
(``{"llm": {"input_messages": [{"message": {"role", "content"}}]}}``); they are flattened back
into OpenInference's dotted keys (``llm.input_messages.0.message.role``), lists of objects by
index, lists of scalars kept as array attributes. ``span_kind`` becomes
``openinference.span.kind`` when the attributes lack it. Times are ISO 8601 strings or epoch
numbers (unit inferred from magnitude).
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers._records import as_list, read_records
from agent_eval.ingest.containers._time import to_unix_nano

__all__ = ["PhoenixContainer", "flatten_attributes"]

OPENINFERENCE_SPAN_KIND = "openinference.span.kind"
_STATUS = {"OK": "OK", "ERROR": "ERROR", "UNSET": "UNSET"}


class PhoenixContainer(builtin.Phoenix):
    """Reads Phoenix span exports (nested attributes, ``context`` ids)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """Phoenix spans have a ``context`` object and a ``span_kind``."""
        return b'"context"' in head and b'"span_kind"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one span per record.

        Raises:
            DecodeError: the file is neither JSON nor JSON Lines.

        """
        for item in read_records(path):
            if isinstance(item, Skipped):
                yield item
            else:
                yield _span(item[1], SourceLocation(path, item[0]))


def _span(raw: Any, source: SourceLocation) -> SpanRecord | Skipped:
    context = raw.get("context") if isinstance(raw, Mapping) else None
    if not isinstance(raw, Mapping) or not isinstance(context, Mapping):
        return Skipped(
            reason="invalid_span", detail="record has no 'context' object", source=source
        )
    trace_id = normalize_id(context.get("trace_id"), TRACE_ID_HEX)
    span_id = normalize_id(context.get("span_id"), SPAN_ID_HEX)
    if trace_id is None or span_id is None:
        return Skipped(
            reason="invalid_trace_id" if trace_id is None else "invalid_span_id",
            detail=f"context {brief(dict(context), 120)} has no hex trace_id/span_id",
            source=source,
            trace_id=trace_id,
            span_id=span_id,
        )
    attributes = flatten_attributes(raw.get("attributes") or {})
    if raw.get("span_kind") and OPENINFERENCE_SPAN_KIND not in attributes:
        attributes[OPENINFERENCE_SPAN_KIND] = str(raw["span_kind"])
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=normalize_id(raw.get("parent_id"), SPAN_ID_HEX),
        name=str(raw.get("name") or ""),
        start_time_unix_nano=to_unix_nano(raw.get("start_time")),
        end_time_unix_nano=to_unix_nano(raw.get("end_time")),
        attributes=attributes,
        events=tuple(_event(e) for e in as_list(raw.get("events")) if isinstance(e, Mapping)),
        status_code=_STATUS.get(str(raw.get("status_code") or "").upper(), "UNSET"),
        status_message=str(raw.get("status_message") or ""),
        source=source,
    )


def _event(raw: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_unix_nano=to_unix_nano(raw.get("timestamp")),
        attributes=flatten_attributes(raw.get("attributes") or {}),
    )


def flatten_attributes(value: Any, prefix: str = "") -> dict[str, Any]:
    """Flatten nested attribute objects into dotted keys (lists of objects by index).

    ``{"llm": {"input_messages": [{"message": {"role": "user"}}]}}`` becomes
    ``{"llm.input_messages.0.message.role": "user"}``; a list of scalars stays one value.
    """
    out: dict[str, Any] = {}
    if isinstance(value, Mapping):
        for key, item in value.items():
            out.update(flatten_attributes(item, f"{prefix}{key}."))
    elif isinstance(value, list) and any(isinstance(v, Mapping | list) for v in value):
        for index, item in enumerate(value):
            out.update(flatten_attributes(item, f"{prefix}{index}."))
    elif prefix:
        out[prefix[:-1]] = value
    return out
