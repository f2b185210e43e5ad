"""tool_errors@1 on failing OpenInference TOOL spans recorded through a real TracerProvider.

The spans are the shape openinference-instrumentation-langchain (LangGraph ``ToolNode`` with
``handle_tool_errors=True``) and openinference-instrumentation-openai-agents write when a tool
raises (trial7 #0): the TOOL spans carry no tool-call id, the failed one has status ERROR (and,
for LangChain, an ``exception`` event but no ``output.value``), and the next LLM span replays the
error text as the tool result. Before the fix the error was never attached to the call: 1.000.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import Status, StatusCode

from agent_eval.ingest._sdk import install
from agent_eval.metrics._tool_calls import agent_calls, error_of

from .trajectory_cases import score

KIND = "openinference.span.kind"
CITIES = ("Paris", "Rome")
FAILURE = "weather service down for Rome"


@pytest.fixture
def provider() -> Iterator[TracerProvider]:
    tracer_provider = TracerProvider()
    yield tracer_provider
    tracer_provider.shutdown()


def _messages(prefix: str, messages: list[dict[str, str]]) -> dict[str, str]:
    attrs: dict[str, str] = {}
    for i, message in enumerate(messages):
        for key, value in message.items():
            if key == "call":
                call = f"{prefix}.{i}.message.tool_calls.0.tool_call"
                attrs[f"{call}.id"] = value
                attrs[f"{call}.function.name"] = "get_weather"
                attrs[f"{call}.function.arguments"] = json.dumps({"city": message["city"]})
            elif key != "city":
                attrs[f"{prefix}.{i}.message.{key}"] = value
    return attrs


def _run_agent(provider: TracerProvider, *, langchain: bool) -> None:
    """user -> get_weather(Paris) -> ok -> get_weather(Rome) -> raises -> final answer."""
    tracer = provider.get_tracer("openinference.instrumentation")
    history: list[dict[str, str]] = [{"role": "user", "content": "Weather in Paris and Rome?"}]
    with tracer.start_as_current_span("agent", attributes={KIND: "AGENT", "session.id": "s-1"}):
        for n, city in enumerate(CITIES):
            call = {"role": "assistant", "call": f"call_{n}", "city": city}
            with tracer.start_as_current_span("ChatOpenAI", attributes={
                KIND: "LLM", **_messages("llm.input_messages", history),
                **_messages("llm.output_messages", [call])}):  # fmt: skip
                pass
            history.append(call)
            tool = {KIND: "TOOL", "tool.name": "get_weather",
                    "input.value": city if langchain else json.dumps({"city": city})}  # fmt: skip
            with tracer.start_as_current_span("get_weather", attributes=tool) as span:
                if city == "Rome":
                    result = (
                        f"Error: RuntimeError('{FAILURE}')"
                        if langchain
                        else "An error occurred while running the tool. Please try again."
                    )
                    if langchain:  # the exception is recorded, no output.value
                        span.record_exception(RuntimeError(FAILURE))
                        span.set_status(Status(StatusCode.ERROR, f"RuntimeError('{FAILURE}')"))
                    else:  # the Agents SDK's failure handler: an output and an ERROR status
                        span.set_attribute("output.value", result)
                        span.set_status(Status(StatusCode.ERROR, "Error running tool"))
                else:
                    result = f"{city}: 18C sunny"
                    data = {"content": result, "tool_call_id": call["call"]}
                    output = json.dumps({"type": "tool", "data": data}) if langchain else result
                    span.set_attribute("output.value", output)
            history.append({"role": "tool", "content": result, "tool_call_id": call["call"]})
        final = {"role": "assistant", "content": "Paris is sunny; Rome's service is down."}
        with tracer.start_as_current_span("ChatOpenAI", attributes={
            KIND: "LLM", **_messages("llm.input_messages", history),
            **_messages("llm.output_messages", [final])}):  # fmt: skip
            pass


@pytest.mark.parametrize("langchain", [True, False], ids=["langgraph", "openai-agents"])
def test_a_failed_tool_span_without_call_id_marks_its_call(
    provider: TracerProvider, langchain: bool
) -> None:
    collector = install(provider)
    _run_agent(provider, langchain=langchain)
    (trace,) = collector.traces()
    (error,) = trace.errors
    assert (error.span_name, error.tool_name, error.tool_call_id) == (
        "get_weather",
        "get_weather",
        "call_1",  # the Rome call, found by the transcript's pairing of the TOOL span
    )
    paris, rome = agent_calls(trace)
    assert error_of(paris, trace.errors) is None
    why = error_of(rome, trace.errors)
    assert why is not None and why.startswith(f"span {error.span_id} (get_weather) recorded")
    row = score("tool_errors", trace)
    assert [a.label for a in row.atoms or ()] == ["ok", "error"]
    assert row.score == 0.5
    assert (row.details["errors"], row.details["calls"]) == (1, 2)
