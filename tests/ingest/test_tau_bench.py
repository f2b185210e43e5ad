"""tau-bench trajectories ingest with every message, tool call and pairing intact."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage
from agent_eval.errors import DecodeError
from agent_eval.ingest._pipeline import detect_container, ingest
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._tau_bench import TauBenchContainer


@pytest.fixture(scope="module")
def sample(shared_data: Path) -> Path:
    return shared_data / "tau-bench" / "gpt-4o-airline.sample.json"


def expected_message(source: dict[str, Any]) -> dict[str, Any]:
    """What the source message should become, read independently of the container."""
    out: dict[str, Any] = {"role": source["role"], "content": source.get("content") or ""}
    if source["role"] == "assistant":
        calls = source.get("tool_calls")
        out["tool_calls"] = (
            None
            if calls is None
            else [
                (c["id"], c["function"]["name"], json.loads(c["function"]["arguments"]))
                for c in calls
            ]
        )
    if source["role"] == "tool":
        out["tool_call_id"] = source["tool_call_id"]
        out["tool_name"] = source["name"]
    return out


def actual_message(message: Any) -> dict[str, Any]:
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        calls = message.tool_calls
        out["tool_calls"] = None if calls is None else [(c.id, c.name, c.arguments) for c in calls]
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
        out["tool_name"] = message.tool_name
    return out


def test_every_record_message_and_tool_call_intact(sample: Path) -> None:
    records = json.loads(sample.read_text())
    traces = list(TauBenchContainer().read(str(sample)))
    assert len(traces) == len(records) == 26
    for record, trace in zip(records, traces, strict=True):
        assert isinstance(trace, AgentTrace)
        assert [actual_message(m) for m in trace.messages] == [
            expected_message(m) for m in record["traj"]
        ]


def test_references_labels_and_ids(sample: Path) -> None:
    records = json.loads(sample.read_text())
    traces = [t for t in TauBenchContainer().read(str(sample)) if isinstance(t, AgentTrace)]
    for record, trace in zip(records, traces, strict=True):
        assert trace.conversation_id == f"tau-bench/{record['task_id']}/{record['trial']}"
        assert trace.reference == record["info"]["task"]["instruction"]
        assert trace.labels == {"reward": record["reward"], "success": int(record["reward"] == 1)}
        assert trace.metadata["task_id"] == record["task_id"]
        assert trace.source.container == "tau-bench"
    assert len({t.conversation_id for t in traces}) == len(traces)
    assert sorted(t.labels["success"] for t in traces).count(1) == 13


def test_every_tool_result_pairs_with_an_earlier_call(sample: Path) -> None:
    for trace in TauBenchContainer().read(str(sample)):
        assert isinstance(trace, AgentTrace)
        calls: dict[str, str] = {}
        for message in trace.messages:
            if isinstance(message, AssistantMessage):
                calls.update({c.id: c.name for c in message.tool_calls or () if c.id})
            if isinstance(message, ToolMessage):
                assert calls[message.tool_call_id or ""] == message.tool_name


def test_auto_detected_through_the_pipeline(sample: Path) -> None:
    assert detect_container(str(sample)).name == "tau-bench"
    run = ingest(sample)
    assert len(run.collect()) == 26
    assert run.report.files[0].container == "tau-bench"


def test_json_lines_and_a_bad_record_are_handled(tmp_path: Path) -> None:
    good = {
        "task_id": 3,
        "trial": 1,
        "reward": 1.0,
        "info": {"task": {"instruction": "Do X"}},
        "traj": [{"role": "user", "content": "hi"}, {"role": "assistant", "content": "ok"}],
    }
    path = tmp_path / "run.jsonl"
    path.write_text(json.dumps(good) + "\n" + json.dumps({"task_id": 4}) + "\n")
    first, second = TauBenchContainer().read(str(path))
    assert isinstance(first, AgentTrace) and first.reference == "Do X"
    assert isinstance(second, Skipped)
    assert second.reason == "invalid_tau_bench_record" and second.source.line == 2
    assert "traj" in second.detail


def test_unknown_role_is_skipped_with_the_message_index(tmp_path: Path) -> None:
    record = {"task_id": 1, "traj": [{"role": "user", "content": "a"}, {"role": "robot"}]}
    path = tmp_path / "bad.json"
    path.write_text(json.dumps([record]))
    (item,) = TauBenchContainer().read(str(path))
    assert isinstance(item, Skipped) and "messages[1]" in item.detail


def test_truncated_file_is_a_decode_error_with_line(tmp_path: Path) -> None:
    path = tmp_path / "cut.json"
    path.write_text('[\n{"task_id": 1, "traj": []},\n{"task_id": 2, "traj": [')
    items = TauBenchContainer().read(str(path))
    assert isinstance(next(items), AgentTrace)
    with pytest.raises(DecodeError, match=r"cut.json:3"):
        next(items)
