"""OTLP/HTTP request bodies to span and log items, as the OTLP specification (v1.x) defines them.

A body is an ``ExportTraceServiceRequest`` (``POST /v1/traces``) or ``ExportLogsServiceRequest``
(``POST /v1/logs``), encoded as binary protobuf (``Content-Type: application/x-protobuf``) or
OTLP/JSON (``application/json``), optionally gzip-compressed (``Content-Encoding: gzip``). The
response uses the request's encoding; spans or log records that cannot be used are reported in
the response's ``partial_success``, never as a failed request. Decoding reuses the ingest's
validating OTLP decoder (:mod:`agent_eval.ingest.containers._otlp_records`), so a file and a
live request read alike; a protobuf body is parsed with the opentelemetry-proto classes and
walked into the OTLP/JSON shape by the same walker the ``otlp-proto`` file container uses
(:func:`~agent_eval.ingest.containers._otlp_proto.request_dict`: raw id bytes, integer times),
so a span whose id has the wrong length is refused alike both ways.
"""

from __future__ import annotations

import zlib
from dataclasses import dataclass
from typing import Any, Literal

import orjson
from google.protobuf.json_format import MessageToDict
from google.protobuf.message import DecodeError as ProtobufDecodeError
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import (
    ExportLogsPartialSuccess,
    ExportLogsServiceRequest,
    ExportLogsServiceResponse,
)
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
    ExportTracePartialSuccess,
    ExportTraceServiceRequest,
    ExportTraceServiceResponse,
)

from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_proto import request_dict, split_request
from agent_eval.ingest.containers._otlp_records import iter_request

__all__ = [
    "JSON",
    "PROTOBUF",
    "Encoding",
    "PayloadError",
    "Signal",
    "decode",
    "encoding_of",
    "response_body",
]

PROTOBUF = "application/x-protobuf"
JSON = "application/json"
Signal = Literal["traces", "logs"]
Encoding = Literal["protobuf", "json"]
SOURCE = SourceLocation("<otlp-http>")


@dataclass(frozen=True)
class PayloadError(Exception):
    """A request the receiver refuses, with the HTTP status to answer.

    Attributes:
        status: 400 (malformed), 413 (too large) or 415 (unsupported media type).
        reason: A short counter key (``malformed``, ``too_large``, ``unsupported_media_type``).
        message: What was wrong, for the response body and the log.

    """

    status: int
    reason: str
    message: str

    def __str__(self) -> str:
        return self.message


def encoding_of(content_type: str | None) -> Encoding:
    """The encoding named by a ``Content-Type`` header.

    Raises:
        PayloadError: 415 for anything but protobuf or JSON.

    """
    media = (content_type or "").split(";", 1)[0].strip().lower()
    if media == PROTOBUF:
        return "protobuf"
    if media == JSON:
        return "json"
    raise PayloadError(
        415,
        "unsupported_media_type",
        f"Content-Type {content_type!r} is not supported; send {PROTOBUF} or {JSON}",
    )


def _gunzip(body: bytes, limit: int) -> bytes:
    inflater = zlib.decompressobj(16 + zlib.MAX_WBITS)
    try:
        data = inflater.decompress(body, limit + 1)
    except zlib.error as exc:
        raise PayloadError(
            400, "malformed", f"the gzip body cannot be decompressed: {exc}"
        ) from None
    if len(data) > limit:
        raise PayloadError(
            413, "too_large", f"the decompressed body exceeds the limit of {limit} bytes"
        )
    if not inflater.eof:
        raise PayloadError(400, "malformed", "the gzip body is truncated")
    return data


def decode(
    body: bytes,
    *,
    signal: Signal,
    encoding: Encoding,
    content_encoding: str | None,
    max_bytes: int,
) -> tuple[list[ContainerItem], int]:
    """Decode one request body into items; returns ``(items, decoded size in bytes)``.

    Raises:
        PayloadError: 400 for a body that is not a valid request of ``signal`` (or bad gzip),
            413 when it exceeds ``max_bytes`` after decompression, 415 for an unknown
            ``Content-Encoding``.

    """
    coding = (content_encoding or "identity").strip().lower()
    if coding == "gzip":
        body = _gunzip(body, max_bytes)
    elif coding != "identity":
        raise PayloadError(
            415, "unsupported_media_type", f"Content-Encoding {content_encoding!r} is not supported"
        )
    if len(body) > max_bytes:
        raise PayloadError(413, "too_large", f"the body exceeds the limit of {max_bytes} bytes")
    request, skipped = _parse(body, signal, encoding)
    key = "resourceSpans" if signal == "traces" else "resourceLogs"
    other = "resourceLogs" if signal == "traces" else "resourceSpans"
    if not isinstance(request, dict) or other in request:
        raise PayloadError(400, "malformed", f"not an OTLP {signal} export request")
    request.setdefault(key, [])
    return [*skipped, *iter_request(request, SOURCE)], len(body)


def _parse(body: bytes, signal: Signal, encoding: Encoding) -> tuple[Any, list[Skipped]]:
    """The request as OTLP JSON, and the records of a protobuf body parsed apart that failed.

    The decoders of the file containers: JSON through :func:`~agent_eval.ingest._safe_text.
    loads` (lone surrogates replaced, numbers past the double range cost their span), and a
    protobuf body the decoder refuses whole split into its records
    (:func:`~agent_eval.ingest.containers._otlp_proto.split_request`), so one bad span costs
    only itself.
    """
    if encoding == "json":
        try:
            return (safe_json_loads(body, max_depth=None) if body.strip() else {}), []
        except orjson.JSONDecodeError as exc:
            raise PayloadError(400, "malformed", f"the body is not JSON: {exc}") from None
    cls = ExportTraceServiceRequest if signal == "traces" else ExportLogsServiceRequest
    try:
        return request_dict(cls.FromString(body)), []
    except (ProtobufDecodeError, RuntimeError, ValueError) as exc:
        split = split_request(cls, body, SOURCE.path)
        if split is None:
            raise PayloadError(
                400, "malformed", f"the body is not a protobuf {cls.__name__}: {exc}"
            ) from None
    return request_dict(split[0]), split[1]


def response_body(signal: Signal, encoding: Encoding, rejected: int, message: str = "") -> bytes:
    """The ``Export*ServiceResponse`` body, with ``partial_success`` when some were rejected."""
    if signal == "traces":
        response: Any = ExportTraceServiceResponse()
        if rejected:
            response.partial_success.CopyFrom(
                ExportTracePartialSuccess(rejected_spans=rejected, error_message=message)
            )
    else:
        response = ExportLogsServiceResponse()
        if rejected:
            response.partial_success.CopyFrom(
                ExportLogsPartialSuccess(rejected_log_records=rejected, error_message=message)
            )
    if encoding == "protobuf":
        data: bytes = response.SerializeToString()
        return data
    return orjson.dumps(MessageToDict(response))
