"""The ``langfuse-sdk`` convention: spans the Langfuse SDK writes itself (langfuse.observation.*).

The shapes are those recorded from langfuse 5.2 (``fixtures/langfuse/``, asserted whole in
``test_overlap_fixtures.py``); these cases cover what that recording does not: tool
observations, ``input``/``output`` usage keys, a plain-text output, the older session key, an
unknown role, and observation types that hold no messages.
"""

from __future__ import annotations

import json

import pytest

from agent_eval._trace import AssistantMessage, UserMessage
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._langfuse_sdk import LangfuseSDKConvention

SDK = LangfuseSDKConvention()


def observation(kind: str, name: str = "obs", **attributes: object) -> SpanRecord:
    attrs = {"langfuse.observation.type": kind, **attributes}
    return SpanRecord(trace_id="a" * 32, span_id="b" * 16, name=name, attributes=attrs)


def test_generation_with_a_message_list_text_output_and_input_output_usage() -> None:
    span = observation(
        "generation",
        **{
            "langfuse.observation.input": json.dumps([{"role": "user", "content": "Hi?"}]),
            "langfuse.observation.output": "Hello.",
            "langfuse.observation.model.name": "m-1",
            "langfuse.observation.usage_details": json.dumps({"input": 7, "output": 2}),
            "langfuse.session.id": "s-1",
        },
    )
    assert SDK.detect(span)
    ex = SDK.extract(span)
    assert ex.kind == "llm" and ex.model == "m-1" and ex.conversation_id == "s-1"
    assert (ex.input_tokens, ex.output_tokens) == (7, 2)
    assert ex.input_messages == (UserMessage(content="Hi?"),)
    assert ex.output_messages == (AssistantMessage(content="Hello."),)


def test_tool_observation_is_a_tool_run_and_agent_names_the_agent() -> None:
    tool = observation(
        "tool",
        name="get_weather",
        **{
            "langfuse.observation.input": json.dumps({"city": "Paris"}),
            "langfuse.observation.output": "18 °C",
        },
    )
    ex = SDK.extract(tool)
    assert ex.kind == "tool" and ex.tool is not None
    assert (ex.tool.name, ex.tool.arguments, ex.tool.result) == (
        "get_weather",
        {"city": "Paris"},
        "18 °C",
    )
    agent = SDK.extract(observation("agent", name="concierge", **{"session.id": "s"}))
    assert (agent.kind, agent.agent_name, agent.conversation_id) == ("agent", "concierge", "s")


def test_span_and_event_observations_hold_no_messages() -> None:
    ex = SDK.extract(observation("span"))
    assert ex.ignored_reason == "no_genai_content"
    assert not SDK.detect(SpanRecord(trace_id="a" * 32, span_id="b" * 16, attributes={}))
    empty = SDK.extract(observation("generation"))
    assert empty.ignored_reason == "no_message_content"


def test_unknown_role_is_an_invalid_span_naming_the_attribute() -> None:
    span = observation(
        "generation",
        **{"langfuse.observation.input": json.dumps([{"role": "narrator", "content": "x"}])},
    )
    with pytest.raises(InvalidSpanError, match=r"langfuse\.observation\.input"):
        SDK.extract(span)
