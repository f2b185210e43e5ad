"""A conversation whose final reply was recorded only as an orphan log record (trial8 #2).

Traceloop's ``opentelemetry-instrumentation-openai`` (0.62.4) in events mode
(``use_legacy_attributes=False``) with ``stream=True`` writes each call's ``gen_ai.choice`` log
record without trace or span context (no ``timeUnixNano`` either, only the observed time, and no
response id); the input message records of the same call carry the span context. The inputs
below mirror the shape recorded by the trial (a bare ``AsyncOpenAI`` client, a trace per call,
streamed, one tool call). Each call's reply survives only where the next call replays it, so
the last reply is lost: the conversation must say so (a note naming the span and the cause, and
``AgentTrace.final_reply_missing``), and judge metrics must skip it, not judge a transcript
known to be cut short.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage, ModelUsage, UserMessage
from agent_eval.cli import app
from agent_eval.metrics._answer_relevance import AnswerRelevance
from agent_eval.metrics._base import MetricInput
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.metrics._tool_errors import ToolErrors
from agent_eval.metrics._units import answer_units, conversation_unit
from agent_eval.run._outcomes import skip_fields
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._otlp import export_request, log_record, span

SCOPE = ("opentelemetry.instrumentation.openai.v1", "0.62.4")
T0 = 1_796_160_835_877_739_737
TRACES = ("aa" * 16, "bb" * 16)
SPANS = ("a1" * 8, "b1" * 8)
SYSTEM = "You answer weather questions with the get_weather tool."
CALL = {"id": "call_p1", "type": "function",
        "function": {"name": "get_weather", "arguments": '{"city":"Paris"}'}}  # fmt: skip
ANSWER = "It is 18C and sunny in Paris."
runner = CliRunner()


def _chat_span(n: int, output_tokens: int) -> dict[str, Any]:
    start = T0 + n * 200_000_000
    return span(
        TRACES[n], SPANS[n], "openai.chat", kind=3, start=start, end=start + 180_000_000,
        attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
            "gen_ai.is_streaming": True, "gen_ai.response.id": f"chatcmpl-00000{n + 1}",
            "gen_ai.usage.input_tokens": 16, "gen_ai.usage.output_tokens": output_tokens,
        },
        events=[("gen_ai.content.completion.chunk", start + 150_000_000, {})],
    )  # fmt: skip


def _event(n: int, name: str, body: dict[str, Any], at: int, *, orphan: bool) -> dict[str, Any]:
    """A record as the instrumentation writes it: observed time only; no ids when orphaned."""
    context = {} if orphan else {"trace_id": TRACES[n], "span_id": SPANS[n]}
    record = log_record(name, body, attributes={"gen_ai.provider.name": "openai"}, **context)
    del record["timeUnixNano"]
    record["observedTimeUnixNano"] = str(T0 + n * 200_000_000 + at)
    return record


def _inputs(tmp_path: Path, *, orphaned: bool) -> list[Path]:
    """Spans and logs files of two streamed calls: a tool call, then the final answer."""
    history = [
        ("gen_ai.system.message", {"content": SYSTEM}),
        ("gen_ai.user.message", {"content": "What's the weather in Paris?"}),
    ]
    second = [
        *history,
        ("gen_ai.assistant.message", {"content": None, "tool_calls": [CALL]}),
        ("gen_ai.tool.message", {"content": "Paris: 18C sunny", "id": "call_p1"}),
    ]
    choices = [
        {"index": 0, "message": {"content": ""}, "finish_reason": "tool_calls",
         "tool_calls": [CALL]},
        {"index": 0, "message": {"content": ANSWER}, "finish_reason": "stop"},
    ]  # fmt: skip
    logs = []
    for n, inputs in enumerate((history, second)):
        logs += [_event(n, name, body, 1000 + i, orphan=False) for i, (name, body) in
                 enumerate(inputs)]  # fmt: skip
        logs.append(_event(n, "gen_ai.choice", choices[n], 170_000_000, orphan=orphaned))
    spans_file, logs_file = tmp_path / "tl.otlp.jsonl", tmp_path / "tl.logs.otlp.jsonl"
    spans_file.write_text(
        "".join(
            json.dumps(export_request([_chat_span(n, t)], scope=SCOPE)) + "\n"
            for n, t in enumerate((7, 9))
        )
    )
    logs_file.write_text(json.dumps(export_request(logs=logs, scope=SCOPE)) + "\n")
    return [spans_file, logs_file]


def _ingest(tmp_path: Path, *, orphaned: bool) -> tuple[list[AgentTrace], dict[str, Any]]:
    out = tmp_path / "traces.jsonl"
    paths = [str(p) for p in _inputs(tmp_path, orphaned=orphaned)]
    result = runner.invoke(app, ["ingest", *paths, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    traces = [AgentTrace.model_validate_json(line) for line in out.read_text().splitlines()]
    return traces, json.loads(result.stdout)


def test_streamed_traceloop_events_without_span_context_mark_the_final_reply_missing(
    tmp_path: Path,
) -> None:
    [trace], summary = _ingest(tmp_path, orphaned=True)
    # the tool call survives (the second call replays it); the final answer is nowhere
    assert [type(m).__name__ for m in trace.messages] == [
        "SystemMessage", "UserMessage", "AssistantMessage", "ToolMessage",
    ]  # fmt: skip
    assert ANSWER not in trace.model_dump_json()
    assert trace.final_reply_missing == SPANS[1]
    [note] = [n for n in trace.notes if n.startswith(f"span {SPANS[1]} ")]
    assert f"(trace {TRACES[1]}, " in note
    assert "the last LLM call recorded 9 output token(s) but no output content" in note
    assert "2 gen_ai.choice log record(s) of this input carry no trace/span context" in note
    assert "stream=True" in note and "final_reply_missing" in note
    assert summary["logs"]["ignored"] == {"log_without_span_context": 2}
    # the first call's reply (the tool call) was orphaned too: alone it has no assistant side,
    # but the second call replays it, so it is this conversation's first call (s7-fold): its
    # trace, spans and usage (7 output tokens) count here, and its cut-short note is dropped
    assert trace.trace_ids == TRACES
    assert trace.usage == (ModelUsage(model="gpt-4o-mini", input_tokens=32, output_tokens=16,
                                      calls=2),)  # fmt: skip
    assert [m.span_ids for m in trace.messages] == [SPANS, SPANS, SPANS[1:], SPANS[1:]]
    assert any("1 earlier trace(s) folded in" in n for n in trace.notes)
    assert not any(n.startswith(f"span {SPANS[0]} ") for n in trace.notes)
    assert summary["skipped"] == []
    assert (summary["spans"]["used"], summary["spans"]["ignored"]) == (2, {})
    # written to the JSON form and read back
    assert json.loads(trace.model_dump_json())["final_reply_missing"] == SPANS[1]


@pytest.mark.parametrize("spill", [False, True])
def test_the_first_calls_usage_counts_in_its_conversation_in_memory_or_spilled(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, spill: bool
) -> None:
    """The same through the Python API, also with every trace spilled to disk at once."""
    from agent_eval.ingest import _assemble as assemble
    from agent_eval.ingest import ingest
    from agent_eval.ingest._spill import StreamLimits

    if spill:
        monkeypatch.setattr(assemble, "STREAM_LIMITS", StreamLimits.tightest())
    run = ingest([str(p) for p in _inputs(tmp_path, orphaned=True)])
    (trace,) = list(run)
    assert (trace.trace_ids, trace.usage[0].calls, trace.usage[0].output_tokens) == (TRACES, 2, 16)
    report = run.report
    assert (report.spans_used, dict(report.spans_ignored), report.conversations) == (2, {}, 1)
    assert report.balanced and [f.conversations for f in report.files] == [1, 1]


def test_a_first_call_without_its_reply_that_nothing_continues_is_skipped_with_why(
    tmp_path: Path,
) -> None:
    """Alone (no later call replays it), the first call is skipped ``no_message_content``."""
    spans_file, logs_file = _inputs(tmp_path, orphaned=True)
    first = spans_file.read_text().splitlines()[0]
    spans_file.write_text(first + "\n")  # the second call's log records then have no span
    out = tmp_path / "traces.jsonl"
    args = ["ingest", str(spans_file), str(logs_file), "--out", str(out), "--json"]
    result = runner.invoke(app, args)
    summary = json.loads(result.stdout)
    assert (result.exit_code, out.read_text()) == (4, "")  # nothing to write: exit 4
    [skipped] = summary["skipped"]
    assert (skipped["reason"], skipped["span_id"]) == ("no_message_content", SPANS[0])
    assert (
        f"its LLM call (span {SPANS[0]}) recorded 7 output token(s) but no output content "
        "(2 gen_ai.choice log record(s) of this input carry no trace/span context"
    ) in skipped["detail"]
    assert summary["spans"]["ignored"] == {"no_message_content": 1}
    assert summary["balanced"] is True


def test_choices_with_span_context_give_the_whole_conversation_and_no_mark(
    tmp_path: Path,
) -> None:
    [trace], summary = _ingest(tmp_path, orphaned=False)
    assert trace.trace_ids == TRACES  # the first call folded in
    # each file counts the conversation once (the logs file used to count each folded call)
    assert [f["conversations"] for f in summary["files"]] == [1, 1]
    assert trace.messages[-1] == AssistantMessage(
        content=ANSWER, span_ids=(SPANS[1],), model="gpt-4o-mini"
    )
    assert trace.final_reply_missing is None
    assert not any("final reply" in n for n in trace.notes)
    assert "final_reply_missing" not in trace.model_dump_json()  # the JSON form is unchanged


@pytest.mark.usefixtures("judge_env_cleared")
def test_score_skips_a_conversation_whose_final_reply_is_missing(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    paths = [str(p) for p in _inputs(tmp_path, orphaned=True)]
    args = ["score", *paths, "--metric", "goal_accuracy,tool_errors", "--judge", "m",
            "--base-url", fake_server.base_url, "--out", str(tmp_path / "run")]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    rows = {r.metric.split("@")[0]: r for r in load_results(tmp_path / "run")}
    assert rows["goal_accuracy"].status == "skipped", result.output
    assert rows["goal_accuracy"].error_type == "final_reply_missing"
    assert "stops before the model's final reply" in (rows["goal_accuracy"].error_message or "")
    assert fake_server.requests == []  # the judge was never asked
    # a judge-free metric reads the structure, which is whole: still scored
    assert rows["tool_errors"].status == "ok" and rows["tool_errors"].score == 1.0


def test_only_the_conversation_unit_and_the_last_turn_are_skipped() -> None:
    trace = AgentTrace(
        conversation_id="c",
        messages=(
            UserMessage(content="q1"),
            AssistantMessage(content="a1", span_ids=("s1",)),
            UserMessage(content="q2"),
        ),
        final_reply_missing="s2",
    )
    goal = GoalAccuracy()
    whole = skip_fields(
        goal, MetricInput(conversation="", unit=conversation_unit(trace), trace=trace), None
    )
    assert whole is not None and whole["error_type"] == "final_reply_missing"
    relevance = AnswerRelevance()
    first, last = answer_units(trace)
    assert (
        skip_fields(relevance, MetricInput(conversation="", unit=first, trace=trace), None) is None
    )
    skipped = skip_fields(relevance, MetricInput(conversation="", unit=last, trace=trace), None)
    assert skipped is not None and skipped["error_type"] == "final_reply_missing"
    judge_free = skip_fields(ToolErrors(), MetricInput(conversation="", trace=trace), None)
    assert judge_free is not None and judge_free["error_type"] == "no_tool_calls"  # its own
    whole_trace = trace.model_copy(update={"final_reply_missing": None})
    assert skip_fields(goal, MetricInput(conversation="", unit=conversation_unit(whole_trace),
                                         trace=whole_trace), None) is None  # fmt: skip
