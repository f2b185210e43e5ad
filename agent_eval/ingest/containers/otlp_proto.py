"""OTLP/protobuf files: one binary ``ExportTraceServiceRequest`` or ``ExportLogsServiceRequest``.

Parsed with the opentelemetry-proto message classes, then turned into the OTLP JSON shape with
protobuf's own ``json_format`` so that one validating decoder
(:mod:`agent_eval.ingest.containers._otlp_records`) serves both encodings. The two request types
share their wire layout down to the record, so a logs request parses as a traces request full
of id-less spans; the container picks traces when some span has a 16-byte trace id, else logs.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import TYPE_CHECKING, Any

from agent_eval.errors import DecodeError
from agent_eval.ingest.containers import builtin
from agent_eval.ingest.containers._otlp_records import iter_request
from agent_eval.ingest.containers.base import ContainerItem
from agent_eval.ingest.sources import open_input
from agent_eval.ingest.spans import SourceLocation

if TYPE_CHECKING:  # protobuf is imported when a file is read, not to sniff one (start-up)
    from google.protobuf.message import Message

__all__ = ["OtlpProtoContainer"]

_LENGTH_DELIMITED_FIELD_1 = 0x0A
"""Tag byte of field 1, wire type 2: ``resource_spans`` / ``resource_logs`` of a request."""
_RESOURCE_OR_SCOPE = (0x0A, 0x12)
"""Tag bytes that open a ResourceSpans/ResourceLogs: ``resource`` (1) or the scope list (2)."""


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
        yield from iter_request(_decode(data, path), SourceLocation(path))


def _parse(cls: type[Message], data: bytes) -> Message | None:
    from google.protobuf.message import DecodeError as ProtobufDecodeError

    try:
        return cls.FromString(data)
    except (ProtobufDecodeError, RuntimeError, ValueError):
        return None


def _decode(data: bytes, path: str) -> dict[str, Any]:
    from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceRequest,
    )

    traces = _parse(ExportTraceServiceRequest, data)
    if traces is not None and _has_trace_ids(traces):
        return _to_dict(traces)
    logs = _parse(ExportLogsServiceRequest, data)
    if logs is not None and any(s.log_records for r in logs.resource_logs for s in r.scope_logs):
        return _to_dict(logs)
    if traces is not None:
        return _to_dict(traces)
    raise DecodeError(
        "not a valid protobuf ExportTraceServiceRequest or ExportLogsServiceRequest "
        "(truncated or corrupt file?)",
        path=path,
    )


def _has_trace_ids(request: Any) -> bool:
    return any(
        len(span.trace_id) == 16
        for resource in request.resource_spans
        for scope in resource.scope_spans
        for span in scope.spans
    )


def _to_dict(message: Message) -> dict[str, Any]:
    from google.protobuf.json_format import MessageToDict

    result: dict[str, Any] = MessageToDict(message)
    return result
