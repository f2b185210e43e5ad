"""OTLP/protobuf container: binary trace and logs requests, sniffing, corrupt files."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer
from agent_eval.ingest.containers._otlp_proto import OtlpProtoContainer

TRACE = bytes.fromhex("0af7651916cd43dd8448eb211c80319c")
SPAN_A = bytes.fromhex("b7ad6b7169203331")
SPAN_B = bytes.fromhex("00f067aa0ba902b7")
container = OtlpProtoContainer()


def trace_request() -> ExportTraceServiceRequest:
    request = ExportTraceServiceRequest()
    resource = request.resource_spans.add()
    resource.resource.attributes.add(key="service.name").value.string_value = "agent"
    scope = resource.scope_spans.add()
    scope.scope.name, scope.scope.version = "lib", "1.0"
    root = scope.spans.add(trace_id=TRACE, span_id=SPAN_A, name="invoke_agent", kind=1)
    root.start_time_unix_nano, root.end_time_unix_nano = 10, 20
    root.attributes.add(key="gen_ai.agent.name").value.string_value = "planner"
    arr = root.attributes.add(key="stop").value.array_value
    arr.values.add().string_value = "x"
    arr.values.add().int_value = 2**62
    child = scope.spans.add(trace_id=TRACE, span_id=SPAN_B, parent_span_id=SPAN_A, name="chat")
    child.kind = 3
    child.status.code, child.status.message = 2, "rate limited"
    event = child.events.add(name="gen_ai.content.prompt", time_unix_nano=15)
    event.attributes.add(key="gen_ai.prompt").value.string_value = "hello"
    return request


def logs_request() -> ExportLogsServiceRequest:
    request = ExportLogsServiceRequest()
    scope = request.resource_logs.add().scope_logs.add()
    record = scope.log_records.add(time_unix_nano=7, trace_id=TRACE, span_id=SPAN_B)
    record.event_name = "gen_ai.user.message"
    record.body.kvlist_value.values.add(key="content").value.string_value = "hi"
    return request


def write(tmp_path: Path, data: bytes, name: str = "req.pb") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def test_trace_request_decodes_like_its_json_form(tmp_path: Path) -> None:
    path = write(tmp_path, trace_request().SerializeToString())
    root, child = container.read(path)
    assert isinstance(root, SpanRecord) and isinstance(child, SpanRecord)
    assert (root.trace_id, root.span_id) == (TRACE.hex(), SPAN_A.hex())
    assert root.attributes == {"gen_ai.agent.name": "planner", "stop": ["x", 2**62]}
    assert root.resource == {"service.name": "agent"} and root.scope_name == "lib"
    assert (child.parent_span_id, child.kind, child.status_code) == (
        SPAN_A.hex(),
        "CLIENT",
        "ERROR",
    )
    assert child.status_message == "rate limited"
    assert child.events[0].attributes == {"gen_ai.prompt": "hello"}
    assert (root.start_time_unix_nano, root.end_time_unix_nano) == (10, 20)


def test_logs_request_is_told_apart_from_traces(tmp_path: Path) -> None:
    path = write(tmp_path, logs_request().SerializeToString())
    (log,) = container.read(path)
    assert isinstance(log, LogRecord)
    assert (log.event_name, log.trace_id, log.span_id) == (
        "gen_ai.user.message",
        TRACE.hex(),
        SPAN_B.hex(),
    )
    assert log.body == {"content": "hi"} and log.time_unix_nano == 7


def test_bad_id_length_is_skipped_not_raised(tmp_path: Path) -> None:
    request = trace_request()
    request.resource_spans[0].scope_spans[0].spans[1].span_id = b"\x01\x02"
    items = list(container.read(write(tmp_path, request.SerializeToString())))
    assert isinstance(items[0], SpanRecord)
    assert isinstance(items[1], Skipped) and items[1].reason == "invalid_span_id"
    assert items[1].trace_id == TRACE.hex()


def test_sniff_accepts_requests_and_rejects_text(tmp_path: Path) -> None:
    for request in (trace_request(), logs_request()):
        assert container.sniff("x.pb", request.SerializeToString()[:64])
    assert not container.sniff("x", b'\n \n{"resourceSpans": []}')
    assert not container.sniff("x", b"")
    assert not OtlpJsonContainer().sniff("x", trace_request().SerializeToString())


@pytest.mark.parametrize("cut", [0.3, 0.7, 0.95])
def test_truncated_or_corrupt_file_is_a_decode_error_or_skips(tmp_path: Path, cut: float) -> None:
    data = trace_request().SerializeToString()
    path = write(tmp_path, data[: int(len(data) * cut)])
    try:
        items = list(container.read(path))
    except DecodeError as exc:
        assert exc.path == path
    else:  # a cut that happens to fall on a field boundary parses: only typed items come out
        assert all(isinstance(i, SpanRecord | Skipped) for i in items)


def test_empty_and_garbage_files(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="empty"):
        list(container.read(write(tmp_path, b"")))
    with pytest.raises(DecodeError, match="not a valid protobuf"):
        list(container.read(write(tmp_path, b"\x0a\xff\xff\xff\xff\x0f" + b"\x00" * 3)))


def test_json_and_proto_of_one_request_agree(tmp_path: Path) -> None:
    from google.protobuf.json_format import MessageToDict

    request = trace_request()
    json_path = write(tmp_path, orjson.dumps(MessageToDict(request)), "req.json")
    proto_path = write(tmp_path, request.SerializeToString())
    from_json = [(s.span_id, s.attributes) for s in OtlpJsonContainer().read(json_path)]  # type: ignore[union-attr]
    from_proto = [(s.span_id, s.attributes) for s in container.read(proto_path)]  # type: ignore[union-attr]
    assert from_json == from_proto
