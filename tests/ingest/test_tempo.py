"""Grafana Tempo export container."""

from __future__ import annotations

import base64
from pathlib import Path
from typing import Any

import orjson
import pytest

from agent_eval.errors import DecodeError
from agent_eval.ingest import detect_container
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._tempo import TempoContainer

TRACE = "dd547580319ab0312cee07f1def50dad"
SPAN = "6ed9a13ee02d7cab"


def b64(hex_id: str) -> str:
    return base64.b64encode(bytes.fromhex(hex_id)).decode()


def write(
    tmp_path: Path, spans: list[dict[str, Any]], key: str = "instrumentationLibrarySpans"
) -> Path:
    scope_key = "instrumentationLibrary" if key == "instrumentationLibrarySpans" else "scope"
    doc = {
        "batches": [
            {
                "resource": {
                    "attributes": [{"key": "service.name", "value": {"stringValue": "helm"}}]
                },
                key: [{scope_key: {"name": "gcp.vertex.agent", "version": "1.22"}, "spans": spans}],
            }
        ]
    }
    path = tmp_path / "tempo.json"
    path.write_bytes(orjson.dumps(doc))
    return path


def test_enum_names_base64_ids_and_float64_int64s(tmp_path: Path) -> None:
    raw = {
        "traceId": b64(TRACE),
        "spanId": b64(SPAN),
        "parentSpanId": "ef7e626b81d68000",
        "name": "call_llm",
        "kind": "SPAN_KIND_INTERNAL",
        "startTimeUnixNano": 1.7775550537802747e18,
        "endTimeUnixNano": "1777555055622452200",
        "attributes": [
            {"key": "gen_ai.usage.input_tokens", "value": {"intValue": 2256.0}},
            {"key": "tags", "value": {"arrayValue": {"values": [{"stringValue": "a"}]}}},
        ],
        "status": {"code": "STATUS_CODE_ERROR", "message": "x"},
    }
    (span,) = TempoContainer().read(str(write(tmp_path, [raw])))
    assert (span.trace_id, span.span_id, span.parent_span_id) == (TRACE, SPAN, "ef7e626b81d68000")
    assert span.kind == "INTERNAL"
    assert span.start_time_unix_nano == round(1.7775550537802747e18)
    assert span.end_time_unix_nano == 1777555055622452200
    assert span.attributes == {"gen_ai.usage.input_tokens": 2256, "tags": ["a"]}
    assert (span.status_code, span.status_message) == ("ERROR", "x")
    assert (span.scope_name, span.resource) == ("gcp.vertex.agent", {"service.name": "helm"})


def test_scope_spans_naming_and_numeric_enums(tmp_path: Path) -> None:
    raw = {"traceId": TRACE, "spanId": SPAN, "name": "s", "kind": 3, "status": {"code": 1}}
    (span,) = TempoContainer().read(str(write(tmp_path, [raw], key="scopeSpans")))
    assert (span.kind, span.status_code, span.scope_version) == ("CLIENT", "OK", "1.22")


def test_a_span_with_a_bad_id_is_skipped_with_the_reason(tmp_path: Path) -> None:
    spans = [{"traceId": TRACE, "spanId": "xyz", "name": "bad"}, {"traceId": TRACE, "spanId": SPAN}]
    bad, good = TempoContainer().read(str(write(tmp_path, spans)))
    assert isinstance(bad, Skipped) and bad.reason == "invalid_span_id"
    assert bad.trace_id == TRACE
    assert good.span_id == SPAN


def test_not_a_tempo_export_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "x.json"
    path.write_text('{"batches": 3}')
    with pytest.raises(DecodeError, match="batches"):
        list(TempoContainer().read(str(path)))


def test_auto_detection_picks_tempo_for_batches(tmp_path: Path) -> None:
    path = write(tmp_path, [{"traceId": TRACE, "spanId": SPAN}])
    assert detect_container(str(path)).name == "tempo"


def test_a_span_with_a_non_object_event_is_skipped_with_the_reason(tmp_path: Path) -> None:
    # Tempo spans now go through the shared OTLP span decoder; before, an event that was not an
    # object was dropped from the span without a word
    raw = {"traceId": TRACE, "spanId": SPAN, "name": "s", "events": ["not an event"]}
    (item,) = TempoContainer().read(str(write(tmp_path, [raw])))
    assert isinstance(item, Skipped)
    assert (item.reason, item.trace_id, item.span_id) == ("invalid_event", TRACE, SPAN)
