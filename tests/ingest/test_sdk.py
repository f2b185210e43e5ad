"""In-process collection through a real TracerProvider / LoggerProvider."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator

import pytest
from opentelemetry._logs import LogRecord as ApiLogRecord
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import LogRecordExportResult
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SpanExportResult
from opentelemetry.trace import SpanKind, Status, StatusCode

from agent_eval._trace import AssistantMessage, ToolMessage, UserMessage
from agent_eval.errors import ConfigError
from agent_eval.ingest._sdk import SDK_CONTAINER, Collector, install, span_record_from_sdk


@pytest.fixture
def providers() -> Iterator[tuple[TracerProvider, LoggerProvider]]:
    resource = Resource.create({"service.name": "agent-under-test"})
    tracer_provider, logger_provider = TracerProvider(resource=resource), LoggerProvider(resource)
    yield tracer_provider, logger_provider
    tracer_provider.shutdown()
    logger_provider.shutdown()


def _messages(*items: tuple[str, list[dict[str, object]]]) -> str:
    return json.dumps([{"role": role, "parts": parts} for role, parts in items])


def run_agent(provider: TracerProvider, conversation: str = "conv-1") -> None:
    """An agent loop emitting GenAI v1.37 spans: chat -> tool call -> tool -> chat."""
    tracer = provider.get_tracer("test-agent", "0.1")
    user = ("user", [{"type": "text", "content": "weather in Paris?"}])
    call = ("assistant", [{"type": "tool_call", "id": "call_1", "name": "weather",
                           "arguments": {"city": "Paris"}}])  # fmt: skip
    result = ("tool", [{"type": "tool_call_response", "id": "call_1", "response": "sunny"}])
    final = ("assistant", [{"type": "text", "content": "It is sunny."}])
    base = {"gen_ai.operation.name": "chat", "gen_ai.conversation.id": conversation,
            "gen_ai.request.model": "gpt-test"}  # fmt: skip
    with tracer.start_as_current_span("invoke_agent helper", attributes={
        "gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper",
        "gen_ai.conversation.id": conversation}):  # fmt: skip
        with tracer.start_as_current_span("chat gpt-test", kind=SpanKind.CLIENT, attributes={
            **base, "gen_ai.input.messages": _messages(user),
            "gen_ai.output.messages": _messages(call),
            "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5}):  # fmt: skip
            pass
        with tracer.start_as_current_span("execute_tool weather", attributes={
            "gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "weather",
            "gen_ai.tool.call.id": "call_1"}):  # fmt: skip
            pass
        with tracer.start_as_current_span("chat gpt-test", kind=SpanKind.CLIENT, attributes={
            **base, "gen_ai.input.messages": _messages(user, call, result),
            "gen_ai.output.messages": _messages(final)}) as span:  # fmt: skip
            span.set_status(Status(StatusCode.OK))


def test_collects_genai_spans_into_a_conversation(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, logger_provider = providers
    collector = install(tracer_provider, logger_provider)
    run_agent(tracer_provider)
    run = collector.traces()
    (trace,) = run
    assert trace.conversation_id == "conv-1"
    assert [type(m) for m in trace.messages] == [
        UserMessage,
        AssistantMessage,
        ToolMessage,
        AssistantMessage,
    ]
    call = trace.messages[1]
    assert isinstance(call, AssistantMessage) and call.tool_calls
    assert call.tool_calls[0].arguments == {"city": "Paris"} and call.agent_name == "helper"
    assert trace.messages[2].content == "sunny" and trace.messages[3].content == "It is sunny."
    assert trace.source.container == SDK_CONTAINER
    assert run.report.spans_read == 4 and run.report.balanced
    assert run.report.files[0].container == SDK_CONTAINER


def test_log_events_are_collected_and_joined(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, logger_provider = providers
    collector = install(tracer_provider, logger_provider)
    logger = logger_provider.get_logger("openai-v2")
    tracer = tracer_provider.get_tracer("openai-v2")
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"}
    with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT, attributes=attrs) as span:
        ctx = span.get_span_context()
        for name, body in (
            ("gen_ai.user.message", {"content": "hi"}),
            ("gen_ai.choice", {"index": 0, "finish_reason": "stop",
                               "message": {"role": "assistant", "content": "hello"}}),
        ):  # fmt: skip
            logger.emit(ApiLogRecord(event_name=name, body=body, trace_id=ctx.trace_id,
                                     span_id=ctx.span_id, trace_flags=ctx.trace_flags))  # fmt: skip
    run = collector.traces()
    (trace,) = run
    assert [(m.role, m.content) for m in trace.messages] == [("user", "hi"), ("assistant", "hello")]
    assert (run.report.logs_read, run.report.logs_used) == (2, 2)


def test_span_record_conversion_keeps_every_field(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, _ = providers
    spans: list[ReadableSpan] = []
    collector = Collector()

    class Keep(type(collector.span_exporter)):  # type: ignore[misc]
        def export(self, batch):  # type: ignore[no-untyped-def]
            spans.extend(batch)
            return super().export(batch)

    from opentelemetry.sdk.trace.export import SimpleSpanProcessor

    tracer_provider.add_span_processor(SimpleSpanProcessor(Keep(collector)))
    tracer = tracer_provider.get_tracer("scope", "9.9")
    with (
        tracer.start_as_current_span("parent"),
        tracer.start_as_current_span(
            "child", kind=SpanKind.CLIENT, attributes={"list": ["a", "b"], "n": 3}
        ) as child,
    ):
        child.add_event("evt", {"k": "v"})
        child.set_status(Status(StatusCode.ERROR, "bad"))
    record = span_record_from_sdk(spans[0])
    ctx = spans[0].context
    assert ctx is not None and record.trace_id == format(ctx.trace_id, "032x")
    assert record.parent_span_id == format(spans[1].context.span_id, "016x")  # type: ignore[union-attr]
    assert (record.kind, record.status_code, record.status_message) == ("CLIENT", "ERROR", "bad")
    assert record.attributes == {"list": ["a", "b"], "n": 3}
    assert record.events[0].name == "evt" and record.events[0].attributes == {"k": "v"}
    assert (record.scope_name, record.scope_version) == ("scope", "9.9")
    assert record.resource["service.name"] == "agent-under-test"
    assert record.end_time_unix_nano >= record.start_time_unix_nano > 0


def test_exporter_contract_shutdown_and_never_raising(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, _ = providers
    collector = install(tracer_provider)
    run_agent(tracer_provider)
    exporter = collector.span_exporter
    assert exporter.force_flush() is True
    # A span the converter cannot read is counted as skipped, never raised into the app.
    assert exporter.export([object()]) is SpanExportResult.SUCCESS  # type: ignore[list-item]
    exporter.shutdown()
    assert exporter.export([]) is SpanExportResult.FAILURE
    assert collector.log_exporter.export([]) is LogRecordExportResult.SUCCESS
    collector.log_exporter.shutdown()
    assert collector.log_exporter.export([]) is LogRecordExportResult.FAILURE
    run = collector.traces()
    assert len(list(run)) == 1  # what was collected before shutdown stays readable
    assert run.report.spans_ignored["unreadable_sdk_record"] == 1 and run.report.balanced


def test_thread_safe_collection(providers: tuple[TracerProvider, LoggerProvider]) -> None:
    tracer_provider, _ = providers
    collector = install(tracer_provider)
    threads = [
        threading.Thread(target=run_agent, args=(tracer_provider, f"conv-{n}")) for n in range(8)
    ]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    run = collector.traces()
    assert sorted(t.conversation_id for t in run) == [f"conv-{n}" for n in range(8)]
    assert run.report.spans_read == 32 and run.report.balanced
    collector.clear()
    assert list(collector.traces()) == []


def test_install_needs_sdk_providers() -> None:
    with pytest.raises(ConfigError, match="TracerProvider"):
        install(object())  # type: ignore[arg-type]
    with pytest.raises(ConfigError, match="LoggerProvider"):
        install(TracerProvider(), object())  # type: ignore[arg-type]
