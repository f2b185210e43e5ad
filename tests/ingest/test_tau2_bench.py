"""tau2-bench results ingest with every message, tool call and pairing intact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage
from agent_eval.errors import DecodeError
from agent_eval.ingest._pipeline import detect_container
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._tau2_bench import Tau2BenchContainer

FILES = [
    "tau2-bench/gpt-4.1_airline_default_gpt-4.1_1trials.json",
    "tau2-bench/gpt-4.1_retail_default_gpt-4.1_1trials.subset.json",
    "tau2-judge-pr103/azure-airline-full.json",
]


def expected_message(source: dict[str, Any], names: dict[str, str]) -> dict[str, Any]:
    out: dict[str, Any] = {"role": source["role"], "content": source.get("content") or ""}
    if source["role"] == "assistant":
        calls = source.get("tool_calls")
        out["tool_calls"] = (
            None if calls is None else [(c["id"], c["name"], c["arguments"]) for c in calls]
        )
        names.update({c["id"]: c["name"] for c in calls or ()})
        out["reasoning"] = source.get("reasoning") or None
    if source["role"] == "tool":
        out["tool_call_id"] = source["id"]
        out["tool_name"] = names[source["id"]]
    return out


def actual_message(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        calls = message.tool_calls
        out["tool_calls"] = None if calls is None else [(c.id, c.name, c.arguments) for c in calls]
        out["reasoning"] = message.reasoning
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
        out["tool_name"] = message.tool_name
    return out


@pytest.mark.parametrize("name", FILES)
def test_every_simulation_message_and_tool_call_intact(shared_data: Path, name: str) -> None:
    path = shared_data / name
    results = json.loads(path.read_text())
    traces = list(Tau2BenchContainer().read(str(path)))
    assert len(traces) == len(results["simulations"])
    for simulation, trace in zip(results["simulations"], traces, strict=True):
        assert isinstance(trace, AgentTrace)
        names: dict[str, str] = {}
        expected = [expected_message(m, names) for m in simulation["messages"]]
        assert [actual_message(m) for m in trace.messages] == expected


@pytest.mark.parametrize("name", FILES)
def test_references_labels_ids_and_usage(shared_data: Path, name: str) -> None:
    path = shared_data / name
    results = json.loads(path.read_text())
    tasks = {t["id"]: t for t in results["tasks"]}
    traces = [t for t in Tau2BenchContainer().read(str(path)) if isinstance(t, AgentTrace)]
    for simulation, trace in zip(results["simulations"], traces, strict=True):
        reward = simulation["reward_info"]["reward"]
        assert trace.conversation_id == simulation["id"]
        assert trace.labels == {"reward": reward, "success": int(reward == 1.0)}
        instructions = tasks[simulation["task_id"]]["user_scenario"]["instructions"]
        assert instructions["reason_for_call"].strip() in (trace.reference or "")
        assert instructions["task_instructions"].strip() in (trace.reference or "")
        assert trace.metadata["task_id"] == simulation["task_id"]
        (usage,) = trace.usage
        assert usage.model == results["info"]["agent_info"]["llm"]
        assert usage.output_tokens == sum(
            (m.get("usage") or {}).get("completion_tokens", 0)
            for m in simulation["messages"]
            if m["role"] == "assistant"
        )
    assert len({t.conversation_id for t in traces}) == len(traces)


def test_pairing_and_detection(shared_data: Path) -> None:
    for name in FILES:
        path = shared_data / name
        assert detect_container(str(path)).name == "tau2-bench"
        for trace in Tau2BenchContainer().read(str(path)):
            assert isinstance(trace, AgentTrace)
            calls = {
                c.id
                for m in trace.messages
                if isinstance(m, AssistantMessage)
                for c in m.tool_calls or ()
            }
            results = [m.tool_call_id for m in trace.messages if isinstance(m, ToolMessage)]
            assert set(results) <= calls


def minimal(simulations: list[Any], instructions: Any = "Book a flight") -> dict[str, Any]:
    return {
        "timestamp": "2025-01-01T00:00:00",
        "info": {"agent_info": {"llm": "m"}, "user_info": {}},
        "tasks": [{"id": "7", "user_scenario": {"instructions": instructions}}],
        "simulations": simulations,
    }


def test_user_tool_calls_kept_and_bad_simulation_skipped(tmp_path: Path) -> None:
    user_call = {"id": "u1", "name": "toggle_airplane_mode", "arguments": {}, "requestor": "user"}
    good = {
        "id": "s1",
        "task_id": "7",
        "trial": 0,
        "reward_info": {"reward": 0.0},
        "messages": [
            {"role": "user", "content": None, "tool_calls": [user_call]},
            {"role": "tool", "id": "u1", "content": "done", "requestor": "user"},
        ],
    }
    path = tmp_path / "results.json"
    path.write_text(json.dumps(minimal([good, {"id": "s2"}])))
    first, second = Tau2BenchContainer().read(str(path))
    assert isinstance(first, AgentTrace)
    assert first.reference == "Book a flight"
    assert first.labels == {"reward": 0.0, "success": 0}
    assert first.messages[0].parts[0].type == "tool_call"
    assert first.messages[0].parts[0].data["name"] == "toggle_airplane_mode"
    assert (first.messages[1].tool_call_id, first.messages[1].tool_name) == (
        "u1",
        "toggle_airplane_mode",
    )
    assert isinstance(second, Skipped) and second.reason == "invalid_tau2_bench_simulation"


def test_not_an_object_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "list.json"
    path.write_text("[1, 2]")
    with pytest.raises(DecodeError, match="JSON object"):
        list(Tau2BenchContainer().read(str(path)))
