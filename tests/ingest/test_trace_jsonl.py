"""AgentTrace JSONL container: lossless read-back, sniffing, bad lines."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    SourceInfo,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.errors import DecodeError
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._trace_jsonl import TraceJsonlContainer

container = TraceJsonlContainer()


def sample(n: int) -> AgentTrace:
    return AgentTrace(
        conversation_id=f"conv-{n}",
        trace_ids=("0af7651916cd43dd8448eb211c80319c",),
        messages=(
            UserMessage(content="book a flight ✈", span_ids=("b7ad6b7169203331",)),
            AssistantMessage(
                tool_calls=(ToolCall(id="c1", name="search", arguments={"to": "SFO"}),),
                agent_name="planner",
            ),
            ToolMessage(content="[]", tool_call_id="c1", tool_name="search"),
        ),
        source=SourceInfo(container="otlp-json", conventions=("genai",), files=("a.json",)),
        labels={"success": 1},
        reference="fly to SFO",
    )


def write(tmp_path: Path, lines: list[str]) -> str:
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(line + "\n" for line in lines), encoding="utf-8")
    return str(path)


def test_round_trip_is_lossless(tmp_path: Path) -> None:
    traces = [sample(1), sample(2)]
    path = write(tmp_path, [t.model_dump_json() for t in traces])
    assert list(container.read(path)) == traces
    assert container.sniff(path, Path(path).read_bytes()[:100])


def test_sniff_rejects_other_json() -> None:
    assert not container.sniff("x", b'{"resourceSpans": []}')
    assert not container.sniff("x", b'{"conversation_id": "c", "schema_version": 1}')


def test_bad_line_after_good_ones_is_skipped_with_line(tmp_path: Path) -> None:
    good = sample(1).model_dump_json()
    path = write(tmp_path, [good, '{"schema_version": 1}', good.replace("conv-1", "conv-3")])
    first, skipped, third = container.read(path)
    assert isinstance(first, AgentTrace) and isinstance(third, AgentTrace)
    assert isinstance(skipped, Skipped) and skipped.reason == "invalid_agent_trace"
    assert str(skipped.source) == f"{path}:2" and "conversation_id" in skipped.detail
    assert (skipped.spans, skipped.logs) == (0, 0)


def test_newer_schema_and_garbage_first_line_are_decode_errors(tmp_path: Path) -> None:
    newer = sample(1).model_dump_json().replace('"schema_version":1', '"schema_version":99')
    with pytest.raises(DecodeError, match="upgrade"):
        list(container.read(write(tmp_path, [newer])))
    with pytest.raises(DecodeError) as info:
        list(container.read(write(tmp_path, ["{not json"])))
    assert info.value.line == 1


def test_empty_file(tmp_path: Path) -> None:
    with pytest.raises(DecodeError, match="empty"):
        list(container.read(write(tmp_path, [])))
