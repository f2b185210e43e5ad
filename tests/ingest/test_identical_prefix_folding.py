"""Two users whose first turns are identical keep their own calls (trial8 #5).

A bare ``AsyncOpenAI`` client instrumented by Traceloop (attributes mode: the latest GenAI
``gen_ai.input.messages`` / ``gen_ai.output.messages`` on the span) records a trace per call and
no conversation id. Two users ask the same first question concurrently and get the same answer
(a tool call, its result, the same reply), then ask different second questions: each makes 4
calls in 4 traces, written interleaved as the BatchSpanProcessor exported them. Every call of
both users replays the identical turn-1 traces, and folding gave user 1 six calls and user 2
two. Spans are written as the Collector's OTLP JSON lines (:mod:`agent_eval.testing._otlp`).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_eval.ingest import ingest
from agent_eval.testing._otlp import export_request, span

SCOPE = ("opentelemetry.instrumentation.openai.v1", "0.62.4")
SYSTEM = "You answer weather questions with the get_weather tool."
FIRST = "What's the weather in Paris?"
SECOND = {"a": ("And Rome?", "Rome", "Rome is 22C and cloudy."),
          "b": ("And Madrid?", "Madrid", "Madrid is 25C and clear.")}  # fmt: skip


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def tool_call(call_id: str, city: str) -> dict[str, Any]:
    part = {"type": "tool_call", "id": call_id, "name": "get_weather", "arguments": {"city": city}}
    return {"role": "assistant", "parts": [part]}


def tool_result(call_id: str, city: str) -> dict[str, Any]:
    part = {"type": "tool_call_response", "id": call_id, "response": f"{city}: fine"}
    return {"role": "tool", "parts": [part]}


def calls(user: str) -> list[tuple[list[dict[str, Any]], dict[str, Any]]]:
    """The user's 4 calls as (input messages, output message)."""
    ask, city, answer = SECOND[user]
    history = [text("system", SYSTEM), text("user", FIRST)]
    out = [(list(history), tool_call("call_p1", "Paris"))]
    history += [tool_call("call_p1", "Paris"), tool_result("call_p1", "Paris")]
    out.append((list(history), text("assistant", "It is 18C and sunny in Paris.")))
    history += [text("assistant", "It is 18C and sunny in Paris."), text("user", ask)]
    out.append((list(history), tool_call(f"call_{user}2", city)))
    history += [tool_call(f"call_{user}2", city), tool_result(f"call_{user}2", city)]
    out.append((list(history), text("assistant", answer)))
    return out


def trace_id(user: str, n: int) -> str:
    return f"{user * 2}{n:030x}"


def call_span(user: str, n: int, inputs: list[Any], output: dict[str, Any]) -> dict[str, Any]:
    start = 1_796_160_835_000_000_000 + n * 100_000_000 + (0 if user == "a" else 30_000_000)
    return span(
        trace_id(user, n), f"{user * 2}{n:014x}", "openai.chat", kind=3, start=start,
        end=start + 60_000_000,
        attributes={
            "gen_ai.operation.name": "chat", "gen_ai.provider.name": "openai",
            "gen_ai.request.model": "gpt-4o-mini", "gen_ai.response.model": "gpt-4o-mini",
            "gen_ai.input.messages": json.dumps(inputs),
            "gen_ai.output.messages": json.dumps([output]),
            "gen_ai.usage.input_tokens": 10 * (n + 1), "gen_ai.usage.output_tokens": 7,
        },
    )  # fmt: skip


def write(path: Path, users: str = "ab", extra: list[dict[str, Any]] | None = None) -> Path:
    lines = [export_request([s], scope=SCOPE) for s in extra or []]
    for n in range(4):  # interleaved: a1 b1 a2 b2 ...
        for user in users:
            inputs, output = calls(user)[n]
            lines.append(export_request([call_span(user, n, inputs, output)], scope=SCOPE))
    path.write_text("".join(json.dumps(line) + "\n" for line in lines))
    return path


def test_two_users_with_an_identical_first_turn_each_keep_their_four_calls(
    tmp_path: Path,
) -> None:
    run = ingest([write(tmp_path / "same.otlp.jsonl")])
    traces = list(run)
    assert len(traces) == 2
    by_user = {t.messages[-1].content.split()[0]: t for t in traces}
    for user, city in (("a", "Rome"), ("b", "Madrid")):
        trace = by_user[city]
        assert trace.trace_ids == tuple(trace_id(user, n) for n in range(4))
        [usage] = trace.usage
        assert (usage.calls, usage.input_tokens, usage.output_tokens) == (4, 100, 28)
        assert len(trace.messages) == 9
        assert any("3 earlier trace(s) folded in" in n for n in trace.notes)
        [matched] = [n for n in trace.notes if "matched one to one in time order" in n]
        assert trace_id(user, 0) in matched and trace_id(user, 1) in matched
    assert run.report.conversations == 2


def test_a_third_identical_call_nobody_continues_is_kept_apart_with_a_note(
    tmp_path: Path,
) -> None:
    # user c asks the same first question first, gets the same tool call, and stops there:
    # three identical first calls, two continuations; which two were continued is unknowable
    inputs, output = calls("a")[0]
    lone = call_span("c", 0, inputs, output)
    run = ingest([write(tmp_path / "same3.otlp.jsonl", extra=[lone])])
    traces = list(run)
    assert len(traces) == 3
    first_calls = {trace_id(u, 0) for u in "abc"}
    [alone] = [t for t in traces if len(t.trace_ids) == 1]
    assert set(alone.trace_ids) <= first_calls and len(alone.messages) == 3
    [note] = [n for n in alone.notes if "replayed whole by later conversation" in n]
    for city, user in (("Rome", "a"), ("Madrid", "b")):
        [trace] = [t for t in traces if t.messages[-1].content.startswith(city)]
        assert note.count(trace.conversation_id) == 1
        # each keeps 4 calls: one identical first call, a second call, and its own turn 2
        assert len(trace.trace_ids) == 4 and trace.usage[0].calls == 4
        assert trace.trace_ids[0] in first_calls
        assert trace.trace_ids[2:] == (trace_id(user, 2), trace_id(user, 3))
    assert sorted(t for one in traces for t in one.trace_ids) == sorted(
        [*(trace_id(u, n) for u in "ab" for n in range(4)), trace_id("c", 0)]
    )


def test_one_user_alone_still_folds_every_earlier_call(tmp_path: Path) -> None:
    [trace] = list(ingest([write(tmp_path / "one.otlp.jsonl", users="a")]))
    assert trace.trace_ids == tuple(trace_id("a", n) for n in range(4))
    assert trace.usage[0].calls == 4
    assert not any("matched one to one" in n for n in trace.notes)
