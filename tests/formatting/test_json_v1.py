"""``json@1``: canonical JSON with stable key order, parseable back to the messages."""

from __future__ import annotations

import json

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall
from agent_eval.formatting import get_formatter, probe_set

JSON = get_formatter("json@1")


def test_every_probe_parses_back_to_its_messages() -> None:
    for trace in probe_set():
        data = json.loads(JSON.render(trace))
        assert [m["role"] for m in data] == [m.role for m in trace.messages]
        assert [m["content"] for m in data] == [m.content for m in trace.messages]


def test_keys_sorted_at_every_depth_and_independent_of_insertion_order() -> None:
    a = ToolCall(id="1", name="t", arguments={"b": 1, "a": {"d": 2, "c": 3}})
    b = ToolCall(id="1", name="t", arguments={"a": {"c": 3, "d": 2}, "b": 1})
    render = [
        JSON.render(
            AgentTrace(conversation_id="c", messages=[AssistantMessage(tool_calls=(call,))])
        )
        for call in (a, b)
    ]
    assert render[0] == render[1]
    assert render[0].index('"a"') < render[0].index('"b"')
    assert render[0].index('"c"') < render[0].index('"d"')


def test_tool_call_shapes() -> None:
    calls = (ToolCall(name="x", raw_arguments="{bad"), ToolCall(id="2", name="y"))
    message = AssistantMessage(content="", agent_name="a1", tool_calls=calls)
    data = json.loads(JSON.render(AgentTrace(conversation_id="c", messages=[message])))
    assert data == [
        {
            "agent_name": "a1",
            "content": "",
            "role": "assistant",
            "tool_calls": [
                {"name": "x", "raw_arguments": "{bad"},
                {"arguments": None, "id": "2", "name": "y"},
            ],
        }
    ]


def test_empty_tool_call_list_is_kept_and_absent_list_omitted() -> None:
    messages = [AssistantMessage(content="a", tool_calls=()), AssistantMessage(content="b")]
    data = json.loads(JSON.render(AgentTrace(conversation_id="c", messages=messages)))
    assert data[0]["tool_calls"] == [] and "tool_calls" not in data[1]


def test_non_ascii_kept_verbatim() -> None:
    trace = probe_set()[4]
    assert "Zoë" in JSON.render(trace) and "\\u" not in JSON.render(trace).split("unicode")[1][:40]
