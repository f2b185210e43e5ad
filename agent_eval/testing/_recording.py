"""Recorded requests of the fake model server, and what they ask for.

A :class:`RecordedRequest` keeps the path, the JSON body and a monotonic arrival time, never a
header: the ``Authorization`` header and any API key are not recorded.

The structured-output mode of a chat-completions request is read the way the ``openai`` judge
(and instructor) send it:

* ``tools``: a ``tool_choice`` naming a function (or exactly one function tool); the schema
  name is that function's name;
* ``json_schema``: ``response_format = {"type": "json_schema", "json_schema": {"name": ...}}``;
* ``json_object``: ``response_format = {"type": "json_object"}``; the schema name is the
  ``title`` of the first JSON schema object in a system message, where JSON mode puts it;
* ``text``: anything else.
"""

from __future__ import annotations

import dataclasses
import json
import threading
from dataclasses import dataclass
from typing import Any, Literal, Protocol, TypeAlias, TypeVar

import orjson

from agent_eval.testing._responses_api import request_messages

__all__ = ["CLIENT_CLOSED", "RecordedRequest", "RequestLog", "StructuredMode", "decode_body"]

CLIENT_CLOSED = 499
"""Status recorded for a request the client abandoned before the reply (nginx's convention)."""

StructuredMode: TypeAlias = Literal["tools", "json_schema", "json_object", "text"]


@dataclass(frozen=True, slots=True)
class RecordedRequest:
    """One request the server received.

    Attributes:
        path: The URL path, e.g. ``"/v1/chat/completions"``.
        method: The HTTP method.
        body: The parsed JSON body (``None`` for GET or a body that is not JSON).
        timestamp: ``time.monotonic()`` seconds at arrival.
        status: The HTTP status answered; 0 while not yet answered, 499 when the client gave up
            first (e.g. timed out during a hang).
        rule: Index of the rule that matched (in ``add_rule`` order), ``None`` when none did.
        fault: ``repr`` of the injected or scripted fault, ``None`` when there was none.

    """

    path: str
    method: str
    body: Any
    timestamp: float
    status: int = 0
    rule: int | None = None
    fault: str | None = None

    @property
    def messages(self) -> list[dict[str, Any]]:
        """The request's ``messages`` (empty when absent).

        A Responses API request (``input``, ``instructions``) gives its items as chat-style
        messages (:func:`~agent_eval.testing._responses_api.request_messages`).
        """
        messages = self.body.get("messages") if isinstance(self.body, dict) else None
        if messages is None and isinstance(self.body, dict) and "input" in self.body:
            messages = request_messages(self.body)
        return [m for m in messages if isinstance(m, dict)] if isinstance(messages, list) else []

    @property
    def text(self) -> str:
        """All message text, joined by newlines (list contents contribute their text parts)."""
        return "\n".join(_message_text(message) for message in self.messages)

    @property
    def model(self) -> str:
        """The requested model name (``""`` when absent)."""
        model = self.body.get("model") if isinstance(self.body, dict) else None
        return model if isinstance(model, str) else ""

    @property
    def mode(self) -> StructuredMode:
        """The structured-output mode the request asks for (see the module docstring)."""
        if self._tool_name() is not None:
            return "tools"
        kind = self._response_format().get("type")
        return kind if kind in ("json_schema", "json_object") else "text"

    @property
    def schema_name(self) -> str | None:
        """The response schema's name in tools or json_schema mode, else ``None``."""
        name = self._tool_name()
        if name is None:
            schema = self._response_format().get("json_schema")
            name = schema.get("name") if isinstance(schema, dict) else None
        if name is None and self.mode == "json_object":
            name = self._system_schema_title()
        return name if isinstance(name, str) else None

    def _system_schema_title(self) -> str | None:
        for message in self.messages:
            content = message.get("content")
            if message.get("role") == "system" and isinstance(content, str) and "{" in content:
                try:
                    schema, _ = json.JSONDecoder().raw_decode(content, content.index("{"))
                except ValueError:
                    continue
                title = schema.get("title") if isinstance(schema, dict) else None
                if isinstance(title, str):
                    return title
        return None

    def _response_format(self) -> dict[str, Any]:
        fmt = self.body.get("response_format") if isinstance(self.body, dict) else None
        return fmt if isinstance(fmt, dict) else {}

    def _tool_name(self) -> str | None:
        body = self.body if isinstance(self.body, dict) else {}
        choice, tools = body.get("tool_choice"), body.get("tools")
        if isinstance(choice, dict):
            function = choice.get("function")
        elif choice == "required" and isinstance(tools, list) and len(tools) == 1:
            function = tools[0].get("function") if isinstance(tools[0], dict) else None
        else:
            return None
        name = function.get("name") if isinstance(function, dict) else None
        return name if isinstance(name, str) else None


def _message_text(message: dict[str, Any]) -> str:
    content = message.get("content")
    if isinstance(content, str):
        texts = [content]
    elif isinstance(content, list):
        texts = [
            p["text"] for p in content if isinstance(p, dict) and isinstance(p.get("text"), str)
        ]
    else:
        texts = []
    for call in message.get("tool_calls") or ():
        function = call.get("function") if isinstance(call, dict) else None
        if isinstance(function, dict):
            texts.append(f"{function.get('name', '')} {function.get('arguments', '')}")
    return "\n".join(texts)


def decode_body(raw: bytes) -> Any:
    """The JSON body, or ``None`` when it is empty or not JSON."""
    try:
        return orjson.loads(raw) if raw else None
    except orjson.JSONDecodeError:
        return None


class _HasStatus(Protocol):
    @property
    def status(self) -> int: ...


_R = TypeVar("_R", bound=_HasStatus)


class RequestLog:
    """The requests one server received, in arrival order, safe across threads.

    A request is recorded on arrival and completed with its status, rule and fault when the
    answer is sent; a completion that arrives after :meth:`clear` is dropped.
    """

    def __init__(self) -> None:
        self._requests: list[RecordedRequest] = []
        self._generation = 0
        self._lock = threading.Lock()

    def record(self, request: RecordedRequest) -> tuple[int, int]:
        """Append ``request``; returns the token :meth:`finish` takes."""
        with self._lock:
            self._requests.append(request)
            return self._generation, len(self._requests) - 1

    def finish(
        self, token: tuple[int, int], rule: int | None, fault: object | None, response: _R
    ) -> _R:
        """Fill in the answer's ``status`` (from ``response``), rule and fault; returns it."""
        generation, index = token
        with self._lock:
            if generation == self._generation and index < len(self._requests):
                self._requests[index] = dataclasses.replace(
                    self._requests[index], status=response.status, rule=rule,
                    fault=None if fault is None else repr(fault),
                )  # fmt: skip
        return response

    def snapshot(self) -> list[RecordedRequest]:
        """A copy of the recorded requests."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        """Forget every request."""
        with self._lock:
            self._requests.clear()
            self._generation += 1
