"""What the fake model server answers: reply kinds and fault kinds.

A rule of :class:`~agent_eval.testing._fake_server.FakeModelServer` answers a matching request
with one of these frozen dataclasses, or with a callable that builds one from the request:

* content replies: :class:`Text`, :class:`ToolCalls` and :class:`Structured` (an object
  delivered in whatever structured-output mode the request used, see :mod:`.chat_request`);
* faults: :class:`HttpError` (429 with ``Retry-After``, 500, 503...), :class:`Hang` (sleep past
  the client's timeout), :class:`MalformedJSON` (a truncated 200 body) and
  :class:`InvalidVerdict` (a structured reply whose verdict field is ill-typed or missing, the
  shapes in :data:`INVALID_VERDICTS`).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, TypeAlias

from pydantic import BaseModel, JsonValue

if TYPE_CHECKING:
    from agent_eval.testing._recording import RecordedRequest

__all__ = [
    "DEFAULT_FAULTS",
    "INVALID_VERDICTS",
    "NO_USAGE",
    "ContentReply",
    "Fault",
    "Hang",
    "HttpError",
    "InvalidVerdict",
    "MalformedJSON",
    "Reply",
    "ReplySpec",
    "Structured",
    "Text",
    "ToolCall",
    "ToolCalls",
    "Usage",
]


@dataclass(frozen=True, slots=True)
class Usage:
    """Token usage reported in a reply's ``usage`` object (counts of tokens).

    ``reported=False`` (see :data:`NO_USAGE`) sends a reply with no ``usage`` object at all, as
    some local servers do.
    """

    prompt_tokens: int
    completion_tokens: int
    reported: bool = True


NO_USAGE = Usage(0, 0, reported=False)
"""A reply without a ``usage`` object."""


@dataclass(frozen=True, slots=True)
class Text:
    """A plain assistant message with ``content``.

    Attributes:
        content: The assistant text.
        usage: Reported usage; estimated with ``o200k_base`` from the texts when ``None``.
        reasoning_content: Sent as the message's ``reasoning_content`` (as DeepSeek, vLLM and
            llama.cpp server do for reasoning models) when not ``None``.

    """

    content: str
    usage: Usage | None = None
    reasoning_content: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call of a :class:`ToolCalls` reply.

    Attributes:
        name: The function name.
        arguments: The arguments object (sent JSON-encoded); a ``str`` is sent verbatim, which
            lets a script send arguments that are not valid JSON.
        id: The call id; ``call_NNNNNN`` from the server's counter when ``None``.

    """

    name: str
    arguments: JsonValue | str = dataclasses.field(default_factory=dict)
    id: str | None = None


@dataclass(frozen=True, slots=True)
class ToolCalls:
    """An assistant message that calls tools (``finish_reason: "tool_calls"``).

    Attributes:
        calls: The tool calls, in order (several make parallel tool calls).
        content: Optional text sent alongside the calls.
        usage: Reported usage; estimated when ``None``.

    """

    calls: tuple[ToolCall, ...]
    content: str | None = None
    usage: Usage | None = None


@dataclass(frozen=True, slots=True)
class Structured:
    """A structured object, delivered in the request's structured-output mode.

    Tools mode: one tool call named like the request's function, with the object as JSON
    arguments. ``json_schema``, ``json_object`` or no mode: the object as JSON ``content``.

    Attributes:
        data: The object; a pydantic model is dumped in JSON mode.
        usage: Reported usage; estimated when ``None``.

    """

    data: dict[str, Any] | BaseModel
    usage: Usage | None = None

    def as_dict(self) -> dict[str, Any]:
        """The object as a JSON-ready dict."""
        if isinstance(self.data, BaseModel):
            return self.data.model_dump(mode="json")
        return dict(self.data)


@dataclass(frozen=True, slots=True)
class HttpError:
    """An HTTP error reply with an OpenAI-style ``{"error": {...}}`` body.

    Attributes:
        status: The HTTP status, e.g. 429, 500, 503.
        retry_after: Seconds for the ``Retry-After`` header (429/503); omitted when ``None``.
        message: The error message in the body.
        code: The body's ``error.code`` (e.g. ``"context_length_exceeded"``); the status as a
            string when ``None``.

    """

    status: int
    retry_after: float | None = None
    message: str = "fake server: injected error"
    code: str | None = None


@dataclass(frozen=True, slots=True)
class Hang:
    """Hold the request for ``seconds`` (past the client's timeout), then answer.

    Attributes:
        seconds: How long to wait before answering.
        then: What to answer after the wait; a 504 error when ``None``.

    """

    seconds: float
    then: ContentReply | HttpError | None = None


@dataclass(frozen=True, slots=True)
class MalformedJSON:
    """A ``200 application/json`` reply whose body is truncated, invalid JSON."""

    body: bytes = b'{"id": "chatcmpl-broken", "object": "chat.completion", "choices": [{"mess'


@dataclass(frozen=True, slots=True)
class InvalidVerdict:
    """A structured reply whose ``field`` holds an ill-typed value, or is missing.

    Used as a rule's reply it sends ``base`` with the bad field; injected as a random fault it
    spoils the matched rule's :class:`Structured` reply (it only applies to such replies).

    Attributes:
        value: The bad value (``1``, ``"yes"``, ``True``, ``"1.0"`` ...); ignored when ``missing``.
        missing: Leave the field out instead.
        field: The field to spoil.
        base: The object sent when used directly as a rule's reply.

    """

    value: JsonValue = 1
    missing: bool = False
    field: str = "verdict"
    base: dict[str, Any] = dataclasses.field(
        default_factory=lambda: {"reason": "fake server: scripted invalid verdict"}
    )

    def spoil(self, data: dict[str, Any]) -> dict[str, Any]:
        """A copy of ``data`` with the field set to the bad value or removed."""
        spoiled = dict(data)
        if self.missing:
            spoiled.pop(self.field, None)
        else:
            spoiled[self.field] = self.value
        return spoiled


INVALID_VERDICTS: tuple[InvalidVerdict, ...] = (
    InvalidVerdict(1),
    InvalidVerdict("yes"),
    InvalidVerdict(True),
    InvalidVerdict("1.0"),
    InvalidVerdict(missing=True),
)
"""The invalid verdict shapes a binary ``Literal["0", "1"]`` parser must reject."""

ContentReply: TypeAlias = Text | ToolCalls | Structured
Fault: TypeAlias = HttpError | Hang | MalformedJSON | InvalidVerdict
Reply: TypeAlias = ContentReply | Fault
ReplySpec: TypeAlias = "Reply | Callable[[RecordedRequest], Reply]"
"""A reply, or a callable building one from the recorded request (dynamic scripts)."""

DEFAULT_FAULTS: tuple[Fault, ...] = (
    HttpError(429, retry_after=0.05, message="fake server: rate limited"),
    HttpError(500),
    HttpError(503, retry_after=0.05),
    MalformedJSON(),
    *INVALID_VERDICTS,
)
"""Faults drawn by ``fault_rate`` when none are given (no :class:`Hang`: add one explicitly)."""
