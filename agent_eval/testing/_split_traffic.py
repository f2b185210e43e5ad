"""Agent traffic split over several Collector files: the inputs a scale-out run must rejoin.

:func:`write_split_traffic` writes ``conversations`` GenAI (semantic conventions v1.37,
``gen_ai.input.messages`` / ``gen_ai.output.messages``) agent conversations as OTLP/JSON Lines
files, spread the way a Collector with several exporters or rotated files spreads them: each
conversation is two traces (one per user turn, joined by ``gen_ai.conversation.id``); each
turn is a chat span calling a tool, the tool's ``execute_tool`` span (no conversation id: it
takes its trace's) and a chat span answering; and span ``k`` of conversation ``c`` goes to file
``(c + k) % files``. So a trace is split over files, a conversation over traces and files, and
tool spans without a conversation id sit in another file than the spans that carry it.

Every user message holds the marker ``#c#`` (the conversation's number), so a scripted judge
can tell the conversations apart. Used by ``bench/scale_ray.py`` and the cluster tests.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson

from agent_eval.testing._otlp import export_request, span

__all__ = ["write_split_traffic"]

BATCH = 256
"""Spans per OTLP/JSON line of each file."""
_WORDS = [
    "the",
    "flight",
    "to",
    "paris",
    "was",
    "rebooked",
    "because",
    "the",
    "customer",
    "asked",
    "for",
    "an",
    "aisle",
]


def _text(seed: int, words: int) -> str:
    return " ".join(_WORDS[(seed * 7 + i) % len(_WORDS)] for i in range(words))


def _parts(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _chat(ids: tuple[str, str], start: int, conv: int, history: list[Any], out: Any) -> Any:
    return span(
        *ids, "chat gpt-4o", kind=3, start=start, end=start + 10**9,
        attributes={
            "gen_ai.operation.name": "chat",
            "gen_ai.request.model": "gpt-4o",
            "gen_ai.conversation.id": f"conv-{conv:05d}",
            "gen_ai.usage.input_tokens": 100,
            "gen_ai.usage.output_tokens": 20,
            "gen_ai.input.messages": json.dumps(history),
            "gen_ai.output.messages": json.dumps([out]),
        },
    )  # fmt: skip


def _turn(conv: int, turn: int, history: list[Any]) -> list[dict[str, Any]]:
    """One user turn as one trace: a chat calling a tool, the tool span, a chat answering."""
    trace_id = f"{conv + 1:024x}{turn + 1:08x}"
    prefix = f"{conv + 1:08x}{turn:04x}"
    t0 = 1_700_000_000_000_000_000 + conv * 10**12 + turn * 10**10
    history.append(_parts("user", f"#{conv}# {_text(conv + turn, 12)}"))
    call_id = f"call_{conv}_{turn}"
    arguments = {"booking": conv, "turn": turn}
    call_part = {"type": "tool_call", "id": call_id, "name": "lookup", "arguments": arguments}
    call = {"role": "assistant", "parts": [call_part]}
    first = _chat((trace_id, prefix + "0001"), t0, conv, list(history), call)
    tool_attributes = {
        "gen_ai.operation.name": "execute_tool",
        "gen_ai.tool.name": "lookup",
        "gen_ai.tool.call.id": call_id,
    }
    tool = span(trace_id, prefix + "0002", "execute_tool lookup", start=t0 + 2 * 10**9,
                end=t0 + 3 * 10**9, attributes=tool_attributes)  # fmt: skip
    response = {"type": "tool_call_response", "id": call_id, "response": _text(conv + turn, 10)}
    history += [call, {"role": "tool", "parts": [response]}]
    answer = _parts("assistant", _text(conv * 3 + turn, 14))
    last = _chat((trace_id, prefix + "0003"), t0 + 4 * 10**9, conv, list(history), answer)
    history.append(answer)
    return [first, tool, last]


def write_split_traffic(folder: Path, conversations: int, files: int) -> list[Path]:
    """Write the traffic (see the module docstring) as ``files`` OTLP/JSON Lines files.

    Returns:
        The files, ``part-000.otlp.jsonl``..., in order.

    """
    folder.mkdir(parents=True, exist_ok=True)
    spread: list[list[dict[str, Any]]] = [[] for _ in range(files)]
    for conv in range(conversations):
        history: list[Any] = [_parts("system", _text(conv, 10))]
        spans = _turn(conv, 0, history) + _turn(conv, 1, history)
        for k, item in enumerate(spans):
            spread[(conv + k) % files].append(item)
    paths = []
    for index, spans in enumerate(spread):
        path = folder / f"part-{index:03d}.otlp.jsonl"
        with path.open("wb") as handle:
            for i in range(0, len(spans), BATCH):
                handle.write(orjson.dumps(export_request(spans[i : i + BATCH])) + b"\n")
        paths.append(path)
    return paths
