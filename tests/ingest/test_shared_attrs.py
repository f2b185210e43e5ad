"""The OpenInference GenAI fixtures in ../shared/data/otel (*.attrs.json, one span each) map to
the conversations they describe: a user asks for the weather in Paris, the assistant calls
``get_weather`` (call id 1234), the tool answers, the assistant reports. The tool-execution
fixture is a lone ``execute_tool`` span."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage
from agent_eval.ingest import ingest
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.containers._span_attributes import SpanAttributesContainer
from agent_eval.ingest.conventions._genai import GenAIConvention

CLIENT_SPANS = {
    "genai__openinference-genai-fixture__client_span_tool_calls.attrs.json": "genai",
    "genai-deprecated__openinference-genai-fixture__client_span_tool_calls.attrs.json": "genai",
    "oi__openinference-genai-fixture__client_span_tool_calls.attrs.json": "openinference",
}
TOOL_SPAN = "genai__openinference-genai-fixture__tool_execution_span.attrs.json"
FINAL = "The weather in Paris is currently rainy with a temperature of 57°F."


def ingest_one(path: Path) -> AgentTrace:
    run = ingest(path)
    [trace] = run.collect()
    assert run.report.balanced
    assert run.report.spans_used == 1
    assert run.report.files[0].container == "span-attributes"
    return trace


@pytest.mark.parametrize(("name", "convention"), sorted(CLIENT_SPANS.items()))
def test_client_span_fixture(shared_data: Path, name: str, convention: str) -> None:
    trace = ingest_one(shared_data / "otel" / name)
    assert trace.source.conventions == (convention,)
    assert [m.role for m in trace.messages] == ["user", "assistant", "tool", "assistant"]
    user, ask, tool, answer = trace.messages
    assert user.content == "Weather in Paris?"
    assert isinstance(ask, AssistantMessage)
    assert ask.content == "Absolutely! Let me check the weather for you."
    assert ask.tool_calls == (
        ToolCall(id="1234", name="get_weather", arguments={"location": "Paris"}),
    )
    assert isinstance(tool, ToolMessage)
    assert (tool.content, tool.tool_call_id, tool.tool_name) == (
        "rainy, 57°F",
        "1234",
        "get_weather",
    )
    assert answer.content == FINAL
    assert [(u.model, u.input_tokens, u.output_tokens) for u in trace.usage] == [
        ("gpt-4-0613", 97, 52)
    ]
    span_id = trace.messages[0].span_ids[0]
    assert all(m.span_ids == (span_id,) for m in trace.messages)


def test_tool_execution_span_fixture(shared_data: Path) -> None:
    """A lone execute_tool span is read as a tool run, but is no conversation to judge."""
    path = shared_data / "otel" / TOOL_SPAN
    (span,) = SpanAttributesContainer().read(str(path))
    assert isinstance(span, SpanRecord)
    tool = GenAIConvention().extract(span).tool
    assert tool is not None
    assert (tool.call_id, tool.name, tool.arguments) == (
        "1234",
        "get_weather",
        {"city": "New York"},
    )
    assert "sunny with a temperature of 25 degrees Celsius" in (tool.result or "")
    run = ingest(path)
    assert run.collect() == []
    (skipped,) = run.report.skipped
    assert (skipped.reason, skipped.source) == ("no_message_content", SourceLocation(str(path)))
    assert "no user message" in skipped.detail


def test_the_three_client_fixtures_agree(shared_data: Path) -> None:
    traces = [ingest_one(shared_data / "otel" / name) for name in sorted(CLIENT_SPANS)]
    stripped = [[m.model_copy(update={"span_ids": ()}) for m in t.messages] for t in traces]
    assert stripped[0] == stripped[1] == stripped[2]
