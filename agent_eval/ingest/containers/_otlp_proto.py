"""OTLP/protobuf files: one binary ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``.

Parsed with the opentelemetry-proto message classes, then walked into the OTLP JSON shape
(:func:`request_dict`, the walker ``agent-eval serve`` uses for protobuf bodies too) so that one
validating decoder (:mod:`agent_eval.ingest.containers._otlp_records`) serves both encodings
and both paths. The two request types share their wire layout down to the record, so a logs
request parses as a traces request full of id-less spans; the container picks traces when some
span has a trace id (of any length: one of the wrong length is then refused by that decoder,
as ``serve`` refuses it), else logs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agent_eval.errors import DecodeError
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_proto_dict import request_dict
from agent_eval.ingest.containers._otlp_records import iter_request

if TYPE_CHECKING:  # protobuf is imported when a file is read, not to sniff one (start-up)
    from google.protobuf.message import Message

__all__ = ["OtlpProtoContainer", "request_dict", "split_request"]

_LENGTH_DELIMITED_FIELD_1 = 0x0A
"""Tag byte of field 1, wire type 2: ``resource_spans`` / ``resource_logs`` of a request."""
_RESOURCE_OR_SCOPE = (0x0A, 0x12)
"""Tag bytes that open a ResourceSpans/ResourceLogs: ``resource`` (1) or the scope list (2)."""
_WIRE_LENGTH_DELIMITED = 2
_FIXED_SIZES = {1: 8, 5: 4}
"""Wire types of fixed size: I64 (1) and I32 (5), in bytes."""
_RECORD_DEPTH = 2
"""Levels above a span or log record: request (0), resource (1), scope (2)."""


def _varint(data: bytes, pos: int) -> tuple[int, int] | None:
    """Decode a protobuf varint at ``pos``: ``(value, next position)``, or ``None``."""
    value = shift = 0
    while pos < len(data) and shift < 64:
        byte = data[pos]
        value |= (byte & 0x7F) << shift
        pos += 1
        if not byte & 0x80:
            return value, pos
        shift += 7
    return None


def _looks_like_text(head: bytes) -> bool:
    try:
        text = head.decode("utf-8")
    except UnicodeDecodeError:
        return False
    return text.lstrip()[:1] in ("{", "[", "")


class OtlpProtoContainer(builtin.OtlpProto):
    """A binary OTLP export request (traces or logs), as the OTLP/HTTP protobuf body."""

    def sniff(self, path: str, head: bytes) -> bool:
        """Whether the file opens with a length-delimited field 1 holding a resource entry."""
        if not head or head[0] != _LENGTH_DELIMITED_FIELD_1 or _looks_like_text(head):
            return False
        decoded = _varint(head, 1)
        return decoded is not None and head[decoded[1] : decoded[1] + 1] in (
            bytes([tag]) for tag in _RESOURCE_OR_SCOPE
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the request's spans or log records.

        Raises:
            DecodeError: empty file, or bytes that are not a valid OTLP request.

        """
        with open_input(path) as stream:
            data = stream.read()
        if not data:
            raise DecodeError("the file is empty; expected a binary OTLP request", path=path)
        request, skipped = _decode(data, path)
        yield from skipped
        yield from iter_request(request, SourceLocation(path))


def _parse(cls: type[Message], data: bytes) -> Message | None:
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    try:
        return cls.FromString(data)
    except (ProtobufDecodeError, RuntimeError, ValueError):
        return None


def _decode(data: bytes, path: str) -> tuple[dict[str, Any], list[Skipped]]:
    """The request as OTLP JSON, and the records that could not be parsed on their own."""
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    traces = _parse(ExportTraceServiceRequest, data)
    if traces is not None and _has_trace_ids(traces):
        return request_dict(traces), []
    logs = _parse(ExportLogsServiceRequest, data)
    if logs is not None and any(s.log_records for r in logs.resource_logs for s in r.scope_logs):
        return request_dict(logs), []
    if traces is not None:
        return request_dict(traces), []
    for kind in (ExportTraceServiceRequest, ExportLogsServiceRequest):
        split = split_request(kind, data, path)
        if split is not None and (split[1] or _records(split[0])):
            return request_dict(split[0]), split[1]
    raise DecodeError(
        "not a valid protobuf ExportTraceServiceRequest or ExportLogsServiceRequest "
        "(truncated or corrupt file?)",
        path=path,
    )


def _records(request: Any) -> bool:
    """Whether a request split by :func:`_split` holds spans with trace ids, or log records."""
    if hasattr(request, "resource_spans"):
        return _has_trace_ids(request)
    return any(s.log_records for r in request.resource_logs for s in r.scope_logs)


def split_request(
    kind: type[Message], data: bytes, path: str
) -> tuple[Message, list[Skipped]] | None:
    """The request parsed one span (or log record) at a time; ``None`` if its frame is bad.

    A request the decoder refuses whole (an attribute nested deeper than its recursion limit,
    bytes corrupt inside one record) still has intact framing around its records: the three
    outer levels (request, resource, scope) are walked by hand and each record parsed alone,
    so a record that does not parse is one :class:`Skipped`, not the file. The live receiver
    splits a request body the same way.

    Args:
        kind: ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``.
        data: The request's bytes.
        path: What the skips name as their source (the file, ``<otlp-http>``).

    Returns:
        The request holding every record that parsed, and a skip for each one that did not.

    """
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    request = kind()
    skipped: list[Skipped] = []
    try:
        _split_level(request, data, 0, skipped, path)
    except (ProtobufDecodeError, ValueError, RuntimeError):
        return None
    return request, skipped


def _split_level(message: Any, data: bytes, depth: int, skipped: list[Skipped], path: str) -> None:
    """Fill ``message`` from ``data``; at ``depth`` 2 (a scope) parse each record alone.

    Raises:
        ValueError: the framing is broken.
        google.protobuf.message.DecodeError: a field other than the records does not parse.

    """
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    child = message.DESCRIPTOR.fields_by_number[1 if depth == 0 else 2]
    children = getattr(message, child.name)
    others = bytearray()
    for number, wire, start, value, end in _fields(data):
        if number != child.number or wire != _WIRE_LENGTH_DELIMITED:
            others += data[start:end]
        elif depth < _RECORD_DEPTH:
            _split_level(children.add(), data[value:end], depth + 1, skipped, path)
        else:
            record = children.add()
            try:
                record.ParseFromString(data[value:end])
            except (ProtobufDecodeError, ValueError, RuntimeError) as exc:
                del children[-1]
                skipped.append(_unparsed(record, data[value:end], exc, path))
    message.MergeFromString(bytes(others))


def _unparsed(record: Any, data: bytes, exc: Exception, path: str) -> Skipped:
    """The skip of a span or log record whose bytes do not parse, with its ids when readable."""
    is_span = "span_id" in record.DESCRIPTOR.fields_by_name and hasattr(record, "kind")
    ids = _raw_ids(record, data)
    what = "span" if is_span else "log record"
    return Skipped(
        reason=f"invalid_{what.replace(' ', '_')}",
        detail=f"the {what}'s protobuf bytes do not parse ({str(exc)[:120]}): attribute "
        "values nested deeper than the protobuf decoder allows (about 30 levels), or corrupt "
        "bytes; re-export it with shallower attributes",
        source=SourceLocation(path),
        trace_id=ids.get("trace_id"),
        span_id=ids.get("span_id"),
        spans=1 if is_span else 0,
        logs=0 if is_span else 1,
    )


def _raw_ids(record: Any, data: bytes) -> dict[str, str]:
    """The trace and span ids of a record's bytes (hex), read from its fields by number."""
    numbers = {
        record.DESCRIPTOR.fields_by_name[name].number: (name, size)
        for name, size in (("trace_id", 16), ("span_id", 8))
        if name in record.DESCRIPTOR.fields_by_name
    }
    found: dict[str, str] = {}
    try:
        for number, wire, _, value, end in _fields(data):
            name, size = numbers.get(number, ("", 0))
            if wire == _WIRE_LENGTH_DELIMITED and end - value == size and any(data[value:end]):
                found[name] = data[value:end].hex()
    except ValueError:
        pass  # the ids come first; what was read before the damage is kept
    return found


def _fields(data: bytes) -> Iterator[tuple[int, int, int, int, int]]:
    """``(field number, wire type, field start, value start, end)`` of each field of ``data``.

    Protobuf wire format (protobuf.dev, "Encoding"): a varint key ``number << 3 | wire type``,
    then a varint (0), 8 bytes (1), a varint length and that many bytes (2), or 4 bytes (5).

    Raises:
        ValueError: a key or length runs past the end, or a wire type is not one of those.

    """
    pos = 0
    while pos < len(data):
        start = pos
        key = _varint(data, pos)
        if key is None:
            raise ValueError("truncated field key")
        number, wire, pos = key[0] >> 3, key[0] & 7, key[1]
        value = pos
        if wire == 0:
            varint = _varint(data, pos)
            pos = len(data) + 1 if varint is None else varint[1]
        elif wire == _WIRE_LENGTH_DELIMITED:
            length = _varint(data, pos)
            if length is None:
                raise ValueError("truncated length")
            value, pos = length[1], length[1] + length[0]
        elif wire in _FIXED_SIZES:
            pos += _FIXED_SIZES[wire]
        else:
            raise ValueError(f"wire type {wire} is not read")
        if pos > len(data):
            raise ValueError("a field runs past the end")
        yield number, wire, start, value, pos


def _has_trace_ids(request: Any) -> bool:
    return any(
        len(span.trace_id) > 0
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    )
