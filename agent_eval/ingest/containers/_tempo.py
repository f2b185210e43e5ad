"""Grafana Tempo trace export: ``{"batches": [{resource, instrumentationLibrarySpans}]}``.

What Tempo's query API (``/api/traces/<id>``) and the Grafana "Download trace" button write: OTLP
in its protobuf-JSON mapping, but with the pre-1.0 names (``batches`` for ``resourceSpans``,
``instrumentationLibrarySpans``/``instrumentationLibrary`` for ``scopeSpans``/``scope``; the newer
names are accepted too), enum names (``SPAN_KIND_SERVER``, ``STATUS_CODE_ERROR``) or numbers,
ids in hex or base64, and int64 values (times, ``intValue``) as strings or bare JSON numbers
that may have passed through float64: those are rounded to the nearest integer, then the span
is decoded by the same OTLP span decoder as ``otlp-json`` (``_otlp_records.decode_span``).

Tempo's v2 query API (``/api/v2/traces/<id>``) wraps the trace in an envelope,
``{"trace": {"resourceSpans": [...]}, "metrics": {...}, "status": ...}``, with the OTLP 1.x
names; the envelope's ``trace`` is read and its query metrics are ignored.
"""

from __future__ import annotations

import math
from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import MAX_NESTING, brief
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_records import decode_span
from agent_eval.ingest.containers._otlp_values import (
    SPAN_ID_BYTES,
    TRACE_ID_BYTES,
    BadValue,
    decode_attributes,
    decode_id,
)
from agent_eval.ingest.containers._records import as_list, load_json

__all__ = ["TempoContainer"]

_BATCHES_KEYS = ("batches", "resourceSpans")
"""Where the resource spans are: ``batches`` (``/api/traces``), ``resourceSpans`` (v2 API)."""
_SCOPE_SPANS_KEYS = ("instrumentationLibrarySpans", "scopeSpans")
_SCOPE_KEYS = ("instrumentationLibrary", "scope")
_TIME_KEYS = ("startTimeUnixNano", "endTimeUnixNano", "timeUnixNano")


class TempoContainer(builtin.Tempo):
    """Reads a Grafana Tempo JSON trace export (``batches``)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """A ``batches`` list, or a v2 ``trace`` envelope holding ``resourceSpans``."""
        if b'"batches"' in head:
            return True
        return head.lstrip().startswith(b"{") and b'"trace"' in head and b'"resourceSpans"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield every span of every batch.

        Raises:
            DecodeError: the file is not JSON or has no ``batches`` (or v2 ``trace`` envelope
                with a ``resourceSpans``) list.

        """
        source = SourceLocation(path)
        for batch in _batches(load_json(path), path):
            resource = _resource(batch)
            for scope_spans in _scope_spans(batch):
                scope = _scope(scope_spans)
                for raw in as_list(scope_spans.get("spans")):
                    yield _span(raw, resource, scope, source)


def _batches(document: Any, path: str) -> list[Mapping[str, Any]]:
    if isinstance(document, Mapping) and isinstance(document.get("trace"), Mapping):
        document = document["trace"]
    if isinstance(document, Mapping):
        for key in _BATCHES_KEYS:
            if isinstance(document.get(key), list):
                return [b for b in document[key] if isinstance(b, Mapping)]
    raise DecodeError(
        'expected a Tempo export {"batches": [...]} or a /api/v2/traces envelope '
        '{"trace": {"resourceSpans": [...]}}',
        path=path,
    )


def _resource(batch: Mapping[str, Any]) -> dict[str, Any]:
    resource = batch.get("resource")
    try:
        return (
            decode_attributes(_rounded(resource.get("attributes")))
            if isinstance(resource, dict)
            else {}
        )
    except BadValue:
        return {}


def _scope_spans(batch: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in _SCOPE_SPANS_KEYS:
        for scope_spans in as_list(batch.get(key)):
            if isinstance(scope_spans, Mapping):
                yield scope_spans


def _scope(scope_spans: Mapping[str, Any]) -> tuple[str, str]:
    for key in _SCOPE_KEYS:
        scope = scope_spans.get(key)
        if isinstance(scope, Mapping):
            return str(scope.get("name") or ""), str(scope.get("version") or "")
    return "", ""


def _span(
    raw: Any, resource: dict[str, Any], scope: tuple[str, str], source: SourceLocation
) -> SpanRecord | Skipped:
    if not isinstance(raw, dict):
        return Skipped(reason="invalid_span", detail=f"span is not an object: {brief(raw)}")
    try:
        return decode_span(_rounded(raw), resource, scope, source)
    except BadValue as exc:
        return Skipped(
            reason=exc.reason,
            detail=exc.detail,
            source=source,
            trace_id=_id_or_none(raw.get("traceId"), TRACE_ID_BYTES),
            span_id=_id_or_none(raw.get("spanId"), SPAN_ID_BYTES),
        )


def _rounded(value: Any, depth: int = 0) -> Any:
    """A copy with float int64s (times, ``intValue``) rounded: Tempo may emit them as float64.

    Raises:
        BadValue: ``malformed_span``, the span nests deeper than :data:`MAX_NESTING` levels.

    """
    if depth > MAX_NESTING:
        raise BadValue("malformed_span", f"the span nests deeper than {MAX_NESTING} levels")
    if isinstance(value, dict):
        return {
            k: round(v)
            if isinstance(v, float) and math.isfinite(v) and (k == "intValue" or k in _TIME_KEYS)
            else _rounded(v, depth + 1)
            for k, v in value.items()
        }
    if isinstance(value, list):
        return [_rounded(v, depth + 1) for v in value]
    return value


def _id_or_none(value: Any, size: int) -> str | None:
    try:
        return decode_id(value, size, "id", optional=True)
    except BadValue:
        return None
