"""Units cut out of a trace: conversation and per-turn answers with their context."""

from __future__ import annotations

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.metrics._units import answer_units, conversation_unit, last_llm_span


def _trace() -> AgentTrace:
    return AgentTrace(
        conversation_id="c1",
        messages=(
            UserMessage(content="What is the return window?"),
            AssistantMessage(
                content="Let me look.",
                tool_calls=(ToolCall(id="t1", name="policy", arguments={}),),
                span_ids=("a" * 16,),
            ),
            ToolMessage(content="Returns: 14 days.", tool_call_id="t1"),
            AssistantMessage(content="14 days.", span_ids=("b" * 16,)),
            UserMessage(content="And shipping?"),
            AssistantMessage(content="It is free.", span_ids=("c" * 16, "d" * 16)),
            UserMessage(content="Thanks"),
        ),
        retrievals=(
            Retrieval(
                after_message=1,
                documents=(
                    RetrievedDocument(content="Doc A", id="A"),
                    RetrievedDocument(content="Doc B", id="B"),
                ),
            ),
            Retrieval(after_message=5, documents=(RetrievedDocument(content="Doc C", id="C"),)),
        ),
        labels={"turns": {"2": {"reference": "Shipping costs 5 EUR.", "answerable": True}}},
    )


def test_answer_units_cut_turns_with_their_context_in_order() -> None:
    units = answer_units(_trace())
    assert [u.id for u in units] == ["turn:1", "turn:2", "turn:3"]
    first, second, third = units
    assert first.question == "What is the return window?"
    assert first.answer == "14 days." and first.message_index == 3
    assert first.span_id == "b" * 16
    assert [(c.source, c.id, c.text, c.rank) for c in first.contexts] == [
        ("retrieval", "A", "Doc A", 0),
        ("retrieval", "B", "Doc B", 1),
        ("tool", "t1", "Returns: 14 days.", None),
    ]
    assert second.answer == "It is free." and second.span_id == "c" * 16  # the producing span
    assert [c.id for c in second.contexts] == ["C"]
    assert second.reference == "Shipping costs 5 EUR."
    assert dict(second.labels) == {"answerable": True}
    assert third.answer == "" and third.message_index is None and third.contexts == ()


def test_conversation_unit_points_at_the_last_llm_span() -> None:
    unit = conversation_unit(_trace())
    assert unit.id == "conversation" and unit.span_id == "c" * 16
    assert last_llm_span(AgentTrace(conversation_id="x")) is None
