"""Every recorded trace in ``shared/data/otel`` ingests end to end, with its span accounting.

The ``*.chatml.json`` files there are Langfuse's normalised messages, the oracle that
``test_langfuse.py`` compares against, and ``PROVENANCE.md`` is prose: neither is a trace, so
they are not inputs here.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage, UserMessage
from agent_eval.cli._app import app
from agent_eval.ingest import ingest

JAEGER = "mixed-adk-openllmetry__agentevals__kagent-helm.jaeger.json"
TEMPO = "mixed-adk-openllmetry__agentevals__kagent-helm.tempo-otlp.json"

EXPECTED = {
    JAEGER: ("jaeger", ["google-adk", "openllmetry"]),
    TEMPO: ("tempo", ["google-adk", "openllmetry"]),
    "genai-flatprompt__langfuse__koog.trace.json": ("langfuse", ["genai", "openllmetry"]),
    "genai-v137__langfuse__microsoft-agent-framework.trace.json": ("langfuse", ["genai"]),
    "oi__langfuse__openai-agents.trace.json": ("langfuse", ["openinference"]),
    "pydanticai-v2__langfuse__tools-2025-12-04.trace.json": ("langfuse", ["pydantic-ai"]),
    "vercel-ai__langfuse__aisdk-tools.trace.json": ("langfuse", ["vercel-ai"]),
    "genai__openinference-genai-fixture__client_span_tool_calls.attrs.json": (
        "span-attributes",
        ["genai"],
    ),
    "genai-deprecated__openinference-genai-fixture__client_span_tool_calls.attrs.json": (
        "span-attributes",
        ["genai"],
    ),
    # A lone execute_tool span: no user or assistant turn, so no conversation (and no
    # convention counted as used); it is skipped no_message_content.
    "genai__openinference-genai-fixture__tool_execution_span.attrs.json": (
        "span-attributes",
        [],
    ),
    "oi__openinference-genai-fixture__client_span_tool_calls.attrs.json": (
        "span-attributes",
        ["openinference"],
    ),
    "httpcassette__otel-contrib-openai-v2__chat_tool_calls_with_content.yaml": (
        "openai-cassette",
        [],
    ),
}


def trace_files(otel: Path) -> list[Path]:
    return sorted(p for p in otel.iterdir() if not p.name.endswith((".chatml.json", ".md")))


LONE_TOOL_SPAN = "genai__openinference-genai-fixture__tool_execution_span.attrs.json"


def test_the_expected_files_are_all_the_trace_files(shared_data: Path) -> None:
    assert sorted(p.name for p in trace_files(shared_data / "otel")) == sorted(EXPECTED)


@pytest.mark.parametrize("name", sorted(EXPECTED))
def test_each_trace_file_ingests_with_balanced_accounting(shared_data: Path, name: str) -> None:
    run = ingest(shared_data / "otel" / name)
    traces = run.collect()
    (file,) = run.report.files
    assert file.error is None
    assert (file.container, sorted(file.conventions)) == EXPECTED[name]
    if name == LONE_TOOL_SPAN:  # skipped with its reason, its span accounted for
        assert traces == [] and run.report.spans_ignored == {"no_message_content": 1}
    else:
        assert traces and all(t.messages for t in traces)
    assert run.report.balanced


def kagent(shared_data: Path, name: str) -> tuple[AgentTrace, dict[str, int]]:
    run = ingest(shared_data / "otel" / name)
    (trace,) = run.collect()
    assert run.report.balanced
    return trace, dict(run.report.spans_ignored)


@pytest.mark.parametrize("name", [JAEGER, TEMPO])
def test_kagent_exports_give_the_helm_conversation(shared_data: Path, name: str) -> None:
    trace, _ = kagent(shared_data, name)
    system, user, call, result, answer = trace.messages
    assert system.role == "system" and system.content.startswith("# Helm AI Agent System Prompt")
    assert (
        isinstance(user, UserMessage) and user.content.strip().lower() == "list all helm releases"
    )
    assert isinstance(call, AssistantMessage) and call.tool_calls is not None
    ((call_id, tool, arguments),) = [(c.id, c.name, c.arguments) for c in call.tool_calls]
    assert (tool, arguments) == ("helm_list_releases", {})
    assert isinstance(result, ToolMessage) and (result.tool_call_id, result.tool_name) == (
        call_id,
        tool,
    )
    assert result.content.startswith("NAME") and "kagent-crds" in result.content
    assert isinstance(answer, AssistantMessage) and "Helm releases" in answer.content
    assert answer.agent_name == "helm_agent"
    # ADK's call_llm span and the OpenAI instrumentation's span under it hold the same messages:
    # each appears once, seen by both spans where both recorded it
    assert len(user.span_ids) == 2 and len(result.span_ids) == 2


@pytest.mark.parametrize("name", [JAEGER, TEMPO])
def test_kagent_accounting_explains_the_http_and_a2a_spans(shared_data: Path, name: str) -> None:
    _, ignored = kagent(shared_data, name)
    assert ignored["http_span"] >= 38
    assert ignored["a2a_transport_span"] >= 35
    assert ignored["duplicate_of_child_llm_span"] >= 1
    assert ignored.get("no_genai_content", 0) <= 2  # the ADK "invocation" wrapper spans


def test_the_cli_json_summary_names_container_and_conventions_per_file(shared_data: Path) -> None:
    paths = [str(shared_data / "otel" / name) for name in sorted(EXPECTED)]
    result = CliRunner().invoke(app, ["ingest", "--json", *paths])
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    got = {Path(f["path"]).name: (f["container"], f["conventions"]) for f in summary["files"]}
    assert got == EXPECTED
    assert summary["balanced"] is True
    assert summary["spans"]["ignored"]["a2a_transport_span"] == 86


CONVERSATIONS = {
    "vercel-ai__langfuse__aisdk-tools.trace.json": [
        ("user", "What is the weather like today in San Francisco?"),
        ("assistant", "getWeather"),
        ("tool", '{"location":"San Francisco","temperature":64}'),
    ],
    "oi__langfuse__openai-agents.trace.json": [
        ("system", "You are a helpful agent."),
        ("user", "What's the weather in Tokyo?"),
        ("assistant", "get_weather"),
        ("tool", "The weather in Tokyo is sunny."),
        ("assistant", "The weather in Tokyo is currently sunny."),
    ],
    "genai-flatprompt__langfuse__koog.trace.json": [
        ("system", "You are a nice and polite assistant."),
        ("user", "Greet and say goodbye to the user in the same message."),
        ("assistant", "HelloTool"),
        ("tool", "Hello my darling Bob!"),
        ("assistant", "ByeTool"),
        ("tool", "Bye my dear Bob!"),
        ("assistant", "Hello my darling Bob! And, bye my dear Bob!"),
    ],
    "genai-v137__langfuse__microsoft-agent-framework.trace.json": [
        ("user", "What's the weather in Tokyo?"),
        ("assistant", "get_weather"),
        ("tool", "The weather in Tokyo, Japan is stormy with a high of 23°C."),
        ("assistant", "Current conditions in Tokyo, Japan: stormy"),
    ],
}


def summary(trace: AgentTrace) -> list[tuple[str, str]]:
    out = []
    for m in trace.messages:
        calls = m.tool_calls if isinstance(m, AssistantMessage) else None
        out.append((m.role, ",".join(c.name for c in calls) if calls else m.content))
    return out


@pytest.mark.parametrize("name", sorted(CONVERSATIONS))
def test_langfuse_exports_assemble_to_their_conversation(shared_data: Path, name: str) -> None:
    (trace,) = ingest(shared_data / "otel" / name).collect()
    got = summary(trace)
    assert [role for role, _ in got] == [role for role, _ in CONVERSATIONS[name]]
    for (_, text), (_, expected) in zip(got, CONVERSATIONS[name], strict=True):
        assert text.startswith(expected)
    results = [m for m in trace.messages if isinstance(m, ToolMessage)]
    calls = {
        c.id for m in trace.messages if isinstance(m, AssistantMessage) for c in m.tool_calls or ()
    }
    assert all(r.tool_call_id in calls for r in results)
