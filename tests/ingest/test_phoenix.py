"""Phoenix span export container."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import AssistantMessage, ToolCall, UserMessage
from agent_eval.ingest import detect_container, ingest
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._phoenix import PhoenixContainer, flatten_attributes

TRACE = "6b3e8a1f0c2d4e5f8a9b0c1d2e3f4a5b"


def phoenix_span(
    span_id: str,
    parent: str | None,
    kind: str,
    attributes: dict[str, Any],
    start: str = "2025-01-01T00:00:00+00:00",
) -> dict[str, Any]:
    return {
        "name": "ChatCompletion",
        "context": {"trace_id": TRACE, "span_id": span_id},
        "parent_id": parent,
        "span_kind": kind,
        "start_time": start,
        "end_time": "2025-01-01T00:00:01.5+00:00",
        "status_code": "OK",
        "status_message": "",
        "attributes": attributes,
        "events": [],
    }


LLM_ATTRIBUTES = {
    "llm": {
        "model_name": "gpt-4o",
        "input_messages": [{"message": {"role": "user", "content": "Weather in Paris?"}}],
        "output_messages": [
            {
                "message": {
                    "role": "assistant",
                    "tool_calls": [
                        {
                            "tool_call": {
                                "id": "c1",
                                "function": {
                                    "name": "get_weather",
                                    "arguments": '{"city": "Paris"}',
                                },
                            }
                        }
                    ],
                }
            }
        ],
        "token_count": {"prompt": 12, "completion": 7},
    },
    "session": {"id": "sess-1"},
}


def test_nested_attributes_flatten_into_openinference_keys() -> None:
    flat = flatten_attributes(LLM_ATTRIBUTES)
    assert flat["llm.input_messages.0.message.role"] == "user"
    assert (
        flat["llm.output_messages.0.message.tool_calls.0.tool_call.function.name"] == "get_weather"
    )
    assert flat["llm.token_count.prompt"] == 12
    assert flatten_attributes({"tags": ["a", "b"]}) == {"tags": ["a", "b"]}


def test_jsonl_export_reads_spans_and_skips_a_bad_line(tmp_path: Path) -> None:
    lines = [orjson.dumps(phoenix_span("a1b2c3d4e5f60718", None, "LLM", LLM_ATTRIBUTES)), b"{oops"]
    path = tmp_path / "spans.jsonl"
    path.write_bytes(b"\n".join(lines))
    span, bad = PhoenixContainer().read(str(path))
    assert isinstance(bad, Skipped) and bad.reason == "invalid_json" and bad.source is not None
    assert bad.source.line == 2
    assert span.attributes["openinference.span.kind"] == "LLM"
    assert span.end_time_unix_nano - span.start_time_unix_nano == 1_500_000_000
    assert span.status_code == "OK"


def test_a_phoenix_export_ingests_to_the_conversation(tmp_path: Path) -> None:
    tool = {
        "tool": {"name": "get_weather"},
        "input": {"value": '{"city": "Paris"}'},
        "output": {"value": "rainy"},
    }
    spans = [
        phoenix_span("a1b2c3d4e5f60718", None, "LLM", LLM_ATTRIBUTES),
        phoenix_span("b1b2c3d4e5f60718", None, "TOOL", tool, start="2025-01-01T00:00:02+00:00"),
    ]
    path = tmp_path / "phoenix.json"
    path.write_bytes(orjson.dumps(spans))
    assert detect_container(str(path)).name == "phoenix"
    (trace,) = ingest(path).collect()
    assert trace.conversation_id == "sess-1"
    user, call, result = trace.messages
    assert user == UserMessage(content="Weather in Paris?", span_ids=("a1b2c3d4e5f60718",))
    assert isinstance(call, AssistantMessage)
    assert call.tool_calls == (ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),)
    assert (result.role, result.content) == ("tool", "rainy")
