"""Session 6 assembly fast paths give what the general forms they replace give.

- ``Assembler._detecting`` remembers, per set of span markers, which conventions are asked:
  the conventions that detect a span are the same as when every span is resolved afresh, in
  priority order, also after the memo is emptied at its bound.
- ``ConversationBuilder`` sums usage as plain ints and makes one ``ModelUsage`` per model at
  the end: the same usage (order of first model, sums, calls, fields set) as one ``ModelUsage``
  per call, the old form.
"""

from __future__ import annotations

import json
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval._trace import ModelUsage
from agent_eval.ingest import _assemble as assemble
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._spans import SpanRecord

T1 = "a" * 32

_KEYS = [
    "gen_ai.operation.name",
    "gen_ai.input.messages",
    "gen_ai.tool.name",
    "llm.input_messages",
    "openinference.span.kind",
    "traceloop.span.kind",
    "http.request.method",
    "server.address",
    "ai.operationId",
    "logfire.msg",
    "plain",
    "session.id",
]
_SCOPES = ["", "opentelemetry.instrumentation.openai", "openinference.instrumentation", "ai"]


def _span(n: int, keys: list[str], scope: str) -> SpanRecord:
    return SpanRecord(
        trace_id=T1,
        span_id=f"{n + 1:016x}",
        name=f"span{n}",
        start_time_unix_nano=n,
        attributes={key: "chat" for key in keys},
        scope_name=scope,
    )


def _names(found: list[Any]) -> list[str]:
    return [c.name for c in found]


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.lists(st.sampled_from(_KEYS), max_size=5), st.sampled_from(_SCOPES)),
        min_size=1,
        max_size=12,
    )
)
def test_detecting_memo_is_the_fresh_resolution(spans: list[tuple[list[str], str]]) -> None:
    reused = Assembler(IngestReport())
    for n, (keys, scope) in enumerate(spans):
        span = _span(n, keys, scope)
        fresh = Assembler(IngestReport())._detecting(span)  # nothing remembered yet
        found = reused._detecting(span)
        assert _names(found) == _names(fresh)
        registered = reused._registered()
        order = [registered.index(c) for c in found]
        assert order == sorted(order)  # priority order


def test_detecting_memo_is_bounded_and_right_after_it_is_emptied(monkeypatch: Any) -> None:
    monkeypatch.setattr(assemble, "_ASKED_MAX", 3)
    reused = Assembler(IngestReport())
    spans = [_span(n, [f"k{n}.x", "gen_ai.operation.name"], "") for n in range(10)]
    for span in spans * 2:
        assert len(reused._asked) <= 3
        assert _names(reused._detecting(span)) == _names(Assembler(IngestReport())._detecting(span))
    assert _names(reused._detecting(spans[0])) == ["genai"]


def _usage_reference(calls: list[tuple[str | None, int | None, int | None]]) -> list[ModelUsage]:
    """The old form: one ModelUsage per LLM call that recorded a model or tokens."""
    usage: dict[str, ModelUsage] = {}
    for model, input_tokens, output_tokens in calls:
        if model is None and input_tokens is None and output_tokens is None:
            continue
        name = model or "unknown"
        old = usage.get(name, ModelUsage(model=name))
        usage[name] = ModelUsage(
            model=name,
            input_tokens=old.input_tokens + (input_tokens or 0),
            output_tokens=old.output_tokens + (output_tokens or 0),
            calls=old.calls + 1,
        )
    return list(usage.values())


_TOKENS = st.none() | st.integers(min_value=0, max_value=2**40)


@settings(max_examples=60, deadline=None)
@given(
    st.lists(
        st.tuples(st.sampled_from([None, "gpt-4o", "claude", "unknown"]), _TOKENS, _TOKENS),
        min_size=1,
        max_size=8,
    )
)
def test_usage_tallies_equal_one_model_usage_per_call(
    calls: list[tuple[str | None, int | None, int | None]],
) -> None:
    report = IngestReport()
    file = FileReport(path="in.json", container="otlp-json")
    report.files.append(file)
    assembler = Assembler(report)
    history: list[dict[str, Any]] = []
    for n, (model, input_tokens, output_tokens) in enumerate(calls):
        history.append({"role": "user", "parts": [{"type": "text", "content": f"q{n}"}]})
        answer = {"role": "assistant", "parts": [{"type": "text", "content": f"a{n}"}]}
        attributes: dict[str, Any] = {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([answer]),
        }
        if model is not None:
            attributes["gen_ai.request.model"] = model
        if input_tokens is not None:
            attributes["gen_ai.usage.input_tokens"] = input_tokens
        if output_tokens is not None:
            attributes["gen_ai.usage.output_tokens"] = output_tokens
        history.append(answer)
        file.spans_read += 1
        assembler.add_span(
            SpanRecord(
                trace_id=T1,
                span_id=f"{n + 1:016x}",
                name="chat",
                start_time_unix_nano=n,
                attributes=attributes,
            ),
            file,
        )
    (trace,) = assembler.finish()
    assert report.balanced
    expected = _usage_reference(calls)
    assert list(trace.usage) == expected
    assert [u.model_fields_set for u in trace.usage] == [u.model_fields_set for u in expected]
