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
A bad line costs only itself, the first one too: when the file does not parse as one object
and a later line (at column 0) is a whole request, the file is JSON Lines with a bad first line.
Requests are decoded with :func:`~agent_eval.ingest._safe_text.loads` without its depth walk:
the span decoder bounds attribute nesting itself and never recurses on anything else.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from itertools import islice
from typing import IO

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._leading import MAX_LEADING_BAD
from agent_eval.ingest.containers._otlp_records import iter_request

__all__ = ["OtlpJsonContainer"]

_REQUEST_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resourceSpans|resource_spans|resourceLogs|resource_logs)"\s*:'
)
"""The first key of an export request object (an optional UTF-8 byte-order mark first)."""
_BARE_START = re.compile(
    rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"(?:resource|scopeSpans|scope_spans|scopeLogs|scope_logs|schemaUrl)"\s*:'
)
"""The first key of a bare ResourceSpans/ResourceLogs object (Java's logging-otlp exporter)."""
_EMPTY_REQUEST = re.compile(rb"\A(?:\xef\xbb\xbf)?\s*\{\s*\}\s*\Z")
"""A whole file ``{}``: an export request with no resources (proto3 JSON omits empty lists)."""
_BARE_KEYS = (b'"scopeSpans"', b'"scope_spans"', b'"scopeLogs"', b'"scope_logs"')
_BOM = b"\xef\xbb\xbf"


class OtlpJsonContainer(builtin.OtlpJson):
    """OTLP/JSON export requests: a single object per file, or JSON Lines (Collector file exporter).

    Yields spans and log records; a bad span, log record or line becomes a
    :class:`~agent_eval.ingest.containers._base.Skipped` naming file:line, trace and span id.
    """

    def sniff(self, path: str, head: bytes) -> bool:
        """Whether the file starts with an export request, or a bare ResourceSpans/Logs.

        A file that is only ``{}`` is an empty export request: proto3's JSON mapping omits an
        empty ``resourceSpans`` list, so it reads as ``{"resourceSpans": []}`` does (no spans).
        """
        if _REQUEST_START.match(head) is not None or _EMPTY_REQUEST.match(head) is not None:
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
                first_error = f"a JSON {type(request).__name__}, not an export request object"
            except orjson.JSONDecodeError as exc:
                request, first_error = None, f"not valid JSON ({exc})"
            if type(request) is dict:
                yield from iter_request(_wrapped(request), SourceLocation(path, first_no))
                yield from _read_lines(stream, path, first_no)
                return
            rest = stream.read()
        try:
            document = _parse_whole(first + rest, path, first_no)
        except DecodeError:
            if not _has_record(rest):
                raise
            # JSON Lines whose first line is bad: it costs itself, as any other line would
            yield _bad_line(path, first_no, first_error)
            yield from _read_lines(io.BytesIO(rest), path, first_no)
            return
        yield from iter_request(_wrapped(document), SourceLocation(path))


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
        try:
            request = safe_json_loads(line, max_depth=None)
        except orjson.JSONDecodeError as exc:
            yield _bad_line(path, number, f"not valid JSON ({exc})")
            continue
        yield from iter_request(_wrapped(request), SourceLocation(path, number))


def _bad_line(path: str, number: int, error: str) -> Skipped:
    detail = f"line is {error}; its spans cannot be read"
    return Skipped(
        reason="invalid_json", detail=detail, source=SourceLocation(path, number), spans=0
    )


def _has_record(rest: bytes) -> bool:
    """Whether one of the first lines of ``rest`` is a whole export request (JSON Lines).

    Only a line opening an object at column 0 counts: the inner lines of a pretty-printed
    request are indented, so a single request cut short is not taken for JSON Lines.
    """
    lines = (line for line in io.BytesIO(rest) if line[:1] == b"{")
    for line in islice(lines, MAX_LEADING_BAD):
        try:
            if type(safe_json_loads(line, max_depth=None)) is dict:
                return True
        except orjson.JSONDecodeError:
            continue
    return False


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
    """Parse a single-object file, naming line and column (and a cut-off end) on failure."""
    try:
        return safe_json_loads(document, max_depth=None)
    except orjson.JSONDecodeError as exc:
        line = exc.lineno + offset - 1
        cut = exc.pos >= len(document.rstrip()) - 1
        hint = " (the file ends early: truncated?)" if cut else ""
        raise DecodeError(
            f"not valid JSON at line {line}, column {exc.colno}: {exc.msg}{hint}",
            path=path,
            line=line,
        ) from None
