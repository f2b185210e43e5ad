"""VCR cassettes of OpenAI chat completions."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
import yaml

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage
from agent_eval.errors import DecodeError
from agent_eval.ingest import ingest
from agent_eval.ingest.containers._base import RecordsUsed, Skipped
from agent_eval.ingest.containers._openai_cassette import OpenAICassetteContainer

URI = "https://api.openai.com/v1/chat/completions"


def interaction(
    messages: list[dict[str, Any]], body: str, *, uri: str = URI, code: int = 200
) -> dict[str, Any]:
    return {
        "request": {
            "body": json.dumps({"model": "gpt-4o-mini", "messages": messages}),
            "method": "POST",
            "uri": uri,
            "headers": {"authorization": ["Bearer sk-secret"]},
        },
        "response": {
            "body": {"string": body},
            "status": {"code": code, "message": "OK"},
            "headers": {},
        },
    }


def completion(message: dict[str, Any], prompt: int = 10, completion_tokens: int = 3) -> str:
    return json.dumps(
        {
            "model": "gpt-4o-mini-2024-07-18",
            "choices": [{"message": message}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion_tokens},
        }
    )


def write(tmp_path: Path, interactions: list[dict[str, Any]]) -> Path:
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump({"interactions": interactions, "version": 1}))
    return path


def test_successive_calls_are_one_conversation_and_a_new_history_another(tmp_path: Path) -> None:
    first = [{"role": "user", "content": "hi"}]
    second = [*first, {"role": "assistant", "content": "hello"}, {"role": "user", "content": "bye"}]
    other = [{"role": "user", "content": "unrelated"}]
    path = write(
        tmp_path,
        [
            interaction(first, completion({"role": "assistant", "content": "hello"})),
            interaction(second, completion({"role": "assistant", "content": "ciao"}, 20, 2)),
            interaction(other, completion({"role": "assistant", "content": "ok"})),
            interaction(first, "{}", uri="https://api.openai.com/v1/embeddings"),
            interaction(first, '{"error": {}}', code=429),
        ],
    )
    items = list(OpenAICassetteContainer().read(str(path)))
    skipped = [i for i in items if isinstance(i, Skipped)]
    traces = [i for i in items if isinstance(i, AgentTrace)]
    assert [s.reason for s in skipped] == ["not_chat_completion", "http_error_response"]
    # the records are interactions: 3 used (in 2 conversations) + 2 skipped = 5
    assert [i.count for i in items if isinstance(i, RecordsUsed)] == [3]
    assert [[m.content for m in t.messages] for t in traces] == [
        ["hi", "hello", "bye", "ciao"],
        ["unrelated", "ok"],
    ]
    (usage,) = traces[0].usage
    assert (usage.model, usage.input_tokens, usage.output_tokens, usage.calls) == (
        "gpt-4o-mini-2024-07-18",
        30,
        5,
        2,
    )
    assert "sk-secret" not in traces[0].model_dump_json()


def test_streamed_responses_are_folded(tmp_path: Path) -> None:
    chunks = [
        {
            "model": "m",
            "choices": [
                {
                    "delta": {
                        "role": "assistant",
                        "tool_calls": [
                            {
                                "index": 0,
                                "id": "c1",
                                "function": {"name": "get_weather", "arguments": '{"loc'},
                            }
                        ],
                    }
                }
            ],
        },
        {
            "model": "m",
            "choices": [
                {
                    "delta": {
                        "tool_calls": [{"index": 0, "function": {"arguments": 'ation": "SF"}'}}]
                    }
                }
            ],
        },
    ]
    body = "".join(f"data: {json.dumps(c)}\n\n" for c in chunks) + "data: [DONE]\n\n"
    path = write(tmp_path, [interaction([{"role": "user", "content": "weather?"}], body)])
    (trace,) = [i for i in OpenAICassetteContainer().read(str(path)) if isinstance(i, AgentTrace)]
    assert trace.messages[-1] == AssistantMessage(
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments={"location": "SF"}),)
    )


def test_not_a_cassette_is_a_decode_error(tmp_path: Path) -> None:
    path = tmp_path / "x.yaml"
    path.write_text("just: text\n")
    with pytest.raises(DecodeError, match="interactions"):
        list(OpenAICassetteContainer().read(str(path)))


def test_the_shared_cassette_gives_the_tool_calling_conversation(shared_data: Path) -> None:
    path = (
        shared_data
        / "otel"
        / "httpcassette__otel-contrib-openai-v2__chat_tool_calls_with_content.yaml"
    )
    run = ingest(path)
    (trace,) = run.collect()
    assert run.report.files[0].container == "openai-cassette"
    assert [m.role for m in trace.messages] == [
        "system",
        "user",
        "assistant",
        "tool",
        "tool",
        "assistant",
    ]
    call = trace.messages[2]
    assert isinstance(call, AssistantMessage) and call.tool_calls is not None
    assert [(c.id, c.name, c.arguments) for c in call.tool_calls] == [
        ("call_JpNb8OiAkbIbHzDggfpdDHpi", "get_current_weather", {"location": "Seattle, WA"}),
        ("call_vaFQc3zK6hHTRZKXRI5Eo2cJ", "get_current_weather", {"location": "San Francisco, CA"}),
    ]
    results = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert [(r.content, r.tool_call_id, r.tool_name) for r in results] == [
        ("50 degrees and raining", "call_JpNb8OiAkbIbHzDggfpdDHpi", "get_current_weather"),
        ("70 degrees and sunny", "call_vaFQc3zK6hHTRZKXRI5Eo2cJ", "get_current_weather"),
    ]
    assert trace.messages[-1].content.startswith("Today, the weather in Seattle is 50 degrees")
    assert "test_openai_api_key" not in trace.model_dump_json()


def test_gzip_response_bodies_as_vcrpy_records_them_are_decompressed(tmp_path: Path) -> None:
    """vcrpy keeps the gzip bytes the server sent; YAML writes them as ``!!binary``."""
    import gzip

    sent = [{"role": "user", "content": "weather in Paris?"}]
    call = {"id": "call_1", "type": "function"}
    call["function"] = {"name": "weather", "arguments": '{"city": "Paris"}'}  # type: ignore[assignment]
    first = interaction(sent, "")
    first["response"]["body"]["string"] = gzip.compress(
        completion({"role": "assistant", "content": None, "tool_calls": [call]}).encode()
    )
    first["response"]["headers"] = {"Content-Encoding": ["gzip"]}
    replay = [*sent, {"role": "assistant", "content": None, "tool_calls": [call]}]
    replay.append({"role": "tool", "tool_call_id": "call_1", "content": "18C"})
    second = interaction(replay, "")
    second["response"]["body"]["string"] = gzip.compress(
        completion({"role": "assistant", "content": "18C in Paris."}).encode()
    )
    broken = interaction([{"role": "user", "content": "x"}], "")
    broken["response"]["body"]["string"] = b"\x1f\x8b not gzip"
    path = write(tmp_path, [first, second, broken])
    assert "!!binary" in path.read_text()
    items = list(OpenAICassetteContainer().read(str(path)))
    assert [(i.reason, i.spans) for i in items if isinstance(i, Skipped)] == [
        ("undecodable_response", 0)
    ]
    (trace,) = [i for i in items if isinstance(i, AgentTrace)]
    assert [(type(m).__name__, m.content) for m in trace.messages] == [
        ("UserMessage", "weather in Paris?"),
        ("AssistantMessage", ""),
        ("ToolMessage", "18C"),
        ("AssistantMessage", "18C in Paris."),
    ]
    assistant = trace.messages[1]
    assert isinstance(assistant, AssistantMessage)
    assert assistant.tool_calls == (
        ToolCall(id="call_1", name="weather", arguments={"city": "Paris"}),
    )
    assert sum(u.calls for u in trace.usage) == 2
