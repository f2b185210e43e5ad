"""OpenAI chat-completions response bodies for the fake model server's content replies.

The shapes follow the OpenAI Chat Completions API reference (``chat.completion`` object): one
choice, an assistant ``message`` with ``content`` and/or ``tool_calls`` (each
``{"id", "type": "function", "function": {"name", "arguments"}}`` with the arguments as a JSON
string), ``finish_reason`` ``"stop"`` or ``"tool_calls"``, and ``usage`` token counts.
"""

from __future__ import annotations

import itertools
import threading
import time
from typing import Any

import orjson

from agent_eval._tokens import count_tokens
from agent_eval.testing._recording import RecordedRequest
from agent_eval.testing._replies import ContentReply, Structured, Text, ToolCall, ToolCalls, Usage

__all__ = ["CompletionBuilder", "model_list"]


class CompletionBuilder:
    """Builds ``chat.completion`` bodies with sequential, reproducible ids.

    Completion ids are ``chatcmpl-NNNNNN`` and generated tool-call ids ``call_NNNNNN``, counted
    from 1 per server, so a sequential script yields the same ids on every run.
    """

    def __init__(self) -> None:
        self._completions = itertools.count(1)
        self._calls = itertools.count(1)
        self._lock = threading.Lock()

    def build(self, reply: ContentReply, request: RecordedRequest) -> dict[str, Any]:
        """The response body answering ``request`` with ``reply``."""
        message = self._message(reply, request)
        with self._lock:
            completion_id = f"chatcmpl-{next(self._completions):06d}"
        body = {
            "id": completion_id,
            "object": "chat.completion",
            "created": int(time.time()),
            "model": request.model or "fake-model",
            "choices": [
                {
                    "index": 0,
                    "message": message,
                    "logprobs": None,
                    "finish_reason": "tool_calls" if message.get("tool_calls") else "stop",
                }
            ],
            "usage": _usage(reply.usage, request, message),
        }
        if reply.usage is not None and not reply.usage.reported:
            del body["usage"]
        return body

    def _message(self, reply: ContentReply, request: RecordedRequest) -> dict[str, Any]:
        if isinstance(reply, Text):
            message: dict[str, Any] = {"role": "assistant", "content": reply.content}
            if reply.reasoning_content is not None:
                message["reasoning_content"] = reply.reasoning_content
            return message
        if isinstance(reply, ToolCalls):
            calls = [self._tool_call(call) for call in reply.calls]
            return {"role": "assistant", "content": reply.content, "tool_calls": calls}
        return self._structured(reply, request)

    def _structured(self, reply: Structured, request: RecordedRequest) -> dict[str, Any]:
        data = reply.as_dict()
        if request.mode == "tools" and request.schema_name:
            call = self._tool_call(ToolCall(name=request.schema_name, arguments=data))
            return {"role": "assistant", "content": None, "tool_calls": [call]}
        return {"role": "assistant", "content": orjson.dumps(data).decode()}

    def _tool_call(self, call: ToolCall) -> dict[str, Any]:
        if call.id is None:
            with self._lock:
                call_id = f"call_{next(self._calls):06d}"
        else:
            call_id = call.id
        arguments = call.arguments
        encoded = arguments if isinstance(arguments, str) else orjson.dumps(arguments).decode()
        return {
            "id": call_id,
            "type": "function",
            "function": {"name": call.name, "arguments": encoded},
        }


def _usage(
    usage: Usage | None, request: RecordedRequest, message: dict[str, Any]
) -> dict[str, int]:
    if usage is None:
        completion = RecordedRequest("", "", {"messages": [message]}, 0.0).text
        usage = Usage(count_tokens(request.text), count_tokens(completion))
    return {
        "prompt_tokens": usage.prompt_tokens,
        "completion_tokens": usage.completion_tokens,
        "total_tokens": usage.prompt_tokens + usage.completion_tokens,
    }


def model_list(models: tuple[str, ...]) -> dict[str, Any]:
    """The ``GET /v1/models`` body listing ``models``."""
    data = [{"id": m, "object": "model", "created": 0, "owned_by": "agent-eval"} for m in models]
    return {"object": "list", "data": data}
