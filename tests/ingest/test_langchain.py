"""langchain-core interop: from_langchain / to_langchain round trips."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from langchain_core.messages import (
    AIMessage,
    BaseMessage,
    ChatMessage,
    HumanMessage,
    RemoveMessage,
    SystemMessage,
    ToolMessage,
)

from agent_eval._trace import AgentTrace, AssistantMessage, OpaquePart, ToolCall, UserMessage
from agent_eval._trace import SystemMessage as OurSystem
from agent_eval._trace import ToolMessage as OurTool
from agent_eval.errors import InputError
from agent_eval.ingest._langchain import from_langchain, to_langchain
from agent_eval.ingest.containers._tau2_bench import Tau2BenchContainer
from agent_eval.ingest.containers._tau_bench import TauBenchContainer

TRACE = AgentTrace(
    conversation_id="c1",
    messages=(
        OurSystem(content="Be brief."),
        UserMessage(
            content="Book Paris → Rome, 2 adults",
            parts=(
                OpaquePart(type="image_url", data={"type": "image_url", "image_url": {"url": "x"}}),
            ),
        ),
        AssistantMessage(
            content="",
            agent_name="booker",
            model="gpt-x",
            reasoning="think",
            tool_calls=(
                ToolCall(
                    id="a", name="search", arguments={"from": "PAR", "to": "ROM", "pax": [1, 2]}
                ),
                ToolCall(id="b", name="weird", arguments=[1, 2]),
                ToolCall(id="c", name="broken", arguments=None, raw_arguments="{not json"),
            ),
        ),
        OurTool(content="3 flights", tool_call_id="a", tool_name="search"),
        OurTool(content="ok", tool_call_id="b", tool_name="weird"),
        OurTool(content="error", tool_call_id="c", tool_name="broken"),
        AssistantMessage(content="Booked.\nAnything else?"),
    ),
)


def test_agent_trace_round_trip_is_lossless() -> None:
    back = from_langchain(to_langchain(TRACE), conversation_id="c1")
    assert back.messages == TRACE.messages


def test_langchain_round_trip_is_lossless() -> None:
    messages: list[BaseMessage] = [
        SystemMessage(content="sys"),
        HumanMessage(content="hi"),
        AIMessage(
            content="calling",
            name="agent-1",
            tool_calls=[
                {"name": "f", "args": {"x": 1}, "id": "t1", "type": "tool_call"},
                {"name": "g", "args": {}, "id": "t2", "type": "tool_call"},
            ],
        ),
        ToolMessage(content="one", tool_call_id="t1", name="f"),
        ToolMessage(content="two", tool_call_id="t2"),
        AIMessage(content="done"),
    ]
    trace = from_langchain(messages)
    again = to_langchain(trace)
    for original, copy in zip(messages, again, strict=True):
        assert type(copy) is type(original)
        assert copy.content == original.content
        assert copy.name == original.name
    assert again[2].tool_calls == messages[2].tool_calls  # type: ignore[attr-defined]
    assert [m.tool_call_id for m in again[3:5]] == ["t1", "t2"]  # type: ignore[attr-defined]


def test_mapping_of_roles_and_fields() -> None:
    lc = to_langchain(TRACE)
    assert [type(m).__name__ for m in lc] == [
        "SystemMessage",
        "HumanMessage",
        "AIMessage",
        "ToolMessage",
        "ToolMessage",
        "ToolMessage",
        "AIMessage",
    ]
    ai = lc[2]
    assert isinstance(ai, AIMessage)
    assert ai.tool_calls == [
        {
            "name": "search",
            "args": {"from": "PAR", "to": "ROM", "pax": [1, 2]},
            "id": "a",
            "type": "tool_call",
        }
    ]
    assert [(c["id"], c["args"]) for c in ai.invalid_tool_calls] == [
        ("b", "[1,2]"),
        ("c", "{not json"),
    ]
    assert (ai.name, ai.response_metadata["model_name"]) == ("booker", "gpt-x")
    assert lc[1].content[0] == {"type": "text", "text": "Book Paris → Rome, 2 adults"}


def test_dicts_and_tuples_are_accepted_and_ids_are_stable() -> None:
    first = from_langchain([("user", "hello"), {"role": "assistant", "content": "hi"}])
    second = from_langchain([HumanMessage("hello"), AIMessage("hi")])
    assert [m.role for m in first.messages] == ["user", "assistant"]
    assert first.conversation_id == second.conversation_id
    assert first.conversation_id.startswith("langchain-")
    assert from_langchain([HumanMessage("other")]).conversation_id != first.conversation_id


def test_chat_message_roles_and_unsupported_types() -> None:
    trace = from_langchain([ChatMessage(role="developer", content="rules")])
    assert trace.messages[0].role == "system"
    with pytest.raises(InputError, match=r"messages\[1\]"):
        from_langchain([HumanMessage("x"), RemoveMessage(id="m1")])


def test_labels_reference_metadata() -> None:
    trace = from_langchain(
        [HumanMessage("x")],
        reference="goal",
        labels={"success": 1},
        metadata={"k": "v"},
        conversation_id="mine",
    )
    assert (trace.conversation_id, trace.reference, trace.labels, trace.metadata) == (
        "mine",
        "goal",
        {"success": 1},
        {"k": "v"},
    )


def test_real_conversations_round_trip(shared_data: Path) -> None:
    paths = [
        (TauBenchContainer(), shared_data / "tau-bench" / "gpt-4o-airline.sample.json"),
        (
            Tau2BenchContainer(),
            shared_data / "tau2-bench" / "gpt-4.1_airline_default_gpt-4.1_1trials.json",
        ),
    ]
    count = 0
    for container, path in paths:
        for trace in container.read(str(path)):
            assert isinstance(trace, AgentTrace)
            assert from_langchain(to_langchain(trace)).messages == trace.messages
            count += 1
    assert count == 46


def test_langchain_openai_accepts_the_messages() -> None:
    from langchain_openai.chat_models.base import _convert_message_to_dict

    dicts = [_convert_message_to_dict(m) for m in to_langchain(TRACE)]
    assert dicts[2]["tool_calls"][0]["function"] == {
        "name": "search",
        "arguments": '{"from": "PAR", "to": "ROM", "pax": [1, 2]}',
    }
    assert dicts[3] == {"role": "tool", "content": "3 flights", "tool_call_id": "a"}


# -- property: any AgentTrace transcript survives the round trip ------------------------------

JSON_LEAF = (
    st.none()
    | st.booleans()
    | st.integers(-(2**53), 2**53)
    | st.text(max_size=8)
    | (st.floats(allow_nan=False, allow_infinity=False))
)
JSON = st.recursive(
    JSON_LEAF,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=5), inner, max_size=3)
    ),
    max_leaves=8,
)
IDS = st.none() | st.text(min_size=1, max_size=6)


@st.composite
def tool_calls(draw: st.DrawFn) -> tuple[ToolCall, ...] | None:
    valid = draw(
        st.lists(
            st.builds(
                ToolCall,
                id=IDS,
                name=st.text(max_size=6),
                arguments=st.dictionaries(st.text(max_size=5), JSON, max_size=3),
            ),
            max_size=3,
        )
    )
    other = draw(
        st.lists(
            st.one_of(
                st.builds(
                    ToolCall,
                    id=IDS,
                    name=st.text(max_size=6),
                    arguments=JSON.filter(lambda v: not isinstance(v, dict) and v is not None),
                ),
                st.builds(
                    ToolCall,
                    id=IDS,
                    name=st.text(max_size=6),
                    arguments=st.none(),
                    raw_arguments=st.sampled_from(["{oops", "not json", "[1,"]),
                ),
            ),
            max_size=2,
        )
    )
    return tuple(valid + other) or None  # valid calls first: see the module's limits


MESSAGES = st.one_of(
    st.builds(OurSystem, content=st.text(max_size=20)),
    st.builds(UserMessage, content=st.text(max_size=20)),
    st.builds(
        AssistantMessage,
        content=st.text(max_size=20),
        tool_calls=tool_calls(),
        agent_name=st.none() | st.text(max_size=6),
        model=st.none() | st.text(max_size=6),
        reasoning=st.none() | st.text(max_size=10),
    ),
    st.builds(
        OurTool,
        content=st.text(max_size=20),
        tool_call_id=st.none() | st.text(min_size=1),
        tool_name=st.none() | st.text(max_size=6),
    ),
)


@settings(max_examples=200, deadline=None)
@given(st.lists(MESSAGES, max_size=8))
def test_round_trip_property(messages: list[Any]) -> None:
    trace = AgentTrace(conversation_id="p", messages=tuple(messages))
    assert from_langchain(to_langchain(trace), conversation_id="p").messages == trace.messages
