"""Collector-like OTLP/JSON Lines traffic for the streaming tests: interleaved, out of order.

A busy Collector writes spans as they *end* (children before their parents), batches spans of
many conversations into one line, and a conversation's turns may be traces written far apart or
in another file. :func:`write_traffic` writes two files (deterministic, no randomness) that hold
every case the streaming assembler must get right:

- multi-turn conversations, one trace per turn, interleaved 7 spans to a line, children first;
- a conversation whose second turn arrives near the end of the file (an id that recurs late);
- a conversation split over the two files;
- bare client calls (no conversation id, one trace each) that replay each other (folded);
- a chat span whose messages arrive as GenAI event log records, lines later;
- a duplicate span (same trace and span id) lines apart, and an orphan span.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agent_eval.testing._otlp import export_request, log_record, span

T0 = 1_700_000_000_000_000_000
SECOND = 10**9
PER_LINE = 7


def _text(seed: int, words: int = 12) -> str:
    vocab = [
        "refund",
        "seat",
        "paris",
        "flight",
        "booking",
        "aisle",
        "customer",
        "agent",
        "asked",
        "rebooked",
        "late",
        "gate",
    ]
    return " ".join(vocab[(seed * 5 + i) % len(vocab)] for i in range(words))


def _turn(conv: str, index: int, turn: int, start: int, history: list[dict[str, Any]]) -> list[Any]:
    """One turn as one trace: spans in end order (tool, chat, root)."""
    trace_id = f"{index + 1:08x}{turn + 1:08x}{'0' * 16}"
    root = f"{index + 1:08x}{turn + 1:08x}"
    chat = f"{index + 1:08x}{turn + 1:04x}0001"
    tool = f"{index + 1:08x}{turn + 1:04x}0002"
    call_id = f"call_{index}_{turn}"
    history.append({"role": "user", "parts": [{"type": "text", "content": _text(index + turn)}]})
    call = {
        "role": "assistant",
        "parts": [{"type": "tool_call", "id": call_id, "name": "lookup", "arguments": {"n": turn}}],
    }
    spans = [
        span(
            trace_id,
            tool,
            "execute_tool lookup",
            parent_span_id=root,
            start=start + 3 * SECOND // 10,
            attributes={
                "gen_ai.operation.name": "execute_tool",
                "gen_ai.tool.name": "lookup",
                "gen_ai.tool.call.id": call_id,
                "gen_ai.tool.call.result": _text(turn, 5),
            },
        ),
        span(
            trace_id,
            chat,
            "chat gpt-4o",
            kind=3,
            parent_span_id=root,
            start=start + SECOND // 10,
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "gpt-4o",
                "gen_ai.usage.input_tokens": 50 + turn,
                "gen_ai.usage.output_tokens": 9,
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([call]),
            },
        ),
        span(
            trace_id,
            root,
            "invoke_agent support",
            start=start,
            end=start + SECOND,
            attributes={
                "gen_ai.operation.name": "invoke_agent",
                "gen_ai.agent.name": "support",
                "gen_ai.conversation.id": conv,
            },
        ),
    ]
    history += [
        call,
        {
            "role": "tool",
            "parts": [{"type": "tool_call_response", "id": call_id, "response": _text(turn, 5)}],
        },
    ]
    return spans


def _bare_calls() -> list[Any]:
    """Three bare client calls, one trace each, each replaying the one before."""
    out, history = [], [{"role": "user", "parts": [{"type": "text", "content": "hello there"}]}]
    for n in range(3):
        answer = {"role": "assistant", "parts": [{"type": "text", "content": _text(n, 6)}]}
        out.append(
            span(
                f"{0xBA5E0000 + n:032x}",
                f"{0xBA5E0000 + n:016x}",
                "chat gpt-4o-mini",
                kind=3,
                start=T0 + (40 + n) * SECOND,
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "gpt-4o-mini",
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([answer]),
                },
            )
        )
        history = [
            *history,
            answer,
            {"role": "user", "parts": [{"type": "text", "content": f"and then {n}?"}]},
        ]
    return out


def _event_call() -> tuple[Any, list[Any]]:
    """A v1.28-style chat span whose messages are GenAI event log records."""
    trace_id, span_id = f"{0xE7E7:032x}", f"{0xE7E7:016x}"
    chat = span(
        trace_id,
        span_id,
        "chat gpt-4o",
        kind=3,
        start=T0 + 50 * SECOND,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.conversation.id": "conv-events",
        },
    )
    logs = [
        log_record(
            "gen_ai.user.message",
            {"content": "where is my bag"},
            trace_id=trace_id,
            span_id=span_id,
            time=T0 + 50 * SECOND,
        ),
        log_record(
            "gen_ai.choice",
            {"index": 0, "finish_reason": "stop", "message": {"content": "at the gate"}},
            trace_id=trace_id,
            span_id=span_id,
            time=T0 + 51 * SECOND,
        ),
    ]
    return chat, logs


def write_traffic(folder: Path, conversations: int = 12, turns: int = 3) -> list[Path]:
    """Write ``first.otlp.jsonl`` and ``second.otlp.jsonl`` into ``folder``; return them."""
    histories: dict[int, list[dict[str, Any]]] = {}
    turns_of: list[list[Any]] = []
    for turn in range(turns):  # conversations interleaved: every one's turn n before turn n + 1
        for index in range(conversations):
            history = histories.setdefault(
                index, [{"role": "system", "parts": [{"type": "text", "content": _text(index)}]}]
            )
            start = T0 + index * SECOND // 3 + turn * 5 * SECOND
            turns_of.append(_turn(f"conv-{index}", index, turn, start, history))
    late_history: list[dict[str, Any]] = []
    late_first = _turn("conv-late", 900, 0, T0 + 2 * SECOND, late_history)
    late_second = _turn("conv-late", 900, 1, T0 + 60 * SECOND, late_history)
    split_history: list[dict[str, Any]] = []
    split_first = _turn("conv-split", 901, 0, T0 + 3 * SECOND, split_history)
    split_second = _turn("conv-split", 901, 1, T0 + 61 * SECOND, split_history)
    chat, logs = _event_call()
    orphan = span(
        f"{0x0F0F:032x}",
        f"{0x0F0F:016x}",
        "chat gpt-4o",
        kind=3,
        parent_span_id=f"{0xDEAD:016x}",
        start=T0 + 55 * SECOND,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.conversation.id": "conv-orphan",
            "gen_ai.input.messages": json.dumps(
                [{"role": "user", "parts": [{"type": "text", "content": "anyone?"}]}]
            ),
        },
    )
    stream: list[Any] = [*late_first, *split_first]
    for spans in turns_of:
        stream += spans
    stream[20:20] = _bare_calls()
    stream[30:30] = [chat]
    stream.append(turns_of[0][1])  # a duplicate of an early chat span, many lines later
    stream.append(orphan)
    stream += late_second
    lines = [stream[i : i + PER_LINE] for i in range(0, len(stream), PER_LINE)]
    first, second = folder / "first.otlp.jsonl", folder / "second.otlp.jsonl"
    with first.open("wb") as out:
        for n, batch in enumerate(lines):
            out.write(orjson.dumps(export_request(batch)) + b"\n")
            if n == len(lines) // 2:  # the events come lines after their span
                out.write(orjson.dumps(export_request(logs=logs)) + b"\n")
    with second.open("wb") as out:
        out.write(orjson.dumps(export_request(split_second)) + b"\n")
    return [first, second]
