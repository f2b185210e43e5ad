"""Traces folded into a later one keep what they saw of its messages (trial7 #15).

The OpenAI Agents SDK with openinference, ``Runner.run_sync`` once per user turn: each turn is a
trace of its own (an AGENT span ``weather-agent`` above the LLM span), with no conversation id,
and each turn's LLM input replays the turns before. The earlier traces fold into the last one;
their assistant messages must keep the agent that spoke them and every message the span ids it
was seen on (the LLM span whose output it was first). Spans are written as the Collector's OTLP
JSON lines (:mod:`agent_eval.testing._otlp`) and read through ``ingest``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import orjson

from agent_eval._trace import AssistantMessage
from agent_eval.ingest import ingest
from agent_eval.metrics._units import answer_units
from agent_eval.testing._otlp import export_request, span

KIND = "openinference.span.kind"
AGENT = "weather-agent"
SYSTEM = "You answer weather questions."
TURNS = [("Weather in Paris?", "Sunny in Paris."), ("And Rome?", "Cloudy in Rome."),
         ("And Oslo?", "Snow in Oslo.")]  # fmt: skip


def trace_id(turn: int) -> str:
    return f"{turn + 1:032x}"


def sid(turn: int, n: int) -> str:
    return f"{turn + 1:08x}{n:08x}"


def llm_attrs(turn: int) -> dict[str, Any]:
    history: list[tuple[str, str]] = [("system", SYSTEM)]
    for ask, answer in TURNS[:turn]:
        history += [("user", ask), ("assistant", answer)]
    history.append(("user", TURNS[turn][0]))
    attrs: dict[str, Any] = {KIND: "LLM", "llm.model_name": "gpt-4o-mini",
                             "llm.output_messages.0.message.role": "assistant",
                             "llm.output_messages.0.message.content": TURNS[turn][1]}  # fmt: skip
    for i, (role, content) in enumerate(history):
        attrs[f"llm.input_messages.{i}.message.role"] = role
        attrs[f"llm.input_messages.{i}.message.content"] = content
    return attrs


def turn_spans(turn: int) -> list[dict[str, Any]]:
    """One ``Runner.run_sync``: workflow AGENT span > agent's AGENT span > LLM span."""
    t, start = trace_id(turn), 1_000_000 * (turn + 1)
    return [
        span(t, sid(turn, 1), "weather chat", start=start, end=start + 900,
             attributes={KIND: "AGENT"}),
        span(t, sid(turn, 2), AGENT, parent_span_id=sid(turn, 1), start=start + 1, end=start + 800,
             attributes={KIND: "AGENT", "agent.name": AGENT}),
        span(t, sid(turn, 3), "response", parent_span_id=sid(turn, 2), start=start + 2,
             end=start + 700, attributes=llm_attrs(turn)),
    ]  # fmt: skip


def test_folded_turns_keep_their_agent_and_span_ids(tmp_path: Path) -> None:
    path = tmp_path / "oa_agents.otlp.jsonl"
    path.write_bytes(b"".join(orjson.dumps(export_request(turn_spans(turn))) + b"\n"
                              for turn in range(len(TURNS))))  # fmt: skip
    (trace,) = list(ingest(path))
    assert trace.trace_ids == tuple(trace_id(turn) for turn in range(3))
    assert any("2 earlier trace(s) folded in" in note for note in trace.notes)
    llm = [sid(turn, 3) for turn in range(3)]
    assert [(m.role, m.content, getattr(m, "agent_name", None), m.span_ids)
            for m in trace.messages] == [
        ("system", SYSTEM, None, tuple(llm)),
        ("user", "Weather in Paris?", None, tuple(llm)),
        ("assistant", "Sunny in Paris.", AGENT, tuple(llm)),
        ("user", "And Rome?", None, tuple(llm[1:])),
        ("assistant", "Cloudy in Rome.", AGENT, tuple(llm[1:])),
        ("user", "And Oslo?", None, (llm[2],)),
        ("assistant", "Snow in Oslo.", AGENT, (llm[2],)),
    ]  # fmt: skip
    assert all(isinstance(m, AssistantMessage) for m in trace.messages[2::2])
    # each turn's answer is evaluated on the LLM span that produced it
    assert [u.span_id for u in answer_units(trace)] == llm
