"""OTLP/JSON container: single requests, Collector JSON Lines, converter dialects, bad input."""

from __future__ import annotations

import base64
import math
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import MessageToDict, ParseDict
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval.errors import DecodeError
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer
from agent_eval.testing._otlp import export_request, log_record, span

TRACE = "0af7651916cd43dd8448eb211c80319c"
SPAN_A = "b7ad6b7169203331"
SPAN_B = "00f067aa0ba902b7"
container = OtlpJsonContainer()


def write(tmp_path: Path, data: bytes, name: str = "spans.json") -> str:
    path = tmp_path / name
    path.write_bytes(data)
    return str(path)


def read(path: str) -> list[ContainerItem]:
    return list(container.read(path))


def rich_request() -> dict[str, Any]:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": 12,
        "temperature": 0.5,
        "stream": False,
        "stop": ["a", "b"],
        "blob": b"\x00\xff",
        "nested": {"k": [1, {"x": "y"}]},
    }
    spans = [
        span(TRACE, SPAN_A, "chat gpt-4o", kind=3, attributes=attrs, status=(2, "boom"),
             events=[("gen_ai.content.prompt", 5, {"gen_ai.prompt": "hi"})]),
        span(TRACE, SPAN_B, "execute_tool", parent_span_id=SPAN_A),
    ]  # fmt: skip
    logs = [log_record("gen_ai.user.message", {"content": "hi"}, trace_id=TRACE, span_id=SPAN_A)]
    return export_request(spans, logs, resource={"service.name": "agent"}, scope=("lib", "2.0"))


def test_single_object_decodes_every_value_kind(tmp_path: Path) -> None:
    path = write(tmp_path, orjson.dumps(rich_request(), option=orjson.OPT_INDENT_2))
    first, second, log = read(path)
    assert isinstance(first, SpanRecord) and isinstance(second, SpanRecord)
    assert (first.trace_id, first.span_id, first.parent_span_id) == (TRACE, SPAN_A, None)
    assert second.parent_span_id == SPAN_A
    assert first.kind == "CLIENT" and second.kind == "INTERNAL"
    assert first.attributes == {
        "gen_ai.operation.name": "chat",
        "gen_ai.usage.input_tokens": 12,
        "temperature": 0.5,
        "stream": False,
        "stop": ["a", "b"],
        "blob": b"\x00\xff",
        "nested": {"k": [1, {"x": "y"}]},
    }
    assert (first.status_code, first.status_message) == ("ERROR", "boom")
    assert first.events[0].name == "gen_ai.content.prompt"
    assert first.events[0].attributes == {"gen_ai.prompt": "hi"}
    assert first.resource == {"service.name": "agent"}
    assert (first.scope_name, first.scope_version) == ("lib", "2.0")
    assert first.end_time_unix_nano - first.start_time_unix_nano == 1_000_000
    assert isinstance(log, LogRecord)
    assert (log.event_name, log.trace_id, log.span_id) == ("gen_ai.user.message", TRACE, SPAN_A)
    assert log.body == {"content": "hi"}
    assert str(first.source) == path


def test_collector_json_lines_stream_with_line_numbers(tmp_path: Path) -> None:
    one = orjson.dumps(export_request([span(TRACE, SPAN_A)]))
    two = orjson.dumps(export_request([span(TRACE, SPAN_B)]))
    path = write(tmp_path, one + b"\n\n" + two + b"\n", "otel.jsonl")
    items = read(path)
    assert [str(i.source) for i in items] == [f"{path}:1", f"{path}:3"]
    assert [i.span_id for i in items if isinstance(i, SpanRecord)] == [SPAN_A, SPAN_B]


def _b64_ids(request: dict[str, Any]) -> dict[str, Any]:
    """The request with hex ids as base64, the proto3 JSON form ``ParseDict`` expects."""
    request = orjson.loads(orjson.dumps(request))
    for item in request["resourceSpans"][0]["scopeSpans"][0]["spans"]:
        for key in ("traceId", "spanId", "parentSpanId"):
            if key in item:
                item[key] = base64.b64encode(bytes.fromhex(item[key])).decode()
    return request


def test_protobuf_json_dialects_base64_ids_enum_names_snake_case(tmp_path: Path) -> None:
    request = rich_request()
    del request["resourceLogs"]
    message = ParseDict(_b64_ids(request), ExportTraceServiceRequest())
    canonical = MessageToDict(message)  # base64 ids, enum names, int64 as strings
    snake = MessageToDict(message, preserving_proto_field_name=True)
    assert canonical["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["kind"] == "SPAN_KIND_CLIENT"
    expected = [
        i for i in read(write(tmp_path, orjson.dumps(rich_request()))) if isinstance(i, SpanRecord)
    ]
    for n, dialect in enumerate((canonical, snake)):
        got = read(write(tmp_path, orjson.dumps(dialect), f"d{n}.json"))
        assert [(s.trace_id, s.span_id, s.parent_span_id, s.kind, s.status_code) for s in got] == [
            (s.trace_id, s.span_id, s.parent_span_id, s.kind, s.status_code) for s in expected
        ]  # fmt: skip
        assert [s.attributes for s in got] == [s.attributes for s in expected]


def test_log_event_name_from_attribute_and_legacy_keys(tmp_path: Path) -> None:
    record = log_record("", "body", attributes={"event.name": "gen_ai.choice"})
    del record["eventName"]
    legacy = {
        "resourceSpans": [
            {"instrumentationLibrarySpans": [{"instrumentationLibrary": {"name": "old"},
                                              "spans": [span(TRACE, SPAN_A)]}]}
        ],
        "resourceLogs": [{"scopeLogs": [{"logRecords": [record]}]}],
    }  # fmt: skip
    got_span, got_log = read(write(tmp_path, orjson.dumps(legacy)))
    assert isinstance(got_span, SpanRecord) and got_span.scope_name == "old"
    assert isinstance(got_log, LogRecord) and got_log.event_name == "gen_ai.choice"
    assert got_log.trace_id is None and got_log.body == "body"


def test_special_doubles_and_int_enums(tmp_path: Path) -> None:
    raw = span(TRACE, SPAN_A)
    raw["attributes"] = [{"key": "x", "value": {"doubleValue": "NaN"}},
                         {"key": "y", "value": {"doubleValue": "-Infinity"}},
                         {"key": "z", "value": {"intValue": 7}}]  # fmt: skip
    raw["status"] = {"code": "2"}
    (got,) = read(write(tmp_path, orjson.dumps(export_request([raw]))))
    assert isinstance(got, SpanRecord)
    assert math.isnan(got.attributes["x"]) and got.attributes["y"] == -math.inf
    assert got.attributes["z"] == 7 and got.status_code == "ERROR"


# --- sniffing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("head", "expected"),
    [
        (b'{"resourceSpans":[]}', True),
        (b'\xef\xbb\xbf\n  {\n  "resource_logs": []}', True),
        (b'{"batches":[{"resource":{}}]}', False),
        (b'{"schema_version":1,"conversation_id":"c"}', False),
        (b'[{"role":"user","content":"hi"}]', False),
        (b"\x0a\x02\x0a\x00", False),
    ],
)
def test_sniff(head: bytes, expected: bool) -> None:
    assert container.sniff("x", head) is expected


# --- bad input --------------------------------------------------------------------------------


def test_truncated_single_object_is_a_decode_error_naming_line_and_column(tmp_path: Path) -> None:
    data = orjson.dumps(rich_request(), option=orjson.OPT_INDENT_2)
    path = write(tmp_path, b"\n" + data[: len(data) // 2])
    with pytest.raises(DecodeError) as info:
        read(path)
    assert info.value.path == path and info.value.line is not None and info.value.line > 2
    assert "column" in str(info.value) and str(info.value).startswith(f"{path}:")


@pytest.mark.parametrize("data", [b"", b"  \n\n"])
def test_empty_file_is_a_decode_error(tmp_path: Path, data: bytes) -> None:
    path = write(tmp_path, data)
    with pytest.raises(DecodeError, match="empty"):
        read(path)


def test_non_utf8_line_is_skipped_with_its_line_number(tmp_path: Path) -> None:
    good = orjson.dumps(export_request([span(TRACE, SPAN_A)]))
    bad = good.replace(b'"span"', b'"sp\xff\xfen"')
    path = write(tmp_path, good + b"\n" + bad + b"\n" + good + b"\n", "x.jsonl")
    items = read(path)
    skipped = [i for i in items if isinstance(i, Skipped)]
    assert len(items) == 3 and len(skipped) == 1
    assert skipped[0].reason == "invalid_json" and str(skipped[0].source) == f"{path}:2"
    assert "UTF-8" in skipped[0].detail


def test_non_utf8_single_object_is_a_decode_error(tmp_path: Path) -> None:
    data = orjson.dumps(rich_request(), option=orjson.OPT_INDENT_2).replace(b"agent", b"ag\xffnt")
    with pytest.raises(DecodeError, match="UTF-8"):
        read(write(tmp_path, data))


@pytest.mark.parametrize(
    ("mutate", "reason", "names"),
    [
        (lambda s: s.update(traceId="xyz"), "invalid_trace_id", "'xyz'"),
        (lambda s: s.pop("traceId"), "invalid_trace_id", "missing"),
        (lambda s: s.update(spanId="0" * 16), "invalid_span_id", "all zeros"),
        (lambda s: s.update(spanId=12345), "invalid_span_id", "12345"),
        (lambda s: s.update(parentSpanId="abc"), "invalid_parent_span_id", "'abc'"),
        (lambda s: s.update(kind="SPAN_KIND_SIDEWAYS"), "invalid_span_kind", "SIDEWAYS"),
        (lambda s: s.update(startTimeUnixNano="yesterday"), "invalid_time", "yesterday"),
        (lambda s: s["attributes"].append({"key": "n", "value": {"intValue": "1.5"}}),
         "invalid_attribute", "'n'"),
        (lambda s: s["attributes"].append({"key": "s", "value": {"stringValue": 5}}),
         "invalid_attribute", "'s'"),
        (lambda s: s["attributes"].append({"key": "b", "value": {"boolValue": "true"}}),
         "invalid_attribute", "'b'"),
        (lambda s: s["attributes"].append({"key": "w", "value": {"weirdValue": 1}}),
         "invalid_attribute", "weirdValue"),
        (lambda s: s["attributes"].append({"value": {"stringValue": "no key"}}),
         "invalid_attribute", "no string key"),
        (lambda s: s.update(status={"code": 9}), "invalid_status", "9"),
        (lambda s: s.update(events=[{"name": 3}]), "invalid_event", "3"),
    ],
)  # fmt: skip
def test_bad_span_is_skipped_with_reason_ids_and_the_rest_kept(
    tmp_path: Path, mutate: Any, reason: str, names: str
) -> None:
    bad = span(TRACE, SPAN_A, attributes={"ok": 1})
    mutate(bad)
    good = span(TRACE, SPAN_B)
    path = write(tmp_path, orjson.dumps(export_request([bad, good])) + b"\n", "x.jsonl")
    skipped, kept = read(path)
    assert isinstance(kept, SpanRecord) and kept.span_id == SPAN_B
    assert isinstance(skipped, Skipped)
    assert skipped.reason == reason and names in skipped.detail
    assert str(skipped.source) == f"{path}:1" and skipped.spans == 1
    if reason != "invalid_trace_id":
        assert skipped.trace_id == TRACE
    if reason not in ("invalid_span_id",):
        assert skipped.span_id == SPAN_A


def test_bad_log_record_counts_as_a_log(tmp_path: Path) -> None:
    bad = log_record("gen_ai.user.message", trace_id="nothex")
    (skipped,) = read(write(tmp_path, orjson.dumps(export_request(logs=[bad]))))
    assert isinstance(skipped, Skipped)
    assert (skipped.reason, skipped.spans, skipped.logs) == ("invalid_trace_id", 0, 1)


def test_malformed_resource_skips_its_spans_with_their_count(tmp_path: Path) -> None:
    request = export_request([span(TRACE, SPAN_A), span(TRACE, SPAN_B)])
    request["resourceSpans"][0]["resource"] = {"attributes": "service.name=x"}
    (skipped,) = read(write(tmp_path, orjson.dumps(request)))
    assert isinstance(skipped, Skipped) and skipped.spans == 2
    assert skipped.reason == "invalid_attribute"


def test_json_line_that_is_not_a_request(tmp_path: Path) -> None:
    good = orjson.dumps(export_request([span(TRACE, SPAN_A)]))
    path = write(tmp_path, good + b'\n{"hello": 1}\n[1, 2]\n', "x.jsonl")
    items = read(path)
    assert [i.reason for i in items if isinstance(i, Skipped)] == ["not_otlp", "not_otlp"]
    assert all(i.spans == 0 for i in items if isinstance(i, Skipped))


def test_huge_attribute_is_kept_whole(tmp_path: Path) -> None:
    huge = "x" * (20 * 1024 * 1024)
    (got,) = read(
        write(
            tmp_path, orjson.dumps(export_request([span(TRACE, SPAN_A, attributes={"big": huge})]))
        )
    )
    assert isinstance(got, SpanRecord) and got.attributes["big"] == huge
