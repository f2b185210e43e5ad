"""Grafana Tempo trace export: ``{"batches": [{resource, instrumentationLibrarySpans}]}``.

What Tempo's query API (``/api/traces/<id>``) and the Grafana "Download trace" button write: OTLP
in its protobuf-JSON mapping, but with the pre-1.0 names (``batches`` for ``resourceSpans``,
``instrumentationLibrarySpans``/``instrumentationLibrary`` for ``scopeSpans``/``scope``; the newer
names are accepted too), enum names (``SPAN_KIND_SERVER``, ``STATUS_CODE_ERROR``) or numbers,
ids in hex or base64, and int64 values (times, ``intValue``) as strings or bare JSON numbers
that may have passed through float64 (so they are rounded, not rejected).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Callable, Iterator, Mapping
from typing import Any, ClassVar

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers.base import Container, ContainerItem, Skipped
from agent_eval.ingest.spans import SourceLocation, SpanEvent, SpanRecord

__all__ = ["TempoContainer"]

_SPAN_KINDS = ("UNSPECIFIED", "INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
_STATUS_CODES = ("UNSET", "OK", "ERROR")
_SCOPE_SPANS_KEYS = ("instrumentationLibrarySpans", "scopeSpans")
_SCOPE_KEYS = ("instrumentationLibrary", "scope")


class TempoContainer(Container):
    """Reads a Grafana Tempo JSON trace export (``batches``)."""

    name: ClassVar[str] = "tempo"
    description: ClassVar[str] = "Grafana Tempo trace export ({batches: [...]})"

    def sniff(self, path: str, head: bytes) -> bool:
        """Tempo exports start with a ``batches`` list."""
        return b'"batches"' in head

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield every span of every batch.

        Raises:
            DecodeError: the file is not JSON or has no ``batches`` list.

        """
        for batch in _batches(_load(path), path):
            resource = _attributes((batch.get("resource") or {}).get("attributes"))
            for scope_spans in _scope_spans(batch):
                scope = _scope(scope_spans)
                for raw in scope_spans.get("spans") or ():
                    yield _span(raw, resource, scope, SourceLocation(path))


def _load(path: str) -> Any:
    try:
        with open(path, "rb") as handle:
            return orjson.loads(handle.read())
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"not valid JSON ({exc})", path=path) from exc


def _batches(document: Any, path: str) -> list[Mapping[str, Any]]:
    if isinstance(document, Mapping) and isinstance(document.get("trace"), Mapping):
        document = document["trace"]
    if not isinstance(document, Mapping) or not isinstance(document.get("batches"), list):
        raise DecodeError('expected a Tempo export {"batches": [...]}', path=path)
    return [b for b in document["batches"] if isinstance(b, Mapping)]


def _scope_spans(batch: Mapping[str, Any]) -> Iterator[Mapping[str, Any]]:
    for key in _SCOPE_SPANS_KEYS:
        for scope_spans in batch.get(key) or ():
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
    if not isinstance(raw, Mapping):
        return Skipped(reason="invalid_span", detail=f"span is not an object: {raw!r:.80}")
    trace_id = normalize_id(raw.get("traceId"), TRACE_ID_HEX)
    span_id = normalize_id(raw.get("spanId"), SPAN_ID_HEX)
    if trace_id is None or span_id is None:
        return Skipped(
            reason="invalid_trace_id" if trace_id is None else "invalid_span_id",
            detail=f"traceId {raw.get('traceId')!r} / spanId {raw.get('spanId')!r} are not "
            "hex or base64 ids; the span was skipped",
            source=source,
            trace_id=trace_id,
            span_id=span_id,
        )
    status = raw.get("status") or {}
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=normalize_id(raw.get("parentSpanId"), SPAN_ID_HEX),
        name=str(raw.get("name") or ""),
        kind=_enum(raw.get("kind"), "SPAN_KIND_", _SPAN_KINDS, "INTERNAL"),
        start_time_unix_nano=_int64(raw.get("startTimeUnixNano")) or 0,
        end_time_unix_nano=_int64(raw.get("endTimeUnixNano")) or 0,
        attributes=_attributes(raw.get("attributes")),
        events=tuple(_event(e) for e in raw.get("events") or () if isinstance(e, Mapping)),
        status_code=_enum(status.get("code"), "STATUS_CODE_", _STATUS_CODES, "UNSET"),
        status_message=str(status.get("message") or ""),
        resource=resource,
        scope_name=scope[0],
        scope_version=scope[1],
        source=source,
    )


def _event(raw: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_unix_nano=_int64(raw.get("timeUnixNano")) or 0,
        attributes=_attributes(raw.get("attributes")),
    )


def _enum(value: Any, prefix: str, names: tuple[str, ...], default: str) -> str:
    if isinstance(value, int) and 0 <= value < len(names):
        return names[value]
    if isinstance(value, str):
        name = value.removeprefix(prefix).upper()
        if name in names:
            return name
    return default


def _attributes(raw: Any) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for item in raw or ():
        if isinstance(item, Mapping) and isinstance(item.get("key"), str):
            out[item["key"]] = _any_value(item.get("value"))
    return out


def _any_value(value: Any) -> Any:
    """Decode an OTLP ``AnyValue`` in its JSON mapping (one ``*Value`` key)."""
    if not isinstance(value, Mapping) or not value:
        return None
    kind, inner = next(iter(value.items()))
    decode = _DECODERS.get(kind)
    return decode(inner) if decode is not None else inner


def _int64(value: Any) -> int | None:
    """An int64 written as a string, an int, or a float (rounded: float64 lost the low bits)."""
    if isinstance(value, bool) or not isinstance(value, int | float | str):
        return None
    if isinstance(value, int):
        return value
    try:
        return int(value)
    except ValueError:
        pass
    try:
        return round(float(value))
    except (ValueError, OverflowError):
        return None


def _double(value: Any) -> float | None:
    try:
        return float(value) if isinstance(value, int | float | str) else None
    except ValueError:
        return None


def _array(value: Any) -> list[Any]:
    values = value.get("values") if isinstance(value, Mapping) else None
    return [_any_value(v) for v in values or ()]


def _kvlist(value: Any) -> dict[str, Any]:
    return _attributes(value.get("values") if isinstance(value, Mapping) else None)


def _bytes(value: Any) -> bytes | None:
    try:
        return base64.b64decode(value, validate=True) if isinstance(value, str) else None
    except (binascii.Error, ValueError):
        return None


_DECODERS: dict[str, Callable[[Any], Any]] = {
    "intValue": _int64,
    "doubleValue": _double,
    "arrayValue": _array,
    "kvlistValue": _kvlist,
    "bytesValue": _bytes,
}
