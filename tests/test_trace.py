"""AgentTrace: JSON round-trip is lossless and the schema version is enforced."""

import pytest
from pydantic import ValidationError

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    SourceInfo,
    ToolCall,
    ToolMessage,
    UserMessage,
)


def _trace() -> AgentTrace:
    return AgentTrace(
        conversation_id="conv-1",
        trace_ids=("0af7651916cd43dd8448eb211c80319c",),
        messages=(
            UserMessage(content="Refund order #123 ✓", span_ids=("b7ad6b7169203331",)),
            AssistantMessage(
                content="",
                tool_calls=(
                    ToolCall(id="c1", name="lookup", arguments={"id": 123, "f": 1.0, "n": None}),
                    ToolCall(id="c2", name="bad", raw_arguments="{not json"),
                ),
                agent_name="triage",
            ),
            AssistantMessage(content="empty list", tool_calls=()),
            ToolMessage(content="delivered", tool_call_id="c1", tool_name="lookup"),
        ),
        retrievals=(
            Retrieval(after_message=1, documents=(RetrievedDocument(content="d", score=0.5),)),
        ),
        source=SourceInfo(container="otlp-json", conventions=("genai",), files=("a.json",)),
        reference="refund the order",
        labels={"success": 1},
    )


def test_json_round_trip_is_lossless() -> None:
    trace = _trace()
    again = AgentTrace.model_validate_json(trace.model_dump_json())
    assert again == trace
    assert again.messages[1].tool_calls[0].arguments == {"id": 123, "f": 1.0, "n": None}  # type: ignore[union-attr]
    assert again.messages[2].tool_calls == ()  # type: ignore[union-attr]


def test_empty_tool_call_list_differs_from_none() -> None:
    assert AssistantMessage(tool_calls=()) != AssistantMessage(tool_calls=None)


def test_newer_schema_version_is_rejected_with_upgrade_hint() -> None:
    data = _trace().model_dump(mode="json")
    data["schema_version"] = 99
    with pytest.raises(ValidationError, match="upgrade otel-agent-eval"):
        AgentTrace.model_validate(data)


def test_agent_names_in_first_seen_order() -> None:
    assert _trace().agent_names == ("triage",)


def test_trace_is_frozen() -> None:
    with pytest.raises(ValidationError):
        _trace().conversation_id = "x"  # type: ignore[misc]
