"""Issue 19, item 12: the containers real stacks write, each to the exact conversation.

The Python console output is written by the real SDK exporter (``ConsoleSpanExporter``); the
other files are built in the shape their writers use (Tempo's ``/api/v2/traces/<id>`` response,
Java's ``logging-otlp`` exporter lines).
"""

from __future__ import annotations

import io
import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import ConsoleSpanExporter, SimpleSpanProcessor
from opentelemetry.trace import SpanKind, StatusCode

from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage
from agent_eval.errors import DecodeError
from agent_eval.ingest import detect_container, ingest
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._python_console import PythonConsoleContainer
from agent_eval.ingest.containers._tempo import TempoContainer

TRACE = "5b8efff798038103d269b633813fc60c"
T0 = 1_700_000_000_000_000_000


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


CALL = {"type": "tool_call", "id": "call_1", "name": "weather", "arguments": {"city": "Paris"}}
RESULT = {"type": "tool_call_response", "id": "call_1", "response": "18C"}
FIRST_IN = [text("system", "Be brief."), text("user", "Weather in Paris?")]
FIRST_OUT = [{"role": "assistant", "parts": [CALL], "finish_reason": "tool_calls"}]
SECOND_IN = [*FIRST_IN, FIRST_OUT[0], {"role": "tool", "parts": [RESULT]}]
SECOND_OUT = [{**text("assistant", "18C and sunny."), "finish_reason": "stop"}]
EXPECTED = [
    ("system", "Be brief.", None),
    ("user", "Weather in Paris?", None),
    ("assistant", "", (("call_1", "weather", {"city": "Paris"}),)),
    ("tool", "18C", "call_1"),
    ("assistant", "18C and sunny.", ()),
]


def chat_attributes(inputs: list[Any], outputs: list[Any]) -> dict[str, str]:
    return {
        "gen_ai.operation.name": "chat",
        "gen_ai.provider.name": "openai",
        "gen_ai.request.model": "gpt-4o-mini",
        "gen_ai.input.messages": json.dumps(inputs),
        "gen_ai.output.messages": json.dumps(outputs),
    }


def plain(trace: AgentTrace) -> list[tuple[Any, ...]]:
    out: list[tuple[Any, ...]] = []
    for m in trace.messages:
        if isinstance(m, AssistantMessage):
            calls = tuple((c.id, c.name, c.arguments) for c in m.tool_calls or ())
            out.append((m.role, m.content, calls))
        elif isinstance(m, ToolMessage):
            out.append((m.role, m.content, m.tool_call_id))
        else:
            out.append((m.role, m.content, None))
    return out


# Python SDK ConsoleSpanExporter --------------------------------------------------------------


def console_output(indent: int | None = 4) -> str:
    """Two chat spans under an agent span, written by the real SDK console exporter."""
    out = io.StringIO()
    if indent is None:
        exporter = ConsoleSpanExporter(out=out, formatter=lambda s: s.to_json(indent=None) + "\n")
    else:
        exporter = ConsoleSpanExporter(out=out)
    provider = TracerProvider(resource=Resource.create({"service.name": "trip-agent"}))
    provider.add_span_processor(SimpleSpanProcessor(exporter))
    tracer = provider.get_tracer("test.agent")
    with tracer.start_as_current_span("invoke_agent concierge") as agent:
        agent.set_attribute("gen_ai.operation.name", "invoke_agent")
        agent.set_attribute("gen_ai.agent.name", "concierge")
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as first:
            first.set_attributes(chat_attributes(FIRST_IN, FIRST_OUT))
        with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT) as second:
            second.set_attributes(chat_attributes(SECOND_IN, SECOND_OUT))
            second.set_status(StatusCode.OK)
    provider.shutdown()
    return out.getvalue()


@pytest.mark.parametrize("indent", [4, None], ids=["pretty-concatenated", "one-per-line"])
def test_python_console_exporter_output(tmp_path: Path, indent: int | None) -> None:
    path = tmp_path / "console.txt"
    path.write_text(console_output(indent))
    assert '"trace_id": "0x' in path.read_text()
    assert detect_container(str(path)).name == "otel-python-console"
    run = ingest(path)
    (trace,) = run.collect()
    assert plain(trace) == EXPECTED
    assert trace.source.container == "otel-python-console"
    assert run.report.files[0].container == "otel-python-console"
    assert run.report.spans_read == 3 and run.report.balanced


def test_python_console_span_fields(tmp_path: Path) -> None:
    path = tmp_path / "console.txt"
    path.write_text(console_output())
    spans = [s for s in PythonConsoleContainer().read(str(path)) if isinstance(s, SpanRecord)]
    agent = spans[-1]  # the parent ends, and is written, last
    assert agent.parent_span_id is None and agent.kind == "INTERNAL"
    assert len(agent.trace_id) == 32 and not agent.trace_id.startswith("0x")
    assert [s.parent_span_id for s in spans[:2]] == [agent.span_id, agent.span_id]
    assert [s.kind for s in spans[:2]] == ["CLIENT", "CLIENT"]
    assert spans[1].status_code == "OK"
    assert spans[0].start_time_unix_nano <= spans[0].end_time_unix_nano
    assert spans[0].start_time_unix_nano > 1_600_000_000 * 10**9
    assert agent.resource["service.name"] == "trip-agent"
    assert [s.source.line for s in spans if s.source] == sorted(
        s.source.line for s in spans if s.source
    )


def test_python_console_cut_off_write_is_a_skip_naming_the_line(tmp_path: Path) -> None:
    whole = console_output()
    start = whole.rindex('{\n    "name": "invoke_agent')
    cut = whole[:start] + '{\n    "name": "inv'
    path = tmp_path / "console.txt"
    path.write_text(cut)
    items = list(PythonConsoleContainer().read(str(path)))
    assert sum(isinstance(i, SpanRecord) for i in items) == 2
    (skip,) = [i for i in items if isinstance(i, Skipped)]
    assert skip.reason == "invalid_json" and skip.source is not None
    assert skip.source.path == str(path) and skip.source.line == whole[:start].count("\n") + 1
    path.write_text("{not json")
    with pytest.raises(DecodeError, match=r"console\.txt:1"):
        list(PythonConsoleContainer().read(str(path)))


# Tempo /api/v2/traces/<id> -----------------------------------------------------------------


def otlp_attributes(attributes: dict[str, str]) -> list[dict[str, Any]]:
    return [{"key": k, "value": {"stringValue": v}} for k, v in attributes.items()]


def otlp_span(span_id: str, start: int, attributes: dict[str, str], **extra: Any) -> dict[str, Any]:
    return {
        "traceId": TRACE,
        "spanId": span_id,
        "name": "chat gpt-4o-mini",
        "kind": "SPAN_KIND_CLIENT",
        "startTimeUnixNano": str(start),
        "endTimeUnixNano": str(start + 1000),
        "attributes": otlp_attributes(attributes),
        "status": {},
        **extra,
    }


def resource_spans(spans: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "resource": {"attributes": otlp_attributes({"service.name": "trip-agent"})},
        "scopeSpans": [{"scope": {"name": "opentelemetry.instrumentation.openai_v2"},
                        "spans": spans}],
    }  # fmt: skip


def test_tempo_v2_trace_envelope(tmp_path: Path) -> None:
    spans = [
        otlp_span("eee19b7ec3c1b173", T0, chat_attributes(FIRST_IN, FIRST_OUT)),
        otlp_span("eee19b7ec3c1b174", T0 + 10**9, chat_attributes(SECOND_IN, SECOND_OUT)),
    ]
    envelope = {
        "trace": {"resourceSpans": [resource_spans(spans)]},
        "metrics": {"inspectedBytes": "14837", "completedJobs": 1, "totalJobs": 1},
        "status": "COMPLETE",
    }
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps(envelope))
    assert detect_container(str(path)).name == "tempo"
    run = ingest(path)
    (trace,) = run.collect()
    assert plain(trace) == EXPECTED
    assert trace.trace_ids == (TRACE,)
    assert run.report.spans_read == 2 and run.report.balanced


def test_tempo_envelope_without_spans_is_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "trace.json"
    path.write_bytes(orjson.dumps({"trace": {"resourceSpans": {}}, "metrics": {}}))
    with pytest.raises(DecodeError, match=r"trace\.json.*/api/v2/traces"):
        list(TempoContainer().read(str(path)))


# Java logging-otlp: one bare ResourceSpans per line -------------------------------------------


def test_bare_resource_spans_per_line(tmp_path: Path) -> None:
    # Java writes enums as numbers (kind 3 = SPAN_KIND_CLIENT)
    one = otlp_span("eee19b7ec3c1b173", T0, chat_attributes(FIRST_IN, FIRST_OUT), kind=3)
    two = otlp_span("eee19b7ec3c1b174", T0 + 10**9, chat_attributes(SECOND_IN, SECOND_OUT), kind=3)
    first, second = resource_spans([one]), resource_spans([two])
    lines = [orjson.dumps(first).decode(), "{bad json", orjson.dumps(second).decode()]
    path = tmp_path / "otel.log"
    path.write_text("\n".join(lines) + "\n")
    assert detect_container(str(path)).name == "otlp-json"
    run = ingest(path)
    (trace,) = run.collect()
    assert plain(trace) == EXPECTED
    assert run.report.spans_read == 2 and run.report.balanced
    (skip,) = run.report.skipped
    assert skip.reason == "invalid_json" and skip.source is not None
    assert (skip.source.path, skip.source.line) == (str(path), 2)


# Langfuse-native GENERATION observations (written by the Langfuse SDK, no OTel attributes) -----


LF_TRACE = "6f0ad5d2-3c5c-4a7e-9d43-4f1b8d3c2e10"
OPENAI_CALL = {"id": "call_1", "type": "function",
               "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}  # fmt: skip


def native_generation(obs_id: str, start: str, inputs: Any, output: Any) -> dict[str, Any]:
    """An observation as the Langfuse Python SDK's ``langfuse.openai`` wrapper records it."""
    return {
        "id": obs_id,
        "traceId": LF_TRACE,
        "type": "GENERATION",
        "name": "OpenAI-generation",
        "startTime": start,
        "endTime": start.replace(".000Z", ".900Z"),
        "completionStartTime": None,
        "model": "gpt-4o-mini",
        "modelParameters": {"temperature": 0, "max_tokens": "inf"},
        "input": inputs,
        "output": output,
        "metadata": {"user_tag": "demo"},
        "usage": {"input": 40, "output": 7, "total": 47, "unit": "TOKENS"},
        "usageDetails": {"input": 42, "output": 8, "total": 50},
        "level": "DEFAULT",
        "statusMessage": None,
        "parentObservationId": None,
        "version": None,
    }


def native_observations() -> list[dict[str, Any]]:
    sent = [{"role": "system", "content": "Be brief."},
            {"role": "user", "content": "Weather in Paris?"}]  # fmt: skip
    first_out = {"role": "assistant", "content": None, "tool_calls": [OPENAI_CALL]}
    replay = [*sent, first_out, {"role": "tool", "tool_call_id": "call_1", "content": "18C"}]
    return [
        native_generation("0b9c4f4e-7e0a-4b0a-9a59-0d1f2c3b4a51", "2025-06-01T10:00:00.000Z",
                          sent, first_out),
        native_generation("0b9c4f4e-7e0a-4b0a-9a59-0d1f2c3b4a52", "2025-06-01T10:00:02.000Z",
                          {"messages": replay},
                          {"role": "assistant", "content": "18C and sunny."}),
    ]  # fmt: skip


@pytest.mark.parametrize("shape", ["trace-export", "observations-api"])
def test_langfuse_native_generations(tmp_path: Path, shape: str) -> None:
    observations = native_observations()
    document: dict[str, Any]
    if shape == "trace-export":
        document = {"trace": {"id": LF_TRACE, "name": "trip"}, "observations": observations}
    else:
        document = {"data": observations,
                    "meta": {"page": 1, "limit": 50, "totalItems": 2, "totalPages": 1}}  # fmt: skip
    path = tmp_path / "langfuse.json"
    path.write_bytes(orjson.dumps(document))
    assert detect_container(str(path)).name == "langfuse"
    run = ingest(path)
    (trace,) = run.collect()
    assert plain(trace) == EXPECTED
    assert trace.trace_ids == (LF_TRACE.replace("-", ""),)
    ((model, tokens_in, tokens_out),) = [(u.model, u.input_tokens, u.output_tokens)
                                         for u in trace.usage]  # fmt: skip
    assert (model, tokens_in, tokens_out) == ("gpt-4o-mini", 84, 16)
    assert run.report.spans_used == 2 and run.report.balanced


# Item 8: pydantic-ai's v1 `events` attribute inside a Langfuse export -----------------------


def pydantic_ai_v1_observation(obs_id: str, start: str, events: list[Any]) -> dict[str, Any]:
    """A pydantic-ai (instrumentation version 1) chat span after Langfuse's OTLP ingestion.

    Langfuse moved the ``events`` attribute out: the message events became ``input``, the
    ``gen_ai.choice`` event ``output``.
    """
    choices = [e for e in events if e["event.name"] == "gen_ai.choice"]
    return {
        "id": obs_id,
        "traceId": TRACE,
        "type": "GENERATION",
        "name": "chat gpt-4o-mini",
        "startTime": start,
        "endTime": start,
        "parentObservationId": "7e2bd6c1a0f94d3b",
        "input": json.dumps([e for e in events if e not in choices]),
        "output": json.dumps(choices[0]),
        "model": "gpt-4o-mini",
        "metadata": {
            "attributes": {
                "gen_ai.operation.name": "chat",
                "gen_ai.system": "openai",
                "gen_ai.request.model": "gpt-4o-mini",
                "model_request_parameters": json.dumps(
                    {"function_tools": [], "allow_text_output": True}
                ),
                "gen_ai.usage.input_tokens": "50",
                "gen_ai.usage.output_tokens": "9",
                "logfire.json_schema": "{}",
            },
            "resourceAttributes": {"service.name": "trip-agent"},
            "scope": {"name": "pydantic-ai", "version": "0.4.0"},
        },
        "level": "DEFAULT",
    }


def test_pydantic_ai_v1_events_in_a_langfuse_export(tmp_path: Path) -> None:
    system = {"event.name": "gen_ai.system.message", "role": "system", "content": "Be brief.",
              "gen_ai.system": "openai"}  # fmt: skip
    user = {"event.name": "gen_ai.user.message", "role": "user", "content": "Weather in Paris?",
            "gen_ai.message.index": 0, "gen_ai.system": "openai"}  # fmt: skip
    call = {"event.name": "gen_ai.assistant.message", "role": "assistant",
            "tool_calls": [{"id": "call_1", "type": "function",
                            "function": {"name": "weather", "arguments": '{"city": "Paris"}'}}],
            "gen_ai.message.index": 1, "gen_ai.system": "openai"}  # fmt: skip
    result = {"event.name": "gen_ai.tool.message", "role": "tool", "id": "call_1",
              "name": "weather", "content": "18C", "gen_ai.message.index": 2,
              "gen_ai.system": "openai"}  # fmt: skip
    first_choice = {"event.name": "gen_ai.choice", "index": 0,
                    "message": {"role": "assistant", "tool_calls": call["tool_calls"]}}  # fmt: skip
    final = {"event.name": "gen_ai.choice", "index": 0,
             "message": {"role": "assistant", "content": "18C and sunny."}}  # fmt: skip
    observations = [
        pydantic_ai_v1_observation("1a2b3c4d5e6f7081", "2025-06-01T10:00:00.000Z",
                                   [system, user, first_choice]),
        pydantic_ai_v1_observation("1a2b3c4d5e6f7082", "2025-06-01T10:00:02.000Z",
                                   [system, user, call, result, final]),
    ]  # fmt: skip
    path = tmp_path / "langfuse.json"
    path.write_bytes(orjson.dumps({"trace": {"id": TRACE}, "observations": observations}))
    run = ingest(path)
    (trace,) = run.collect()
    assert plain(trace) == EXPECTED
    assert run.report.files[0].conventions == {"pydantic-ai"}
    assert run.report.spans_used == 2 and run.report.balanced
