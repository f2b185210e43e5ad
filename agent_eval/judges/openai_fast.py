"""The first attempt of an ``openai`` judge call, without per-call schema work.

instructor builds the structured-output part of a request (the tool definition, the
``response_format``, the JSON-mode system instruction) from the response model on every call,
and the openai client then walks that schema again to transform it. Both are deterministic per
response model and mode, so :func:`structured_request` asks instructor's own request handler
once per (model, mode) and keeps the result, pre-serialized: every first attempt sends the
same request instructor would, as bytes, through the openai client's low-level ``post`` (its
retries, backoff and ``Retry-After`` handling unchanged).

The reply is validated with the response model (pydantic, ``strict``, as instructor does). Any
reply this fast check does not accept (a validation failure, no tool call, a refusal, a
truncated completion) is handed to instructor's own response parser and, when that fails too,
to instructor's re-ask flow (:func:`continue_with_reasks`), so re-asks stay instructor's.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import instructor
import orjson
from instructor.v2.core.messages import merge_consecutive_messages
from instructor.v2.core.providers import Provider
from instructor.v2.core.registry import ModeHandlers, mode_registry
from instructor.v2.core.response_model import prepare_response_model
from instructor.v2.core.retry import _RETRYABLE_PARSE_ERRORS, retry_async_v2
from openai.types.chat import ChatCompletion
from pydantic import BaseModel, ValidationError

__all__ = [
    "RETRYABLE_PARSE_ERRORS",
    "FastReply",
    "StructuredRequest",
    "as_completion",
    "continue_with_reasks",
    "parse_with_instructor",
    "structured_request",
]

RETRYABLE_PARSE_ERRORS: tuple[type[Exception], ...] = _RETRYABLE_PARSE_ERRORS
"""Reply errors instructor answers with a re-ask (validation, JSON, parsing)."""


@dataclass(frozen=True, slots=True)
class FastReply:
    """A reply the fast check accepted: the validated output and the raw text it came from."""

    output: BaseModel
    raw_reply: str


@dataclass(frozen=True)
class StructuredRequest:
    """The structured-output part of a request for one response model and mode.

    Attributes:
        mode: The instructor mode (``TOOLS``, ``JSON_SCHEMA`` or ``JSON``).
        response_model: The model replies must validate as.
        prepared_model: instructor's prepared form of it (used by its parser and re-asks).
        fields: What instructor adds to the request (``tools`` and ``tool_choice``, or
            ``response_format``); shared, never mutate.
        instruction: JSON mode's system instruction (the schema in words), else ``None``.

    """

    mode: instructor.Mode
    response_model: type[BaseModel]
    prepared_model: type[BaseModel]
    fields: dict[str, Any]
    instruction: str | None
    _fragments: dict[str, orjson.Fragment]

    @property
    def handlers(self) -> ModeHandlers:
        """The request, parse and re-ask handlers instructor registers for this mode."""
        return mode_registry.get_handlers(Provider.OPENAI, self.mode)

    def kwargs(
        self, model: str, messages: Sequence[dict[str, str]], sampling: dict[str, Any]
    ) -> dict[str, Any]:
        """The ``chat.completions.create`` arguments instructor would send (a fresh dict)."""
        sent: list[dict[str, Any]] = [dict(message) for message in messages]
        if self.instruction is not None:
            sent = _with_instruction(sent, self.instruction)
        return {"messages": sent, "model": model, **sampling, **self.fields}

    def body(self, kwargs: dict[str, Any]) -> bytes:
        """``kwargs`` as the JSON request body, the structured fields pre-serialized."""
        return orjson.dumps({**kwargs, **self._fragments})

    def accept(self, completion: dict[str, Any]) -> FastReply | None:
        """The validated output of a plain, complete reply; ``None`` for anything else.

        ``None`` means "let instructor's parser decide": a missing tool call or content, a
        refusal, a truncated completion (``finish_reason == "length"``) or a validation error.
        """
        try:
            choice = completion["choices"][0]
            message = choice["message"]
        except (KeyError, IndexError, TypeError):
            return None
        if choice.get("finish_reason") == "length" or message.get("refusal") is not None:
            return None
        text = _tool_arguments(message) if self.mode is instructor.Mode.TOOLS else None
        if self.mode is not instructor.Mode.TOOLS:
            text = message.get("content")
        if not isinstance(text, str):
            return None
        try:
            output = self.response_model.model_validate_json(text, strict=True)
        except ValidationError:
            return None
        return FastReply(output, text)


@lru_cache(maxsize=128)
def structured_request(response_model: type[BaseModel], mode: instructor.Mode) -> StructuredRequest:
    """Ask instructor's request handler once what it adds for ``response_model`` in ``mode``."""
    prepared = prepare_response_model(response_model)
    assert prepared is not None  # a model in, a model out
    handlers = mode_registry.get_handlers(Provider.OPENAI, mode)
    _, template = handlers.request_handler(response_model=prepared, kwargs={"messages": []})
    fields = {key: value for key, value in template.items() if key != "messages"}
    instruction = template["messages"][0]["content"] if template["messages"] else None
    return StructuredRequest(
        mode=mode,
        response_model=response_model,
        prepared_model=prepared,
        fields=fields,
        instruction=instruction,
        _fragments={key: orjson.Fragment(orjson.dumps(value)) for key, value in fields.items()},
    )


def _tool_arguments(message: dict[str, Any]) -> Any:
    tool_calls = message.get("tool_calls")
    if not tool_calls:
        return None
    return tool_calls[0].get("function", {}).get("arguments")


def _with_instruction(messages: list[dict[str, Any]], instruction: str) -> list[dict[str, Any]]:
    """JSON mode's system instruction placed as instructor's JSON handler places it."""
    if messages and messages[0]["role"] == "system" and isinstance(messages[0]["content"], str):
        messages[0]["content"] += f"\n\n{instruction}"
    else:
        messages.insert(0, {"role": "system", "content": instruction})
    return merge_consecutive_messages(messages)


def as_completion(data: dict[str, Any]) -> ChatCompletion:
    """The reply body as openai's ``ChatCompletion`` (lenient, like the openai client's own)."""
    return ChatCompletion.construct(**data)


def parse_with_instructor(template: StructuredRequest, completion: ChatCompletion) -> Any:
    """Parse ``completion`` with instructor's own parser (raises what it raises)."""
    return template.handlers.response_parser(
        response=completion,
        response_model=template.prepared_model,
        validation_context=None,
        strict=True,
        stream=False,
        is_async=True,
    )


async def continue_with_reasks(
    create: Any,
    *,
    template: StructuredRequest,
    kwargs: dict[str, Any],
    completion: ChatCompletion,
    error: Exception,
    max_retries: int,
) -> Any:
    """Run instructor's re-ask flow after a first attempt that failed with ``error``.

    Args:
        create: The openai client's ``chat.completions.create``.
        template: The request's structured part.
        kwargs: The first attempt's arguments (as :meth:`StructuredRequest.kwargs`).
        completion: The first attempt's reply.
        error: Why it failed (instructor's parse error).
        max_retries: Re-asks left (``>= 1``).

    Returns:
        The output instructor parsed; its ``_raw_response`` is the last completion, whose usage
        is the total over the re-asks.

    Raises:
        InstructorError: the re-asks failed (instructor's ``InstructorRetryException``).

    """
    reasked = template.handlers.reask_handler(kwargs=kwargs, response=completion, exception=error)
    return await retry_async_v2(
        func=create,
        response_model=template.prepared_model,
        provider=Provider.OPENAI,
        mode=template.mode,
        context=None,
        max_retries=max_retries - 1,
        args=(),
        kwargs=reasked,
        strict=True,
    )
