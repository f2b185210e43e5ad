"""Request bodies: the receiver's protobuf walk reads exactly what the ingest's protobuf
container reads (same SpanRecords), for spans the SDK encoded itself."""

from __future__ import annotations

from pathlib import Path

from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from opentelemetry.trace import Status, StatusCode

from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._otlp_proto import OtlpProtoContainer
from agent_eval.live._payloads import decode, response_body


def _body() -> bytes:
    memory = InMemorySpanExporter()
    sdk = TracerProvider()
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    tracer = sdk.get_tracer("t", "1.2")
    with tracer.start_as_current_span("root", attributes={"b": True, "i": 7, "f": 1.5}) as root:
        root.add_event("evt", {"list": ["a", "b"], "n": 3})
        with tracer.start_as_current_span("child", attributes={"ints": [1, 2]}) as child:
            child.set_status(Status(StatusCode.ERROR, "boom"))
    return bytes(encode_spans(memory.get_finished_spans()).SerializeToString())


def test_protobuf_walk_matches_the_protobuf_container(tmp_path: Path) -> None:
    body = _body()
    live, size = decode(
        body, signal="traces", encoding="protobuf", content_encoding=None, max_bytes=1 << 20
    )
    path = tmp_path / "spans.pb"
    path.write_bytes(body)
    from_file = list(OtlpProtoContainer().read(str(path)))
    assert size == len(body)
    assert len(live) == len(from_file) == 2
    for a, b in zip(live, from_file, strict=True):
        assert isinstance(a, SpanRecord) and isinstance(b, SpanRecord)
        fields = (
            "trace_id",
            "span_id",
            "parent_span_id",
            "name",
            "kind",
            "attributes",
            "events",
            "status_code",
            "status_message",
            "resource",
            "scope_name",
            "scope_version",
            "start_time_unix_nano",
            "end_time_unix_nano",
        )
        assert {f: getattr(a, f) for f in fields} == {f: getattr(b, f) for f in fields}


def test_partial_success_in_both_encodings() -> None:
    from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import (
        ExportTraceServiceResponse,
    )

    proto = ExportTraceServiceResponse.FromString(response_body("traces", "protobuf", 2, "bad"))
    assert (proto.partial_success.rejected_spans, proto.partial_success.error_message) == (
        2,
        "bad",
    )
    assert response_body("logs", "json", 0) == b"{}"
