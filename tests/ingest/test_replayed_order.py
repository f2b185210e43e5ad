"""Parallel tool results follow the order the model was sent them (trial7 #14).

LangGraph's ``ToolNode`` runs parallel calls concurrently: openinference-langchain records one
TOOL span per call in the order they ran, then the next LLM span's ``llm.input_messages`` (what
the model was sent) replays the results in the order of the calls. The spans are written as the
Collector's OTLP JSON lines (:mod:`agent_eval.testing._otlp`), in the shape openinference-langchain
0.1.80 records under LangGraph 1.2 ``create_react_agent``, and read through ``ingest``.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import AssistantMessage, ToolMessage
from agent_eval.ingest import ingest
from agent_eval.testing._otlp import export_request, span

TRACE = "4bf92f3577b34da6a3ce929d0e0e4736"
KIND = "openinference.span.kind"
SYSTEM = "You answer weather questions with the get_weather tool."
ASK = "Compare Oslo and Madrid"
RESULTS = {"call_o1": "Oslo: 3C snow", "call_m1": "Madrid: 25C clear"}
CITIES = {"call_o1": "Oslo", "call_m1": "Madrid"}


def sid(n: int) -> str:
    return f"{n:016x}"


def message(n: int, role: str, **fields: Any) -> dict[str, Any]:
    prefix = f"llm.input_messages.{n}.message"
    out: dict[str, Any] = {f"{prefix}.role": role}
    for name, value in fields.items():
        out[f"{prefix}.{name}"] = value
    return out


def calls(prefix: str) -> dict[str, Any]:
    out: dict[str, Any] = {f"{prefix}.role": "assistant"}
    for i, call_id in enumerate(CITIES):
        call = f"{prefix}.tool_calls.{i}.tool_call"
        out[f"{call}.id"] = call_id
        out[f"{call}.function.name"] = "get_weather"
        out[f"{call}.function.arguments"] = json.dumps({"city": CITIES[call_id]})
    return out


def llm(n: int, start: int, inputs: dict[str, Any], output: dict[str, Any]) -> dict[str, Any]:
    attrs = {KIND: "LLM", "llm.model_name": "gpt-4o-mini", **inputs, **output}
    return span(TRACE, sid(n), "ChatOpenAI", parent_span_id=sid(1), start=start, attributes=attrs)


def tool_run(n: int, start: int, call_id: str) -> dict[str, Any]:
    """A TOOL span as openinference-langchain writes it: the serialized LangChain ToolMessage."""
    content = RESULTS[call_id]
    output = {"type": "tool", "data": {"content": content, "type": "tool", "name": "get_weather",
                                       "tool_call_id": call_id, "status": "success"}}  # fmt: skip
    attrs = {KIND: "TOOL", "tool.name": "get_weather", "input.value": CITIES[call_id],
             "output.value": json.dumps(output)}  # fmt: skip
    return span(TRACE, sid(n), "get_weather", parent_span_id=sid(1), start=start, attributes=attrs)


def spans_file(tmp_path: Path, ran: tuple[str, str], replayed: tuple[str, str]) -> Path:
    """One LLM call asks for both, the tools run in ``ran``, the next call replays ``replayed``."""
    history = {**message(0, "system", content=SYSTEM), **message(1, "user", content=ASK)}
    first = llm(2, 2_000, history, calls("llm.output_messages.0.message"))
    runs = [tool_run(3 + i, 3_000 + i, call_id) for i, call_id in enumerate(ran)]
    results: dict[str, Any] = {}
    for i, call_id in enumerate(replayed):
        results |= message(3 + i, "tool", content=RESULTS[call_id], tool_call_id=call_id)
    answer = {"llm.output_messages.0.message.role": "assistant",
              "llm.output_messages.0.message.content": "Madrid is warmer."}  # fmt: skip
    second = llm(5, 5_000, {**history, **calls("llm.input_messages.2.message"), **results}, answer)
    root = span(TRACE, sid(1), "LangGraph", start=1_000, end=9_000, attributes={KIND: "CHAIN"})
    path = tmp_path / "langgraph.otlp.jsonl"
    path.write_bytes(orjson.dumps(export_request([root, first, *runs, second])) + b"\n")
    return path


def tool_results(path: Path) -> list[tuple[str | None, str, tuple[str, ...]]]:
    (trace,) = list(ingest(path))
    assert [m.role for m in trace.messages] == [
        "system", "user", "assistant", "tool", "tool", "assistant",
    ]  # fmt: skip
    assert isinstance(trace.messages[2], AssistantMessage)
    return [
        (m.tool_call_id, m.content, m.span_ids)
        for m in trace.messages
        if isinstance(m, ToolMessage)
    ]


def test_parallel_results_follow_the_order_the_next_input_replays(tmp_path: Path) -> None:
    # Madrid's tool ran first, the model was sent Oslo's result first
    path = spans_file(tmp_path, ran=("call_m1", "call_o1"), replayed=("call_o1", "call_m1"))
    assert tool_results(path) == [
        ("call_o1", "Oslo: 3C snow", (sid(4), sid(5))),
        ("call_m1", "Madrid: 25C clear", (sid(3), sid(5))),
    ]


def test_parallel_results_replayed_as_they_ran_keep_that_order(tmp_path: Path) -> None:
    path = spans_file(tmp_path, ran=("call_o1", "call_m1"), replayed=("call_o1", "call_m1"))
    assert tool_results(path) == [
        ("call_o1", "Oslo: 3C snow", (sid(3), sid(5))),
        ("call_m1", "Madrid: 25C clear", (sid(4), sid(5))),
    ]


def test_the_replayed_order_wins_the_other_way_round_too(tmp_path: Path) -> None:
    path = spans_file(tmp_path, ran=("call_o1", "call_m1"), replayed=("call_m1", "call_o1"))
    assert tool_results(path) == [
        ("call_m1", "Madrid: 25C clear", (sid(4), sid(5))),
        ("call_o1", "Oslo: 3C snow", (sid(3), sid(5))),
    ]
