"""Server-sent-event streaming of a fake completion (``"stream": true`` requests).

The chunk shapes follow the OpenAI Chat Completions streaming reference: ``chat.completion.chunk``
objects whose single choice carries a ``delta`` (the ``role`` first, then ``content`` pieces or
``tool_calls`` deltas with ``index``, the ``id``/``name`` once and the ``arguments`` in pieces),
a last chunk with ``finish_reason``, then, when ``stream_options.include_usage`` is set, a chunk
with empty ``choices`` and the ``usage``; the stream ends with ``data: [DONE]``.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import orjson

__all__ = ["sse_events"]

_PIECE = 16
"""Characters of content or arguments per chunk."""


def sse_events(completion: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    """The SSE byte frames that stream ``completion`` (a ``chat.completion`` body)."""
    choice = completion["choices"][0]
    message = choice["message"]
    deltas: list[dict[str, Any]] = [{"role": "assistant", "content": ""}]
    deltas += [{"content": piece} for piece in _pieces(message.get("content") or "")]
    for index, call in enumerate(message.get("tool_calls") or ()):
        deltas += _tool_call_deltas(index, call)
    for delta in deltas:
        yield _frame(_chunk(completion, [{"index": 0, "delta": delta, "finish_reason": None}]))
    last = {"index": 0, "delta": {}, "finish_reason": choice["finish_reason"]}
    yield _frame(_chunk(completion, [last]))
    if include_usage:
        yield _frame({**_chunk(completion, []), "usage": completion["usage"]})
    yield b"data: [DONE]\n\n"


def _tool_call_deltas(index: int, call: dict[str, Any]) -> list[dict[str, Any]]:
    function = call["function"]
    head = {"index": index, "id": call["id"], "type": "function",
            "function": {"name": function["name"], "arguments": ""}}  # fmt: skip
    rest = [
        {"index": index, "function": {"arguments": piece}}
        for piece in _pieces(function["arguments"])
    ]
    return [{"tool_calls": [delta]} for delta in [head, *rest]]


def _chunk(completion: dict[str, Any], choices: list[dict[str, Any]]) -> dict[str, Any]:
    return {
        "id": completion["id"],
        "object": "chat.completion.chunk",
        "created": completion["created"],
        "model": completion["model"],
        "choices": choices,
    }


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)]


def _frame(data: dict[str, Any]) -> bytes:
    return b"data: " + orjson.dumps(data) + b"\n\n"
