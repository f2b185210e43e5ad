"""Property tests: any forest of spans (cycles, orphans, duplicates, junk attributes, stray logs)
assembles without raising, every span and log record is accounted for, and no message is lost
from a well-formed replayed history."""

from __future__ import annotations

import json
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._spans import LogRecord, SpanRecord

TRACES = [f"{i:032x}" for i in range(1, 4)]
SPAN_IDS = [f"{i:016x}" for i in range(1, 9)]

texts = st.sampled_from(["hi", "yes", "ok", "  hi ", "weather?", ""])
roles = st.sampled_from(["system", "user", "assistant", "tool", "developer", "narrator"])
message = st.fixed_dictionaries(
    {
        "role": roles,
        "parts": st.lists(
            st.fixed_dictionaries({"type": st.just("text"), "content": texts}), max_size=2
        ),
    }
)
junk = st.one_of(
    st.none(), st.integers(), st.floats(), st.text(max_size=5), st.lists(st.integers(), max_size=2)
)
attributes = st.one_of(
    st.builds(
        lambda i, o, conv: {
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(i),
            "gen_ai.output.messages": json.dumps(o),
            **({"gen_ai.conversation.id": conv} if conv else {}),
        },
        st.lists(message, max_size=4),
        st.lists(message, max_size=2),
        st.sampled_from([None, "c1", "c2"]),
    ),
    st.builds(
        lambda name, cid, res: {
            "gen_ai.operation.name": "execute_tool",
            "gen_ai.tool.name": name,
            **({"gen_ai.tool.call.id": cid} if cid else {}),
            "gen_ai.tool.call.result": res,
        },
        st.sampled_from(["a", "b"]),
        st.sampled_from([None, "x1", "x2"]),
        texts,
    ),
    st.dictionaries(
        st.sampled_from(
            [
                "gen_ai.agent.name",
                "gen_ai.usage.input_tokens",
                "openinference.span.kind",
                "llm.input_messages.0.message.role",
                "llm.input_messages.0.message.content",
                "http.request.method",
                "session.id",
                "retrieval.documents.0.document.content",
            ]
        ),
        junk,
        max_size=4,
    ),
)
spans = st.builds(
    lambda trace, span, parent, start, attrs: SpanRecord(
        trace_id=trace,
        span_id=span,
        parent_span_id=parent,
        start_time_unix_nano=start,
        attributes=attrs,
    ),
    st.sampled_from(TRACES),
    st.sampled_from(SPAN_IDS),
    st.one_of(st.none(), st.sampled_from([*SPAN_IDS, "f" * 16])),
    st.integers(0, 5),
    attributes,
)
logs = st.builds(
    lambda name, trace, span, body: LogRecord(
        event_name=name, trace_id=trace, span_id=span, body=body
    ),
    st.sampled_from(["gen_ai.user.message", "gen_ai.choice", "gen_ai.tool.message", "other"]),
    st.one_of(st.none(), st.sampled_from(TRACES)),
    st.one_of(st.none(), st.sampled_from(SPAN_IDS)),
    st.one_of(
        junk,
        st.fixed_dictionaries({"content": texts}),
        st.fixed_dictionaries({"message": st.just({"role": 3})}),
    ),
)


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(spans, max_size=12), st.lists(logs, max_size=6))
def test_any_span_forest_assembles_and_is_accounted(
    span_list: list[SpanRecord], log_list: list[LogRecord]
) -> None:
    report = IngestReport()
    file = FileReport(path="f.json", container="otlp-json")
    report.files.append(file)
    assembler = Assembler(report)
    for span in span_list:
        file.spans_read += 1
        assembler.add_span(span, file)
    for record in log_list:
        file.logs_read += 1
        assembler.add_log(record, file)
    traces = list(assembler.finish())
    assert report.balanced, report.to_json()
    assert not {"internal_error", "convention_error"} & set(report.spans_ignored), report.skipped
    assert report.conversations == len(traces)
    assert all(trace.messages for trace in traces)
    for trace in traces:
        assert trace.model_validate_json(trace.model_dump_json()) == trace


def _chat(history: list[dict[str, Any]], reply: dict[str, Any], n: int, start: int) -> SpanRecord:
    return SpanRecord(
        trace_id=TRACES[0],
        span_id=f"{n:016x}",
        start_time_unix_nano=start,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([reply]),
        },
    )


@settings(max_examples=200, deadline=None)
@given(
    st.lists(
        st.tuples(
            st.sampled_from(["hi", "yes", "ok", "no"]), st.sampled_from(["sure", "ok", "done"])
        ),
        min_size=1,
        max_size=6,
    )
)
def test_replayed_history_gives_each_turn_once(turns: list[tuple[str, str]]) -> None:
    history: list[dict[str, Any]] = [
        {"role": "system", "parts": [{"type": "text", "content": "S"}]}
    ]
    calls = []
    for n, (asked, answered) in enumerate(turns):
        history.append({"role": "user", "parts": [{"type": "text", "content": asked}]})
        reply = {"role": "assistant", "parts": [{"type": "text", "content": answered}]}
        calls.append(_chat(list(history), reply, n + 1, n))
        history.append(reply)
    report = IngestReport()
    file = FileReport(path="f.json")
    report.files.append(file)
    assembler = Assembler(report)
    for span in calls:
        file.spans_read += 1
        assembler.add_span(span, file)
    [trace] = list(assembler.finish())
    expected = ["S"] + [text for turn in turns for text in turn]
    assert [m.content for m in trace.messages] == expected
    assert report.balanced and report.spans_used == len(calls)
