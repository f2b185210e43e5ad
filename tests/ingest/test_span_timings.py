"""``AgentTrace.spans``: the trajectory's spans with their times, read at ingest (issue 31.5)."""

from __future__ import annotations

import sys
from pathlib import Path

from agent_eval._trace import AgentTrace, SpanTiming
from agent_eval.ingest import ingest

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "report"))
import agent_run  # the shared recorded run of tests/report


def test_spans_carry_kind_times_agent_tool_and_usage(tmp_path: Path) -> None:
    (trace,) = ingest([agent_run.write(tmp_path / "run.otlp.json")])
    kinds = [(s.kind, s.agent_name, s.tool_name) for s in trace.spans]
    assert kinds == [
        ("agent", "triage", None),
        ("llm", "triage", None),
        ("tool", "triage", "transfer_to_booking"),
        ("agent", "booking", None),
        ("llm", "booking", None),
        ("tool", "booking", "change_flight"),
        ("llm", "booking", None),
        ("agent", "booking", None),
        ("llm", "booking", None),
        ("tool", "booking", "change_flight"),
        ("llm", "booking", None),
    ]
    failed = trace.spans[5]
    assert failed.duration_ms == 250.0 and failed.tool_call_id == "call_2"
    assert failed.parent_span_id == trace.spans[3].span_id
    assert [e.span_id for e in trace.errors] == [failed.span_id]
    first_call = trace.spans[1]
    usage = (first_call.model, first_call.input_tokens, first_call.output_tokens)
    assert usage == ("gpt-4o", 40, 8)
    assert first_call.start_ns == agent_run.T0 + 10 * agent_run.MS


def test_spans_round_trip_and_leave_unset_fields_out_of_the_json() -> None:
    timing = SpanTiming(trace_id="a" * 32, span_id="b" * 16, kind="tool", start_ns=1, end_ns=3)
    assert timing.model_dump() == {
        "trace_id": "a" * 32, "span_id": "b" * 16, "kind": "tool", "name": "", "start_ns": 1,
        "end_ns": 3,
    }  # fmt: skip
    trace = AgentTrace(conversation_id="c", spans=(timing,))
    assert AgentTrace.model_validate_json(trace.model_dump_json()) == trace
    assert "spans" not in AgentTrace(conversation_id="c").model_dump()
    assert SpanTiming(trace_id="a", span_id="b").duration_ms is None
