"""OpenAI-style chat logs: a message list, {messages} records, JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage
from agent_eval.errors import DecodeError
from agent_eval.ingest._pipeline import detect_container
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._chat_messages import OpenAIMessagesContainer
from agent_eval.ingest.containers._tau2_bench import Tau2BenchContainer
from agent_eval.ingest.containers._tau_bench import TauBenchContainer

MESSAGES = [
    {"role": "system", "content": "You are helpful."},
    {"role": "user", "content": [{"type": "text", "text": "Weather in Paris?"}]},
    {
        "role": "assistant",
        "content": None,
        "name": "planner",
        "tool_calls": [
            {
                "id": "c1",
                "type": "function",
                "function": {"name": "weather", "arguments": '{"city": "Paris"}'},
            },
            {
                "id": "c2",
                "type": "function",
                "function": {"name": "clock", "arguments": "not json"},
            },
        ],
    },
    {"role": "tool", "tool_call_id": "c1", "content": "sunny"},
    {"role": "tool", "tool_call_id": "c2", "name": "clock", "content": "12:00"},
    {"role": "assistant", "content": "Sunny at noon."},
]


def read(path: Path) -> list[AgentTrace | Skipped]:
    return list(OpenAIMessagesContainer().read(str(path)))


def check_conversation(trace: AgentTrace) -> None:
    roles = [m.role for m in trace.messages]
    assert roles == ["system", "user", "assistant", "tool", "tool", "assistant"]
    assert trace.messages[1].content == "Weather in Paris?"
    call = trace.messages[2]
    assert isinstance(call, AssistantMessage) and call.agent_name == "planner"
    assert call.tool_calls == (
        ToolCall(id="c1", name="weather", arguments={"city": "Paris"}),
        ToolCall(id="c2", name="clock", arguments=None, raw_arguments="not json"),
    )
    results = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert [(r.tool_call_id, r.tool_name, r.content) for r in results] == [
        ("c1", "weather", "sunny"),
        ("c2", "clock", "12:00"),
    ]


def test_a_plain_message_list(tmp_path: Path) -> None:
    path = tmp_path / "chat.json"
    path.write_text(json.dumps(MESSAGES, indent=2))
    (trace,) = read(path)
    assert isinstance(trace, AgentTrace)
    check_conversation(trace)
    assert trace.conversation_id == "chat"
    assert trace.source.container == "openai-messages"
    assert detect_container(str(path)).name == "openai-messages"


def test_an_object_with_messages_reference_and_labels(tmp_path: Path) -> None:
    path = tmp_path / "one.json"
    record = {
        "messages": MESSAGES,
        "conversation_id": "conv-9",
        "reference": "Tell the weather",
        "labels": {"success": 1},
        "metadata": {"source": "unit"},
    }
    path.write_text(json.dumps(record))
    (trace,) = read(path)
    assert isinstance(trace, AgentTrace)
    check_conversation(trace)
    assert (trace.conversation_id, trace.reference) == ("conv-9", "Tell the weather")
    assert trace.labels == {"success": 1} and trace.metadata == {"source": "unit"}
    assert detect_container(str(path)).name == "openai-messages"


def test_json_lines_records_with_a_bad_line(tmp_path: Path) -> None:
    path = tmp_path / "many.jsonl"
    lines = [
        json.dumps({"conversation_id": "a", "messages": MESSAGES}),
        json.dumps({"messages": [{"role": "user", "content": "hi"}], "labels": {"success": 0}}),
        json.dumps({"messages": [{"role": "wizard", "content": "?"}]}),
        json.dumps(MESSAGES),
    ]
    path.write_text("\n".join(lines) + "\n")
    first, second, third, fourth = read(path)
    assert isinstance(first, AgentTrace) and first.conversation_id == "a"
    check_conversation(first)
    assert isinstance(second, AgentTrace) and second.conversation_id == "many/2"
    assert isinstance(third, Skipped) and third.source is not None and third.source.line == 3
    assert "wizard" in third.detail
    assert isinstance(fourth, AgentTrace) and fourth.conversation_id == "many/4"
    assert detect_container(str(path)).name == "openai-messages"


def test_records_opening_with_reference_are_detected(tmp_path: Path) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(json.dumps({"reference": "goal", "messages": MESSAGES}) + "\n")
    assert detect_container(str(path)).name == "openai-messages"
    (trace,) = read(path)
    assert isinstance(trace, AgentTrace) and trace.reference == "goal"


def test_a_list_of_records(tmp_path: Path) -> None:
    path = tmp_path / "records.json"
    path.write_text(json.dumps([{"messages": MESSAGES}, {"messages": MESSAGES, "reference": 5}]))
    first, second = read(path)
    assert isinstance(first, AgentTrace) and first.conversation_id == "records/1"
    assert isinstance(second, Skipped) and "'reference' must be a string" in second.detail


def test_empty_and_invalid_files(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("  \n")
    with pytest.raises(DecodeError, match="empty"):
        read(empty)
    broken = tmp_path / "broken.json"
    broken.write_text('[{"role": "user", "content": "x"}')
    with pytest.raises(DecodeError, match=r"broken\.json"):
        read(broken)


def test_sniff_leaves_other_formats_alone(shared_data: Path) -> None:
    sniff = OpenAIMessagesContainer().sniff
    for path in sorted(shared_data.rglob("*.json")):
        head = path.read_bytes()[:65536]
        assert not sniff(str(path), head), path
    tau = shared_data / "tau-bench" / "gpt-4o-airline.sample.json"
    tau2 = shared_data / "tau2-bench" / "gpt-4.1_airline_default_gpt-4.1_1trials.json"
    assert not Tau2BenchContainer().sniff(str(tau), tau.read_bytes()[:65536])
    assert not TauBenchContainer().sniff(str(tau2), tau2.read_bytes()[:65536])
    otlp = (
        b'{"resourceSpans": [{"scopeSpans": [{"spans": [{"name": "chat", '
        b'"attributes": [{"key": "role"}]}]}]}]}'
    )
    for container in (OpenAIMessagesContainer(), TauBenchContainer(), Tau2BenchContainer()):
        assert not container.sniff("x.json", otlp)
