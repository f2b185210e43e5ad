"""Langfuse trace export container, and the messages per observation against Langfuse's oracle.

Each ``*.trace.json`` in ``shared/data/otel`` has a ``*.chatml.json`` beside it: Langfuse's own
normalised input/output messages per observation. For every observation whose oracle side is a
list of messages, the messages our conventions extract from that span must agree in role, text,
tool-call names, arguments (compared parsed) and ids, and tool-call ids of tool results. The
places where we disagree on purpose are spelled out in ``DELIBERATE``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agent_eval._trace import AssistantMessage, Message, ToolMessage
from agent_eval.ingest._accounting import FileReport
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._span_entry import read_span
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._langfuse import LangfuseContainer
from agent_eval.ingest.conventions._base import conventions

EXPORTS = [
    "genai-flatprompt__langfuse__koog",
    "genai-v137__langfuse__microsoft-agent-framework",
    "oi__langfuse__openai-agents",
    "pydanticai-v2__langfuse__tools-2025-12-04",
    "vercel-ai__langfuse__aisdk-tools",
]

Norm = tuple[str, str, tuple[tuple[Any, ...], ...], str | None]


def observation(**overrides: Any) -> dict[str, Any]:
    base = {
        "id": "2406e8343fd49c0e",
        "traceId": "8e419d3288419b5d944270505640e183",
        "parentObservationId": None,
        "name": "chat",
        "type": "GENERATION",
        "startTime": "2025-12-17T09:37:37.260Z",
        "endTime": "2025-12-17T09:37:40.549Z",
        "input": None,
        "output": None,
        "metadata": {
            "attributes": {},
            "resourceAttributes": {"service.name": "svc"},
            "scope": {"name": "agent_framework", "version": "1.0"},
        },
    }
    base.update(overrides)
    return base


def read_one(tmp_path: Path, obs: dict[str, Any]) -> SpanRecord:
    path = tmp_path / "lf.json"
    path.write_bytes(orjson.dumps({"trace": {"id": obs["traceId"]}, "observations": [obs]}))
    (span,) = LangfuseContainer().read(str(path))
    assert isinstance(span, SpanRecord)
    return span


def test_observation_fields_become_span_fields(tmp_path: Path) -> None:
    meta = {
        "attributes": {"gen_ai.usage.input_tokens": "77", "gen_ai.request.model": "m"},
        "resourceAttributes": {"service.name": "svc"},
        "scope": {"name": "sc", "version": "2"},
    }
    span = read_one(
        tmp_path,
        observation(
            metadata=json.dumps(meta),
            level="ERROR",
            statusMessage="bad",
            parentObservationId="4cd6caa32861956a",
        ),
    )
    assert (span.trace_id, span.span_id) == ("8e419d3288419b5d944270505640e183", "2406e8343fd49c0e")
    assert span.parent_span_id == "4cd6caa32861956a"
    assert span.start_time_unix_nano == 1_765_964_257_260_000_000
    assert span.end_time_unix_nano == 1_765_964_260_549_000_000
    assert span.attributes == {"gen_ai.usage.input_tokens": 77, "gen_ai.request.model": "m"}
    assert (span.resource, span.scope_name, span.scope_version) == (
        {"service.name": "svc"},
        "sc",
        "2",
    )
    assert (span.status_code, span.status_message) == ("ERROR", "bad")


@pytest.mark.parametrize(
    ("attributes", "output", "expected"),
    [
        (
            {"gen_ai.operation.name": "chat"},
            "[]",
            ("gen_ai.input.messages", "gen_ai.output.messages"),
        ),
        (
            {"gen_ai.operation.name": "execute_tool"},
            "x",
            ("gen_ai.tool.call.arguments", "gen_ai.tool.call.result"),
        ),
        (
            {"ai.operationId": "ai.generateText.doGenerate"},
            "[]",
            ("ai.prompt.messages", "ai.response.toolCalls"),
        ),
        ({"ai.operationId": "ai.generateText"}, "hello", ("ai.prompt", "ai.response.text")),
        ({"ai.operationId": "ai.toolCall"}, "{}", ("ai.toolCall.args", "ai.toolCall.result")),
        ({"openinference.span.kind": "LLM"}, "x", ("input.value", "output.value")),
        (
            {"gen_ai.prompt.0.role": "user", "gen_ai.operation.name": "chat"},
            "x",
            ("langfuse.observation.input", "langfuse.observation.output"),
        ),
        ({}, "x", ("langfuse.observation.input", "langfuse.observation.output")),
    ],
)
def test_input_and_output_go_back_under_the_attribute_they_came_from(
    tmp_path: Path, attributes: dict[str, str], output: str, expected: tuple[str, str]
) -> None:
    meta = {"attributes": attributes}
    span = read_one(tmp_path, observation(metadata=meta, input='["in"]', output=output))
    assert span.attributes[expected[0]] == '["in"]'
    assert span.attributes[expected[1]] == output


def test_a_present_attribute_is_never_overwritten(tmp_path: Path) -> None:
    meta = {"attributes": {"gen_ai.operation.name": "chat", "gen_ai.input.messages": "[1]"}}
    span = read_one(tmp_path, observation(metadata=meta, input="[2]"))
    assert span.attributes["gen_ai.input.messages"] == "[1]"


def test_system_instructions_folded_into_the_input_are_dropped_again(tmp_path: Path) -> None:
    system = [{"type": "text", "content": "Be brief."}]
    messages = [
        {"role": "system", "parts": system},
        {"role": "user", "parts": [{"type": "text", "content": "hi"}]},
    ]
    meta = {
        "attributes": {
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.system_instructions": json.dumps(system),
        }
    }
    span = read_one(tmp_path, observation(metadata=meta, input=json.dumps(messages)))
    assert json.loads(span.attributes["gen_ai.input.messages"]) == messages[1:]


def test_non_hex_ids_are_mapped_and_the_original_kept(tmp_path: Path) -> None:
    obs = observation(id="obs-1", traceId="4f1c9a0e-8d2b-4e5f-9a1b-2c3d4e5f6a7b")
    span = read_one(tmp_path, obs)
    assert span.trace_id == "4f1c9a0e8d2b4e5f9a1b2c3d4e5f6a7b"
    assert len(span.span_id) == 16 and int(span.span_id, 16) >= 0
    assert span.attributes["langfuse.observation.id"] == "obs-1"


# The oracle ---------------------------------------------------------------------------------


def ours(message: Message) -> Norm:
    calls: tuple[tuple[Any, ...], ...] = ()
    if isinstance(message, AssistantMessage):
        calls = tuple((c.id, c.name, c.arguments) for c in message.tool_calls or ())
    call_id = message.tool_call_id if isinstance(message, ToolMessage) else None
    return (message.role, message.content, calls, call_id)


def theirs(message: dict[str, Any]) -> Norm:
    calls = tuple(
        (
            c.get("id"),
            c["name"],
            json.loads(c["arguments"])
            if isinstance(c.get("arguments"), str)
            else c.get("arguments"),
        )
        for c in message.get("tool_calls") or ()
    )
    return (message["role"], message.get("content") or "", calls, message.get("tool_call_id"))


def koog_tool_calls_as_tool_calls(message: dict[str, Any]) -> dict[str, Any]:
    """Koog writes an assistant's tool calls as OpenAI tool-call JSON in ``content`` (even with
    role ``tool`` in the prompt). Langfuse's oracle keeps that text; we read them as the tool
    calls they are: an assistant turn with ``tool_calls``. Apply the same reading to the oracle."""
    try:
        calls = json.loads(message.get("content") or "")
    except ValueError:
        return message
    if not (isinstance(calls, list) and calls and all("function" in c for c in calls)):
        return message
    return {
        "role": "assistant",
        "content": "",
        "tool_calls": [
            {"id": c["id"], "name": c["function"]["name"], "arguments": c["function"]["arguments"]}
            for c in calls
        ],
    }


def function_results_unwrapped(node: Any) -> Any:
    """Microsoft Agent Framework's serialized ``FunctionResultContent`` as the result text.

    Its GenAI v1.37 ``tool_call_response`` parts hold ``{"type": "function_result", "call_id",
    "result"}`` (as JSON text); Langfuse shows that wrapper, we give the text the model read.
    """
    if isinstance(node, str) and node.startswith('{"type": "function_result"'):
        return json.loads(node)["result"]
    if isinstance(node, list):
        return [function_results_unwrapped(item) for item in node]
    if isinstance(node, dict):
        return {key: function_results_unwrapped(value) for key, value in node.items()}
    return node


DELIBERATE: dict[tuple[str, str], Any] = {
    ("genai-v137__langfuse__microsoft-agent-framework", "input"): function_results_unwrapped,
    ("genai-v137__langfuse__microsoft-agent-framework", "output"): function_results_unwrapped,
    # OpenAI Agents (OpenInference): Langfuse builds its input from ``input.value``, the
    # Responses API input items, which do not hold the agent's instructions; the span's
    # ``llm.input_messages.0`` does. We keep the system message: it is part of the call.
    ("oi__langfuse__openai-agents", "input"): lambda data: [
        {"role": "system", "content": "You are a helpful agent."},
        *data,
    ],
    ("genai-flatprompt__langfuse__koog", "input"): lambda data: [
        koog_tool_calls_as_tool_calls(m) for m in data
    ],
    ("genai-flatprompt__langfuse__koog", "output"): lambda data: [
        koog_tool_calls_as_tool_calls(m) for m in data
    ],
}


def extract(span: SpanRecord, path: Path) -> SpanExtraction | None:
    """What the pipeline reads from the span: every detecting convention, best one kept."""
    matched = sorted((c for _, c in conventions if c.detect(span)), key=lambda c: c.priority)
    return read_span(span, FileReport(path=str(path)), matched, 0).extraction


def comparable(oracle_side: dict[str, Any]) -> bool:
    data = oracle_side.get("data")
    return (
        bool(oracle_side["success"])
        and isinstance(data, list)
        and all(isinstance(m, dict) and "role" in m for m in data)
    )


@pytest.mark.parametrize("export", EXPORTS)
def test_messages_per_observation_agree_with_the_langfuse_oracle(
    shared_data: Path, export: str
) -> None:
    path = shared_data / "otel" / f"{export}.trace.json"
    oracle = json.loads((shared_data / "otel" / f"{export}.chatml.json").read_text())
    compared = 0
    for span in LangfuseContainer().read(str(path)):
        assert isinstance(span, SpanRecord)
        if span.span_id not in oracle:
            continue
        extraction = extract(span, path)
        for side in ("input", "output"):
            expected_side = oracle[span.span_id][side]
            if not comparable(expected_side):
                continue
            assert extraction is not None, span.span_id
            mine = extraction.input_messages if side == "input" else extraction.output_messages
            expected = DELIBERATE.get((export, side), lambda d: d)(expected_side["data"])
            assert [ours(m) for m in mine] == [theirs(m) for m in expected], (span.span_id, side)
            compared += 1
    assert compared == sum(
        comparable(o[side]) for o in oracle.values() for side in ("input", "output")
    )


def test_every_llm_observation_with_an_oracle_was_compared(shared_data: Path) -> None:
    """Guard against the oracle test passing by comparing nothing."""
    total = 0
    for export in EXPORTS:
        oracle = json.loads((shared_data / "otel" / f"{export}.chatml.json").read_text())
        total += sum(comparable(o[side]) for o in oracle.values() for side in ("input", "output"))
    assert total == 25
