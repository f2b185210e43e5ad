"""Where conversation-level and unit-level evaluation events go, on a recorded GenAI agent.

The fixture (opentelemetry-instrumentation-openai-v2 under ``invoke_agent`` spans, one trace
per user turn) is read twice: by ingest, and here by hand from its raw spans, so the expected
span and ``gen_ai.response.id`` come from the file, not from the code under test.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import AgentTrace
from agent_eval.ingest import ingest
from agent_eval.otel._events import EvaluationEvents
from agent_eval.otel._targets import conversation_target, targets_by_conversation

FIXTURE = Path(__file__).resolve().parents[2] / "fixtures/otel/openai-v2-events.otlp.jsonl"
CONVERSATION = "otel-v2/refund"


def _raw_spans() -> list[dict[str, Any]]:
    spans = []
    for line in FIXTURE.read_bytes().splitlines():
        for resource in orjson.loads(line).get("resourceSpans", []):
            for scope in resource["scopeSpans"]:
                for span in scope["spans"]:
                    span["attrs"] = {
                        a["key"]: next(iter(a["value"].values())) for a in span["attributes"]
                    }
                    spans.append(span)
    return spans


def _conversation() -> AgentTrace:
    return next(t for t in ingest(FIXTURE) if t.conversation_id == CONVERSATION)


def test_a_conversation_result_targets_the_agent_span_of_its_last_trace() -> None:
    trace = _conversation()
    spans = [s for s in _raw_spans() if s["traceId"] in trace.trace_ids]
    roots = [s for s in spans if not s.get("parentSpanId")]
    assert {s["name"] for s in roots} == {"invoke_agent concierge-agent"}
    last_root = max(roots, key=lambda s: int(s["endTimeUnixNano"]))
    chats = [s for s in spans if s["attrs"].get("gen_ai.operation.name") == "chat"]
    last_chat = max(chats, key=lambda s: int(s["endTimeUnixNano"]))
    assert [r.span_id for r in trace.root_spans] == [
        s["spanId"] for s in sorted(roots, key=lambda s: int(s["startTimeUnixNano"]))
    ]
    target = conversation_target(trace)
    assert target is not None
    assert (target.trace_id, target.span_id) == (last_root["traceId"], last_root["spanId"])
    assert target.response_id == last_chat["attrs"]["gen_ai.response.id"]
    assert trace.response_ids == {
        s["spanId"]: s["attrs"]["gen_ai.response.id"]
        for s in chats
        if s["spanId"] in trace.response_ids
    }
    assert len(trace.response_ids) == len(chats)


def test_a_unit_result_targets_its_answer_span_with_its_response_id(make_result: Any) -> None:
    trace = _conversation()
    answer_span = next(iter(trace.response_ids))
    events = EvaluationEvents([], targets=targets_by_conversation([trace]))
    unit = make_result(CONVERSATION, "1", unit_id="turn:1", span_id=answer_span)
    target = events.target_of(unit)
    assert target is not None and target.span_id == answer_span
    assert target.response_id == trace.response_ids[answer_span]
    whole = make_result(CONVERSATION, "1", span_id=answer_span)  # the conversation unit
    assert events.target_of(whole) == conversation_target(trace)


def test_root_spans_and_response_ids_round_trip_and_stay_out_of_chat_logs() -> None:
    trace = _conversation()
    again = AgentTrace.model_validate_json(trace.model_dump_json())
    assert again.root_spans == trace.root_spans and again.response_ids == trace.response_ids
    bare = AgentTrace(conversation_id="chat-log")
    assert "root_spans" not in bare.model_dump() and "response_ids" not in bare.model_dump()
    assert conversation_target(bare) is None
