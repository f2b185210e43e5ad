"""OpenAI Responses API bodies and event streams for the fake model server (``POST /v1/responses``).

The fake server builds every reply as a ``chat.completion`` first (:mod:`.completions`); this
module re-shapes that completion into a ``response`` object as the OpenAI Responses API
reference gives it: ``output`` is a list of items, an assistant ``message`` item whose
``content`` holds one ``output_text`` part, and one ``function_call`` item per tool call
(``call_id``, ``name``, ``arguments`` as a JSON string); ``usage`` counts ``input_tokens`` and
``output_tokens``.

Streamed (``"stream": true``) the same response is sent as server-sent events, each with an
``event:`` line naming its ``type`` and a ``sequence_number``: ``response.created``,
``response.in_progress``, per item ``response.output_item.added``, then for a message
``response.content_part.added`` / ``response.output_text.delta`` (pieces) /
``response.output_text.done`` / ``response.content_part.done``, for a function call
``response.function_call_arguments.delta`` (pieces) / ``response.function_call_arguments.done``,
then ``response.output_item.done``; finally ``response.completed``. There is no ``[DONE]``
sentinel in this API.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from typing import Any

import orjson

__all__ = ["request_messages", "response_body", "response_events"]

_PIECE = 16
"""Characters of text or arguments per delta event."""


def request_messages(body: dict[str, Any]) -> list[dict[str, Any]]:
    """A Responses API request's ``instructions`` and ``input`` as chat-style messages.

    ``input`` is a string (one user message) or a list of items; items with a ``role`` become
    messages, ``function_call`` items assistant tool calls and ``function_call_output`` items
    tool messages, so rules that match on message text work for both APIs.
    """
    messages: list[dict[str, Any]] = []
    if isinstance(body.get("instructions"), str):
        messages.append({"role": "system", "content": body["instructions"]})
    items = body.get("input")
    if isinstance(items, str):
        return [*messages, {"role": "user", "content": items}]
    for item in items if isinstance(items, list) else ():
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message" and isinstance(item.get("role"), str):
            messages.append({"role": item["role"], "content": item.get("content")})
        elif kind == "function_call":
            function = {"name": item.get("name"), "arguments": item.get("arguments")}
            call = {"id": item.get("call_id"), "type": "function", "function": function}
            messages.append({"role": "assistant", "content": None, "tool_calls": [call]})
        elif kind == "function_call_output":
            output = item.get("output")
            text = output if isinstance(output, str) else str(output)
            messages.append({"role": "tool", "tool_call_id": item.get("call_id"), "content": text})
    return messages


def response_body(
    completion: dict[str, Any], request: dict[str, Any], counter: Iterator[int]
) -> dict[str, Any]:
    """The ``response`` object carrying ``completion``'s message (ids drawn from ``counter``).

    Like the real API it echoes the request's ``instructions``, ``tools``, ``tool_choice`` and
    ``metadata`` (instrumentations read the system instructions from the response).
    """
    number = next(counter)
    message = completion["choices"][0]["message"]
    output: list[dict[str, Any]] = []
    if message.get("content"):
        text = {"type": "output_text", "text": message["content"], "annotations": []}
        output.append({"type": "message", "id": f"msg_{number:06d}", "status": "completed",
                       "role": "assistant", "content": [text]})  # fmt: skip
    for index, call in enumerate(message.get("tool_calls") or ()):
        function = call["function"]
        output.append({"type": "function_call", "id": f"fc_{number:06d}_{index}",
                       "call_id": call["id"], "name": function["name"],
                       "arguments": function["arguments"], "status": "completed"})  # fmt: skip
    usage = completion["usage"]
    return {
        "id": f"resp_{number:06d}",
        "object": "response",
        "created_at": completion["created"],
        "status": "completed",
        "model": completion["model"],
        "output": output,
        "parallel_tool_calls": request.get("parallel_tool_calls", True),
        "tool_choice": request.get("tool_choice", "auto"),
        "tools": request.get("tools") or [],
        "error": None,
        "incomplete_details": None,
        "instructions": request.get("instructions"),
        "metadata": request.get("metadata") or {},
        "text": {"format": {"type": "text"}},
        "truncation": "disabled",
        "usage": {
            "input_tokens": usage["prompt_tokens"],
            "input_tokens_details": {"cached_tokens": 0},
            "output_tokens": usage["completion_tokens"],
            "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": usage["total_tokens"],
        },
    }


def response_events(response: dict[str, Any]) -> Iterator[bytes]:
    """The SSE byte frames that stream ``response`` (a :func:`response_body` object)."""
    sequence = itertools.count()

    def frame(kind: str, **data: Any) -> bytes:
        payload = {"type": kind, "sequence_number": next(sequence), **data}
        return b"event: " + kind.encode() + b"\ndata: " + orjson.dumps(payload) + b"\n\n"

    pending = {**response, "status": "in_progress", "output": [], "usage": None}
    yield frame("response.created", response=pending)
    yield frame("response.in_progress", response=pending)
    for index, item in enumerate(response["output"]):
        yield from _item_events(frame, index, item)
    yield frame("response.completed", response=response)


def _item_events(frame: Any, index: int, item: dict[str, Any]) -> Iterator[bytes]:
    where = {"output_index": index, "item_id": item["id"]}
    if item["type"] == "message":
        yield frame("response.output_item.added", output_index=index,
                    item={**item, "status": "in_progress", "content": []})  # fmt: skip
        part = item["content"][0]
        yield frame("response.content_part.added", **where, content_index=0,
                    part={**part, "text": ""})  # fmt: skip
        for piece in _pieces(part["text"]):
            yield frame("response.output_text.delta", **where, content_index=0, delta=piece,
                        logprobs=[])  # fmt: skip
        yield frame("response.output_text.done", **where, content_index=0, text=part["text"],
                    logprobs=[])  # fmt: skip
        yield frame("response.content_part.done", **where, content_index=0, part=part)
    else:
        yield frame("response.output_item.added", output_index=index,
                    item={**item, "status": "in_progress", "arguments": ""})  # fmt: skip
        for piece in _pieces(item["arguments"]):
            yield frame("response.function_call_arguments.delta", **where, delta=piece)
        yield frame("response.function_call_arguments.done", **where, name=item["name"],
                    arguments=item["arguments"])  # fmt: skip
    yield frame("response.output_item.done", output_index=index, item=item)


def _pieces(text: str) -> list[str]:
    return [text[i : i + _PIECE] for i in range(0, len(text), _PIECE)] or [""]
