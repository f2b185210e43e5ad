"""OpenTelemetry Python SDK ``ConsoleSpanExporter`` output (``ReadableSpan.to_json()``).

The Python SDK's console exporter (``opentelemetry.sdk.trace.export.ConsoleSpanExporter``) writes
each span as ``span.to_json()``: a pretty-printed JSON object (4-space indent) followed by a
newline, so a file is a run of concatenated objects; a ``formatter`` of ``to_json(indent=None)``
gives one object per line. Both are read, streaming, one span at a time. The shape
(``opentelemetry-sdk`` 1.x, ``ReadableSpan.to_json``):

- ``context: {trace_id, span_id, trace_state}`` with ids as ``0x``-prefixed lowercase hex
  (``0x`` + 32 / 16 digits), ``parent_id`` the same or ``null``;
- ``kind`` as ``str(SpanKind)``: ``"SpanKind.CLIENT"`` (or the bare number when the
  instrumentation passed an int: ``"2"``; numbered INTERNAL 0, SERVER 1, CLIENT 2, PRODUCER 3,
  CONSUMER 4);
- ``start_time`` / ``end_time`` and each event's ``timestamp`` as ISO 8601 UTC strings
  (microsecond precision);
- ``status: {status_code: "UNSET"|"OK"|"ERROR", description?}``;
- ``attributes`` and event ``attributes`` as plain JSON values (lists for array attributes);
- ``resource: {attributes, schema_url}``; no instrumentation scope is written.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from typing import Any

from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._ids import SPAN_ID_HEX, TRACE_ID_HEX, normalize_id
from agent_eval.ingest.containers._json_stream import BadValue, JsonStream
from agent_eval.ingest.containers._records import as_list, as_mapping
from agent_eval.ingest.containers._time import to_unix_nano

__all__ = ["PythonConsoleContainer"]

PY_SPAN_KINDS = ("INTERNAL", "SERVER", "CLIENT", "PRODUCER", "CONSUMER")
"""``opentelemetry.trace.SpanKind`` by value."""
PY_STATUS_CODES = ("UNSET", "OK", "ERROR")
"""``opentelemetry.trace.StatusCode`` names."""
_KIND_PREFIX = "SpanKind."
_HEX_PREFIX = "0x"


class PythonConsoleContainer(builtin.PythonConsole):
    """Reads OTel Python ``ConsoleSpanExporter`` output: concatenated ``to_json()`` spans."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An object with a ``context`` holding a ``0x`` ``trace_id`` (``to_json``'s layout)."""
        return (
            head.lstrip().startswith(b"{")
            and b'"context"' in head
            and b'"trace_id": "0x' in head.replace(b'"trace_id":"', b'"trace_id": "')
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one span per JSON object, in file order.

        A value that is not valid JSON after at least one span (a write cut off, or another
        process's output interleaved) is a ``Skipped`` note naming file:line; reading resumes
        at the next line that opens an object at column 0 (where ``to_json()`` starts each
        span; its inner lines are indented), so the spans after it are still read.

        Raises:
            DecodeError: the first value is not valid JSON; names the file and line.

        """
        with open_input(path) as stream:
            for item in JsonStream(stream, path).records():
                if isinstance(item, BadValue):
                    yield item.skipped()
                else:
                    yield _span(item[1], SourceLocation(path, item[0]))


def _span(raw: Any, source: SourceLocation) -> SpanRecord | Skipped:
    if not isinstance(raw, Mapping):
        return Skipped(reason="invalid_span", detail="value is not a span object", source=source)
    context = as_mapping(raw.get("context"))
    trace_id = _id(context.get("trace_id"), TRACE_ID_HEX)
    span_id = _id(context.get("span_id"), SPAN_ID_HEX)
    if trace_id is None or span_id is None:
        return Skipped(
            reason="invalid_trace_id" if trace_id is None else "invalid_span_id",
            detail=(
                "span has no 0x-hex context.trace_id/context.span_id "
                f"(found {context.get('trace_id')!r}, {context.get('span_id')!r})"
            ),
            source=source,
            trace_id=trace_id,
            span_id=span_id,
        )
    status = as_mapping(raw.get("status"))
    start = to_unix_nano(raw.get("start_time"))
    return SpanRecord(
        trace_id=trace_id,
        span_id=span_id,
        parent_span_id=_id(raw.get("parent_id"), SPAN_ID_HEX),
        name=str(raw.get("name") or ""),
        kind=_kind(raw.get("kind")),
        start_time_unix_nano=start,
        end_time_unix_nano=to_unix_nano(raw.get("end_time")) or start,
        attributes=as_mapping(raw.get("attributes")),
        events=tuple(_event(e) for e in as_list(raw.get("events")) if isinstance(e, Mapping)),
        status_code=_status(status.get("status_code")),
        status_message=str(status.get("description") or ""),
        resource=dict(as_mapping(as_mapping(raw.get("resource")).get("attributes"))),
        source=source,
    )


def _id(value: Any, length: int) -> str | None:
    """A ``0x``-prefixed hex id as bare lowercase hex (``None`` when absent or malformed)."""
    if isinstance(value, str) and value.lower().startswith(_HEX_PREFIX):
        value = value[len(_HEX_PREFIX) :]
    return normalize_id(value, length)


def _kind(value: Any) -> str:
    text = str(value or "").removeprefix(_KIND_PREFIX).upper()
    if text.isdigit() and int(text) < len(PY_SPAN_KINDS):
        return PY_SPAN_KINDS[int(text)]
    return text if text in PY_SPAN_KINDS else "INTERNAL"


def _status(value: Any) -> str:
    text = str(value or "").removeprefix("StatusCode.").upper()
    return text if text in PY_STATUS_CODES else "UNSET"


def _event(raw: Mapping[str, Any]) -> SpanEvent:
    return SpanEvent(
        name=str(raw.get("name") or ""),
        time_unix_nano=to_unix_nano(raw.get("timestamp")),
        attributes=as_mapping(raw.get("attributes")),
    )
