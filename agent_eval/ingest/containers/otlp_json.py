"""OTLP/JSON files: one export request, or the Collector file exporter's JSON Lines.

Reads ``ExportTraceServiceRequest`` and ``ExportLogsServiceRequest`` objects in the OTLP 1.x
JSON encoding (opentelemetry-proto ``docs/specification.md``, "JSON Protobuf Encoding"), either
one object per file (pretty-printed or not) or one object per line as the OpenTelemetry
Collector's ``file`` exporter writes them (its default ``format: json``). GenAI events
(semconv v1.28-1.36) arrive as the ``resourceLogs`` of the same files. Value decoding is in
:mod:`agent_eval.ingest.containers._otlp_values`.

Java's OTLP JSON logging exporters (``otel.traces.exporter=logging-otlp``, classes
``OtlpJsonLoggingSpanExporter`` / ``OtlpJsonLoggingLogRecordExporter`` of
``opentelemetry-exporter-logging-otlp``) write one bare ``ResourceSpans`` (or ``ResourceLogs``)
object per line, without the request wrapper: such a line (an object with ``scopeSpans`` /
``scopeLogs`` and no ``resourceSpans`` / ``resourceLogs``) is read as a request of one.

JSON Lines are streamed: one line in memory at a time. A single-object file is parsed whole.
Requests are decoded with :func:`~agent_eval.ingest.safe_text.loads` without its depth walk:
the span decoder bounds attribute nesting itself and never recurses on anything else.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import IO

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest.containers import builtin
from agent_eval.ingest.containers._otlp_records import iter_request
from agent_eval.ingest.containers.base import ContainerItem, Skipped
from agent_eval.ingest.safe_text import loads as safe_json_loads
from agent_eval.ingest.sources import open_input
from agent_eval.ingest.spans import SourceLocation

__all__ = ["OtlpJsonContainer"]

_REQUEST_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resourceSpans|resource_spans|resourceLogs|resource_logs)"\s*:'
)
"""The first key of an export request object (an optional UTF-8 byte-order mark first)."""
_BARE_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resource|scopeSpans|scope_spans|scopeLogs|scope_logs|schemaUrl)"\s*:'
)
"""The first key of a bare ResourceSpans/ResourceLogs object (Java's logging-otlp exporter)."""
_BARE_KEYS = (b'"scopeSpans"', b'"scope_spans"', b'"scopeLogs"', b'"scope_logs"')
_BOM = b"\xef\xbb\xbf"


class OtlpJsonContainer(builtin.OtlpJson):
    """OTLP/JSON export requests: a single object per file, or JSON Lines (Collector file exporter).

    Yields spans and log records; a bad span, log record or line becomes a
    :class:`~agent_eval.ingest.containers.base.Skipped` naming file:line, trace and span id.
    """

    def sniff(self, path: str, head: bytes) -> bool:
        """Whether the file starts with an export request, or a bare ResourceSpans/Logs."""
        if _REQUEST_START.match(head) is not None:
            return True
        return _BARE_START.match(head) is not None and any(k in head for k in _BARE_KEYS)

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the spans and log records of the file, in file order.

        Raises:
            DecodeError: the file is empty, or its first object is not valid JSON (truncated,
                not UTF-8...); the message names the file, line and column.

        """
        with open_input(path) as stream:
            first_no, first = _first_line(stream, path)
            try:
                request = safe_json_loads(first, max_depth=None)
            except orjson.JSONDecodeError:
                request = None
            if type(request) is dict:
                yield from iter_request(_wrapped(request), SourceLocation(path, first_no))
                yield from _read_lines(stream, path, first_no)
            else:
                document = first + stream.read()
                yield from iter_request(
                    _wrapped(_parse_whole(document, path, first_no)), SourceLocation(path)
                )


def _first_line(stream: IO[bytes], path: str) -> tuple[int, bytes]:
    """The first non-blank line and its 1-based number (a leading byte-order mark dropped)."""
    for number, raw in enumerate(stream, start=1):
        line = raw.removeprefix(_BOM) if number == 1 else raw
        if line.strip():
            return number, line
    raise DecodeError("the file is empty; expected an OTLP/JSON export request", path=path)


def _read_lines(stream: IO[bytes], path: str, after: int) -> Iterator[ContainerItem]:
    """The remaining JSON Lines; a line that is not JSON is one skipped record."""
    for number, line in enumerate(stream, start=after + 1):
        if not line or line.isspace():  # (strip() would copy a long line)
            continue
        source = SourceLocation(path, number)
        try:
            request = safe_json_loads(line, max_depth=None)
        except orjson.JSONDecodeError as exc:
            detail = f"line is not valid JSON ({exc}); its spans cannot be read"
            yield Skipped(reason="invalid_json", detail=detail, source=source, spans=0)
            continue
        yield from iter_request(_wrapped(request), source)


def _wrapped(value: object) -> object:
    """A bare ResourceSpans / ResourceLogs object as the export request of one; else as is."""
    if type(value) is not dict or "resourceSpans" in value or "resourceLogs" in value:
        return value
    if "scopeSpans" in value or "scope_spans" in value:
        return {"resourceSpans": [value]}
    if "scopeLogs" in value or "scope_logs" in value:
        return {"resourceLogs": [value]}
    return value


def _parse_whole(document: bytes, path: str, offset: int) -> object:
    """Parse a single-object file, naming line and column on failure."""
    try:
        return safe_json_loads(document, max_depth=None)
    except orjson.JSONDecodeError as exc:
        line = exc.lineno + offset - 1
        raise DecodeError(
            f"not valid JSON at line {line}, column {exc.colno}: {exc.msg} "
            "(truncated file, or bytes that are not UTF-8?)",
            path=path,
            line=line,
        ) from None
