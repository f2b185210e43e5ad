"""Results as ``gen_ai.evaluation.result`` events: the real SDK and OTLP/HTTP log exporter.

``agent-eval score`` runs on the recorded OpenInference fixture with the fake judge; the events
go over OTLP/HTTP (protobuf, the SDK's ``OTLPLogExporter``) to a capturing HTTP server and to
the OTLP JSON file. Each conversation-level event must be parented to the conversation's agent
invocation span, computed here from the raw spans (the root ``AGENT`` span of its last trace),
and every event must hold to the convention's keys and types (:data:`EVENT_SPEC`).
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Any

import orjson
import pytest
from google.protobuf.json_format import MessageToDict
from opentelemetry.proto.collector.logs.v1.logs_service_pb2 import ExportLogsServiceRequest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.otel import _semconv as sc
from agent_eval.otel._events import (
    EVENTS_FILE_NAME,
    CountingExporter,
    EvaluationEvents,
    OtlpJsonFileExporter,
    evaluation_attributes,
    logs_endpoint,
    otlp_exporter,
)
from agent_eval.otel._targets import SpanTarget
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge
from .capture import CaptureServer

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/otel/openinference-openai.otlp.json"
runner = CliRunner()


def _attrs(items: list[dict[str, Any]]) -> dict[str, Any]:
    return {a["key"]: next(iter(a["value"].values())) for a in items}


def agent_spans() -> dict[str, tuple[str, str]]:
    """``{session.id: (trace_id, span_id)}`` of the root AGENT span that ended last (the file)."""
    document = orjson.loads(FIXTURE.read_bytes())
    best: dict[str, tuple[int, str, str]] = {}
    for resource in document["resourceSpans"]:
        for scope in resource["scopeSpans"]:
            for span in scope["spans"]:
                attrs = _attrs(span["attributes"])
                if attrs.get("openinference.span.kind") != "AGENT" or span.get("parentSpanId"):
                    continue
                end = int(span["endTimeUnixNano"])
                session = attrs["session.id"]
                if session not in best or end > best[session][0]:
                    best[session] = (end, span["traceId"], span["spanId"])
    return {k: (t, s) for k, (_, t, s) in best.items()}


EVENT_SPEC: dict[str, tuple[type, str]] = {
    "gen_ai.evaluation.name": (str, "required"),
    "gen_ai.evaluation.score.value": (float, "conditionally_required"),
    "gen_ai.evaluation.score.label": (str, "conditionally_required"),
    "gen_ai.evaluation.explanation": (str, "recommended"),
    "gen_ai.response.id": (str, "recommended"),
    "error.type": (str, "conditionally_required"),
    "gen_ai.conversation.id": (str, "registry"),
}
"""The ``gen_ai.evaluation.result`` event's attributes (semantic-conventions-genai
``model/gen-ai/events.yaml`` at fecf9e1, as v1.38.0), plus ``gen_ai.conversation.id`` of the GenAI
registry: key -> (Python type of the OTLP value, requirement level)."""


def check_event_attributes(attrs: dict[str, Any]) -> None:
    """Fail unless ``attrs`` hold to :data:`EVENT_SPEC` (no other ``gen_ai.*``/``error.*`` key)."""
    for key, value in attrs.items():
        if key.startswith(("gen_ai.", "error.")):
            assert key in EVENT_SPEC, f"{key} is not an attribute of the event"
            assert isinstance(value, EVENT_SPEC[key][0]), (key, value)
    assert "gen_ai.evaluation.name" in attrs
    if attrs["agent_eval.status"] == "ok":
        assert {"gen_ai.evaluation.score.value", "gen_ai.evaluation.score.label"} <= set(attrs)
        assert "error.type" not in attrs
    else:
        assert ("error.type" in attrs) == (attrs["agent_eval.status"] == "error")


def _events_from_proto(bodies: list[bytes]) -> list[dict[str, Any]]:
    events = []
    for body in bodies:
        request = ExportLogsServiceRequest.FromString(body)
        for resource in request.resource_logs:
            for scope in resource.scope_logs:
                for record in scope.log_records:
                    events.append(
                        {
                            "event_name": record.event_name,
                            "trace_id": record.trace_id.hex(),
                            "span_id": record.span_id.hex(),
                            "attributes": _attrs(MessageToDict(record)["attributes"]),
                            "scope": scope.scope.name,
                            "schema_url": scope.schema_url,
                        }
                    )
    return events


pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def _score(server: FakeModelServer, out: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(
        app,
        [
            "score",
            str(FIXTURE),
            "--judge",
            "fake-model",
            "--base-url",
            server.base_url,
            "--out",
            str(out),
            "--no-cache",
            *extra,
        ],
    )
    return result.exit_code, result.stdout, result.stderr


def test_score_sends_events_over_otlp_and_writes_the_json_file(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out = tmp_path / "run"
    with CaptureServer() as backend:
        code, _, err = _score(fake_server, out, "--otlp-endpoint", backend.url, "--events-file")
    assert code == 0, err
    assert {r.path for r in backend.requests} == {"/v1/logs"}
    assert {r.content_type for r in backend.requests} == {"application/x-protobuf"}
    events = _events_from_proto([r.body for r in backend.requests])
    rows = {r.conversation_id: r for r in load_results(out)}
    expected = agent_spans()
    assert len(events) == len(rows) == len(expected) == 5
    for event in events:
        attrs = event["attributes"]
        check_event_attributes(attrs)
        row = rows[attrs[sc.GEN_AI_CONVERSATION_ID]]
        assert event["event_name"] == "gen_ai.evaluation.result"
        assert (event["trace_id"], event["span_id"]) == expected[row.conversation_id]
        assert attrs["gen_ai.evaluation.name"] == "goal_accuracy"
        assert attrs["gen_ai.evaluation.score.value"] == row.score == 0.0  # no ZEBRA-DONE marker
        assert attrs["gen_ai.evaluation.score.label"] == "fail"
        assert attrs["gen_ai.evaluation.explanation"] == row.reason == "compared"
        assert "error.type" not in attrs
        assert attrs[sc.AGENT_EVAL_RUN_ID] == row.run_id
        assert attrs[sc.AGENT_EVAL_FORMATTER] == "transcript@2"
        assert event["scope"] == "agent_eval"
        assert event["schema_url"] == "https://opentelemetry.io/schemas/1.38.0"
    assert "evaluation events: 5 emitted" in err and "5 exported, 0 failed" in err
    # the same events as OTLP JSON lines, hex ids, readable by the protobuf JSON parser
    lines = (out / EVENTS_FILE_NAME).read_bytes().splitlines()
    from_file = [
        record
        for line in lines
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    assert sorted((r["traceId"], r["spanId"]) for r in from_file) == sorted(expected.values())
    assert {r["eventName"] for r in from_file} == {"gen_ai.evaluation.result"}


def test_an_unreachable_backend_is_counted_never_fatal(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OTEL_EXPORTER_OTLP_TIMEOUT", "1")
    script_goal_judge(fake_server)
    with CaptureServer() as closed:
        url = closed.url  # the port is free once the server is gone
    code, out, err = _score(fake_server, tmp_path / "run", "--otlp-endpoint", url)
    assert code == 0, err
    assert "scored + skipped + errored = units: 5 + 0 + 0 = 5" in out
    assert "evaluation events: 5 emitted" in err and "0 exported, 5 failed" in err
    assert len(load_results(tmp_path / "run")) == 5


def test_a_backend_rejecting_the_export_is_counted(make_result: Any, tmp_path: Path) -> None:
    with CaptureServer(status=400) as backend:
        events = EvaluationEvents([otlp_exporter(backend.url)])
        events.emit(make_result("c1", "1"))
        report = events.close()
    assert report.emitted == 1 and report.failures == 1
    assert len(backend.requests) == 1  # 400 is not retried by the OTLP exporter


def test_error_rows_carry_error_type_and_skipped_rows_do_not(
    make_result: Any, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    error = make_result("c1", None, error_type="invalid_judge_output", error_message="bad")
    attrs = evaluation_attributes(error)
    check_event_attributes(attrs)
    assert attrs["error.type"] == "invalid_judge_output"
    skipped = make_result("c3", None, status="skipped", error_type="no_context")
    skipped_attrs = evaluation_attributes(skipped)
    check_event_attributes(skipped_attrs)
    assert "error.type" not in skipped_attrs  # a skip is not an error to a backend
    assert skipped_attrs["agent_eval.status"] == "skipped"
    assert skipped_attrs["agent_eval.skip_reason"] == "no_context"
    assert "gen_ai.evaluation.score.value" not in attrs
    assert "gen_ai.evaluation.score.label" not in attrs
    ok = evaluation_attributes(make_result("c2", "1"), note="re-scored")
    assert ok["gen_ai.evaluation.score.value"] == 1.0
    assert ok["gen_ai.evaluation.score.label"] == "pass"
    assert ok["agent_eval.note"] == "re-scored"
    # the file exporter: an unwritable path is a counted failure, logged
    blocked = tmp_path / "file"
    blocked.write_text("")
    exporter = CountingExporter(OtlpJsonFileExporter(blocked / "events.jsonl"), "file")
    events = EvaluationEvents([exporter], targets={"c1": SpanTarget("ab" * 16, "cd" * 8)})
    caplog.set_level(logging.WARNING)
    events.emit(error)
    report = events.close()
    assert (report.emitted, exporter.exported, exporter.failed) == (1, 0, 1)
    assert "cannot write" in caplog.text


def test_logs_endpoint() -> None:
    assert logs_endpoint("http://h:4318") == "http://h:4318/v1/logs"
    assert logs_endpoint("http://h:4318/") == "http://h:4318/v1/logs"
    assert logs_endpoint("https://h/otlp/v1/logs") == "https://h/otlp/v1/logs"
    with pytest.raises(ValueError, match="http"):
        logs_endpoint("h:4318")
