"""OTel JS ReadableSpan / ConsoleSpanExporter container."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import AssistantMessage, UserMessage
from agent_eval.ingest import detect_container, ingest
from agent_eval.ingest.containers._readable_span import ReadableSpanContainer, hrtime_to_nanos

TRACE = "5b8aa5a2d2c872e8321cf37308d69df2"


def readable(span_id: str, parent: str | None, attributes: dict[str, Any]) -> dict[str, Any]:
    return {
        "name": "chat gpt-4o",
        "kind": 2,
        "spanContext": {"traceId": TRACE, "spanId": span_id, "traceFlags": 1},
        "parentSpanContext": {"traceId": TRACE, "spanId": parent} if parent else None,
        "startTime": [1_700_000_000, 123_000_000],
        "endTime": [1_700_000_001, 0],
        "status": {"code": 2, "message": "rate limited"},
        "attributes": attributes,
        "events": [
            {
                "name": "exception",
                "time": [1_700_000_000, 500],
                "attributes": {"exception.type": "RateLimitError"},
            }
        ],
        "resource": {"_attributes": {"service.name": "web"}},
        "instrumentationScope": {"name": "@traceloop/instrumentation-openai", "version": "0.11"},
    }


def test_hrtime_kind_status_and_parent_context(tmp_path: Path) -> None:
    path = tmp_path / "spans.json"
    path.write_bytes(orjson.dumps([readable("051581bf3cb55c13", "0f0e0d0c0b0a0908", {"a": 1})]))
    (span,) = ReadableSpanContainer().read(str(path))
    assert span.start_time_unix_nano == 1_700_000_000_123_000_000
    assert span.end_time_unix_nano == 1_700_000_001_000_000_000
    assert (span.kind, span.status_code, span.status_message) == ("CLIENT", "ERROR", "rate limited")
    assert span.parent_span_id == "0f0e0d0c0b0a0908"
    assert span.resource == {"service.name": "web"}
    assert span.scope_name == "@traceloop/instrumentation-openai"
    assert span.events[0].time_unix_nano == 1_700_000_000_000_000_500
    assert hrtime_to_nanos([1, 2]) == 1_000_000_002


def test_console_exporter_shape(tmp_path: Path) -> None:
    record = {
        "traceId": TRACE,
        "parentId": "0f0e0d0c0b0a0908",
        "name": "x",
        "id": "051581bf3cb55c13",
        "kind": 1,
        "timestamp": 1_700_000_000_000_000,
        "duration": 2500,
        "attributes": {},
        "status": {"code": 0},
    }
    path = tmp_path / "console.jsonl"
    path.write_bytes(orjson.dumps(record) + b"\n")
    assert detect_container(str(path)).name == "otel-js"
    (span,) = ReadableSpanContainer().read(str(path))
    assert (span.kind, span.parent_span_id) == ("SERVER", "0f0e0d0c0b0a0908")
    assert span.end_time_unix_nano - span.start_time_unix_nano == 2_500_000


def test_a_dump_of_genai_spans_ingests_to_the_conversation(tmp_path: Path) -> None:
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": json.dumps(
            [{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]
        ),
        "gen_ai.output.messages": json.dumps(
            [{"role": "assistant", "parts": [{"type": "text", "content": "hello"}]}]
        ),
    }
    path = tmp_path / "dump.json"
    path.write_bytes(orjson.dumps(readable("051581bf3cb55c13", None, attrs)))
    run = ingest(path)
    (trace,) = run.collect()
    assert run.report.files[0].container == "otel-js"
    assert [(m.role, m.content) for m in trace.messages] == [("user", "hi"), ("assistant", "hello")]
    assert isinstance(trace.messages[1], AssistantMessage)
    assert trace.errors[0].error_type == "RateLimitError"
    assert isinstance(trace.messages[0], UserMessage)
