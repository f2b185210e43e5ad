"""Jaeger UI JSON export container."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson
import pytest

from agent_eval.errors import DecodeError
from agent_eval.ingest import ingest
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._jaeger import JaegerContainer

TRACE = "3e289017fe03ffd7c4145316d2eb3d0d"


def jaeger_span(span_id: str, parent: str | None = None, **extra: Any) -> dict[str, Any]:
    refs = [{"refType": "CHILD_OF", "traceID": TRACE, "spanID": parent}] if parent else []
    return {
        "traceID": TRACE,
        "spanID": span_id,
        "operationName": extra.pop("name", "op"),
        "references": refs,
        "startTime": 1_771_237_534_594_565,
        "duration": 2_343_756,
        "tags": extra.pop("tags", []),
        "logs": extra.pop("logs", []),
        "processID": "p1",
        **extra,
    }


def write(tmp_path: Path, spans: list[dict[str, Any]]) -> Path:
    doc = {
        "data": [
            {
                "traceID": TRACE,
                "spans": spans,
                "processes": {
                    "p1": {
                        "serviceName": "helm_agent",
                        "tags": [{"key": "service.namespace", "type": "string", "value": "k"}],
                    }
                },
            }
        ]
    }
    path = tmp_path / "trace.jaeger.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def read(path: Path) -> list[Any]:
    return list(JaegerContainer().read(str(path)))


def test_times_parentage_process_and_otel_tags_are_mapped(tmp_path: Path) -> None:
    tags = [
        {"key": "span.kind", "type": "string", "value": "client"},
        {"key": "otel.scope.name", "type": "string", "value": "openllmetry"},
        {"key": "otel.scope.version", "type": "string", "value": "0.47.3"},
        {"key": "otel.status_code", "type": "string", "value": "ERROR"},
        {"key": "otel.status_description", "type": "string", "value": "boom"},
        {"key": "gen_ai.usage.input_tokens", "type": "int64", "value": 1820},
        {"key": "gen_ai.response.finish_reasons", "type": "string", "value": '["stop"]'},
        {"key": "gen_ai.prompt.0.content", "type": "string", "value": '[{"type": "text"}]'},
    ]
    (root, child) = read(
        write(
            tmp_path,
            [
                jaeger_span("e3daa973379bbe3b"),
                jaeger_span("6c728e555894414d", "e3daa973379bbe3b", tags=tags),
            ],
        )
    )
    assert isinstance(child, SpanRecord)
    assert root.parent_span_id is None
    assert child.parent_span_id == "e3daa973379bbe3b"
    assert child.start_time_unix_nano == 1_771_237_534_594_565_000
    assert child.end_time_unix_nano - child.start_time_unix_nano == 2_343_756_000
    assert (child.kind, child.scope_name, child.scope_version) == (
        "CLIENT",
        "openllmetry",
        "0.47.3",
    )
    assert (child.status_code, child.status_message) == ("ERROR", "boom")
    assert child.resource == {"service.namespace": "k", "service.name": "helm_agent"}
    # an OTLP string array Jaeger flattened to JSON comes back as a list; message JSON does not
    assert child.attributes["gen_ai.response.finish_reasons"] == ["stop"]
    assert child.attributes["gen_ai.prompt.0.content"] == '[{"type": "text"}]'
    assert "span.kind" not in child.attributes and "otel.scope.name" not in child.attributes


def test_logs_become_events_and_error_tag_sets_status(tmp_path: Path) -> None:
    logs = [
        {
            "timestamp": 1_771_237_536_588_288,
            "fields": [
                {"key": "event", "type": "string", "value": "exception"},
                {"key": "exception.message", "type": "string", "value": "queue empty"},
            ],
        }
    ]
    tags = [{"key": "error", "type": "bool", "value": True}]
    (span,) = read(write(tmp_path, [jaeger_span("ca1a5bed19797e82", logs=logs, tags=tags)]))
    (event,) = span.events
    assert event.name == "exception"
    assert event.time_unix_nano == 1_771_237_536_588_288_000
    assert event.attributes == {"exception.message": "queue empty"}
    assert span.status_code == "ERROR"


def test_short_hex_ids_are_padded_and_bad_ids_are_skipped(tmp_path: Path) -> None:
    spans = [jaeger_span("abc"), jaeger_span("not-an-id")]
    good, bad = read(write(tmp_path, spans))
    assert good.span_id == "0000000000000abc"
    assert isinstance(bad, Skipped) and bad.reason == "invalid_span_id"
    assert "not-an-id" in bad.detail


def test_invalid_json_is_a_decode_error_naming_the_file(tmp_path: Path) -> None:
    path = tmp_path / "broken.json"
    path.write_text('{"data": [{"traceID": "3e28"')
    with pytest.raises(DecodeError, match=r"broken\.json"):
        read(path)


def test_sniff_recognises_jaeger_and_not_otlp() -> None:
    container = JaegerContainer()
    assert container.sniff("x", b'{"data": [{"traceID": "a", "spans": [], "processes": {}}]}')
    assert not container.sniff("x", b'{"resourceSpans": [{"scopeSpans": []}]}')


def test_kagent_export_ingests_through_the_pipeline(shared_data: Path) -> None:
    path = shared_data / "otel" / "mixed-adk-openllmetry__agentevals__kagent-helm.jaeger.json"
    run = ingest(path)
    (trace,) = run.collect()
    assert run.report.files[0].container == "jaeger"
    assert trace.conversation_id == "ctx-7ed9780f-3688-4fc0-b10b-2e4df2f83cf0"
    assert trace.trace_ids == (TRACE,)
