"""The ``no_message_content`` reason says how to get the text, for each way it goes missing.

Spans are recorded through a real TracerProvider / LoggerProvider (trial7 #5, #10):
OpenInference with ``OPENINFERENCE_HIDE_INPUTS/OUTPUTS`` writes ``__REDACTED__`` in place of every
value; opentelemetry-instrumentation-openai-v2 with content capture on writes the text as GenAI
event log records, so the span export alone has none.
"""

from __future__ import annotations

import json
from collections.abc import Iterator

import pytest
from opentelemetry._logs import LogRecord as ApiLogRecord
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.trace import SpanKind

from agent_eval.ingest._sdk import install

REDACTED = "__REDACTED__"
KIND = "openinference.span.kind"


@pytest.fixture
def providers() -> Iterator[tuple[TracerProvider, LoggerProvider]]:
    tracer_provider, logger_provider = TracerProvider(), LoggerProvider()
    yield tracer_provider, logger_provider
    tracer_provider.shutdown()
    logger_provider.shutdown()


def test_openinference_redaction_is_named_with_how_to_unhide(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, logger_provider = providers
    collector = install(tracer_provider, logger_provider)
    tracer = tracer_provider.get_tracer("openinference.instrumentation.openai_agents")
    hidden = {"input.value": REDACTED, "output.value": REDACTED}
    with tracer.start_as_current_span("Agent workflow", attributes={KIND: "AGENT"}):
        with tracer.start_as_current_span("response", attributes={KIND: "LLM", **hidden}):
            pass
        with tracer.start_as_current_span(
            "get_weather", attributes={KIND: "TOOL", "tool.name": "get_weather", **hidden}
        ):
            pass
    run = collector.traces()
    assert list(run) == []
    (skipped,) = run.report.skipped
    assert skipped.reason == "no_message_content"
    assert skipped.detail.startswith(
        f"conversation {skipped.trace_id!r} has no user message with content, so it is not "
        "sent to a judge; the text was hidden by OpenInference: the spans hold its redaction "
        "marker '__REDACTED__' instead (OPENINFERENCE_HIDE_INPUTS / OPENINFERENCE_HIDE_OUTPUTS"
    )
    assert "unset them and record again" in skipped.detail
    assert "turn content capture on" not in skipped.detail  # capture was on: it was hidden
    assert sum(run.report.spans_ignored.values()) == run.report.spans_read == 3


def _chat_without_content(tracer_provider: TracerProvider) -> None:
    """A chat span as openai-v2 writes it when the content goes to event log records."""
    tracer = tracer_provider.get_tracer("opentelemetry.instrumentation.openai_v2")
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
             "gen_ai.request.model": "gpt-4o-mini", "gen_ai.usage.input_tokens": 16}  # fmt: skip
    with tracer.start_as_current_span("chat gpt-4o-mini", kind=SpanKind.CLIENT, attributes=attrs):
        pass


def test_genai_spans_without_their_log_records_say_to_give_the_logs_export(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, _ = providers
    collector = install(tracer_provider)  # spans only: the user has not given the log records
    _chat_without_content(tracer_provider)
    run = collector.traces()
    assert list(run) == []  # the report is filled as the run is read
    (skipped,) = run.report.skipped
    assert skipped.detail.startswith(
        f"conversation {skipped.trace_id!r} has no message content at all, so it is not sent "
        "to a judge; the spans recorded no message text: turn content capture on"
    )
    assert skipped.detail.endswith(
        "; if capture is already on, the instrumentation may write the message text as GenAI "
        "event log records (gen_ai.user.message, gen_ai.choice, ...; opentelemetry-"
        "instrumentation-openai-v2 does) through the SDK's LoggerProvider, and no log record was "
        "joined to these spans: give the logs export too (agent-eval ingest SPANS.jsonl "
        "LOGS.jsonl)"
    )


def test_log_records_without_content_only_say_to_turn_capture_on(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    tracer_provider, logger_provider = providers
    collector = install(tracer_provider, logger_provider)
    tracer = tracer_provider.get_tracer("opentelemetry.instrumentation.openai_v2")
    logger = logger_provider.get_logger("opentelemetry.instrumentation.openai_v2")
    system = {"gen_ai.system": "openai"}
    call = {"id": "call_1", "type": "function", "function": {"name": "get_weather"}}
    choice = {"index": 0, "finish_reason": "tool_calls",
              "message": {"role": "assistant", "tool_calls": [call]}}  # fmt: skip
    attrs = {"gen_ai.operation.name": "chat", **system}
    with tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT, attributes=attrs) as span:
        ctx = span.get_span_context()
        for name, body in (("gen_ai.user.message", {}), ("gen_ai.choice", choice)):  # capture off
            logger.emit(ApiLogRecord(event_name=name, body=body, attributes=system,
                                     trace_id=ctx.trace_id, span_id=ctx.span_id,
                                     trace_flags=ctx.trace_flags))  # fmt: skip
    run = collector.traces()
    assert list(run) == []  # the report is filled as the run is read
    (skipped,) = run.report.skipped
    assert skipped.detail.startswith(
        f"conversation {skipped.trace_id!r} has no user message with content, so it is not sent "
        "to a judge; the spans recorded no message text: turn content capture on"
    )
    assert "OTEL_INSTRUMENTATION_GENAI_CAPTURE_MESSAGE_CONTENT=true" in skipped.detail
    assert "give the logs export too" not in skipped.detail  # its log records were given


def test_pydantic_ai_spans_without_content_name_include_content(
    providers: tuple[TracerProvider, LoggerProvider],
) -> None:
    """trial8 #9: pydantic-ai's ``InstrumentationSettings(include_content=False)`` spans.

    The attributes are those pydantic-ai 2.68 wrote (instrumentation version 5) for one user
    turn: the message parts carry their type and ids but no text.
    """
    tracer_provider, logger_provider = providers
    collector = install(tracer_provider, logger_provider)
    tracer = tracer_provider.get_tracer("pydantic-ai")
    empty = [{"role": "system", "parts": [{"type": "text"}]},
             {"role": "user", "parts": [{"type": "text"}]}]  # fmt: skip
    answer = [{"role": "assistant", "parts": [{"type": "text"}], "finish_reason": "stop"}]
    agent = {"gen_ai.agent.name": "weather-agent", "gen_ai.conversation.id": "c-1"}
    run_attrs = {"gen_ai.operation.name": "invoke_agent", "agent_name": "weather-agent",
                 "logfire.msg": "weather-agent run", **agent,
                 "pydantic_ai.all_messages": json.dumps(empty + answer)}  # fmt: skip
    chat_attrs = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "gpt-4o-mini",
                  "gen_ai.input.messages": json.dumps(empty), **agent,
                  "gen_ai.output.messages": json.dumps(answer)}  # fmt: skip
    with (
        tracer.start_as_current_span("invoke_agent weather-agent", attributes=run_attrs),
        tracer.start_as_current_span("chat m", kind=SpanKind.CLIENT, attributes=chat_attrs),
    ):
        pass
    run = collector.traces()
    assert list(run) == []
    (skipped,) = run.report.skipped
    assert skipped.reason == "no_message_content"
    assert skipped.detail == (
        "conversation 'c-1' has no user message with content, so it is not sent to a judge; "
        "the spans are pydantic-ai's (logfire / pydantic_ai.* attributes) and recorded no "
        "message text: pydantic-ai leaves it out when instrumented with "
        "InstrumentationSettings(include_content=False); instrument with include_content=True, "
        "the default (pydantic_ai.models.instrumented.InstrumentationSettings, given to "
        "Agent(instrument=...) or Agent.instrument_all(...))"
    )
    assert sum(run.report.spans_ignored.values()) == run.report.spans_read == 2
