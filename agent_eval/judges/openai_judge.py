"""The ``openai`` judge: ``openai.AsyncOpenAI`` and instructor, any OpenAI-compatible endpoint.

Works with OpenAI, Azure OpenAI (``azure_endpoint``), and local OpenAI-compatible servers
(Ollama, vLLM, llama.cpp server, LM Studio) through ``base_url``. Two retry layers, both from
the libraries rather than hand-rolled:

- transport: the openai client's own retries (``transport_retries``) on 408/409/429/5xx,
  timeouts, connection errors and 200 replies whose body is not JSON (an httpx response hook
  turns those into a send error), with exponential backoff that honours ``Retry-After``;
- output: instructor's re-ask (``max_retries``) when the reply fails validation, the
  validation error appended to the conversation.

The first attempt of a call skips the per-call schema work of instructor and of the openai
client's request transform: it sends the request instructor would build, prepared once per
response model (:mod:`agent_eval.judges.openai_fast`); a reply that does not validate goes on
through instructor's re-ask flow. The HTTP transport is aiohttp when the ``openai[aiohttp]``
extra is installed (:mod:`agent_eval.judges.openai_http`).

``attempts`` counts every HTTP request sent (an httpx request hook), so both layers show.
The API key is handed to the openai client and kept nowhere else; it never appears in a
reply, an error message or ``repr``.
"""

from __future__ import annotations

import dataclasses
import os
import time
from contextvars import ContextVar
from typing import Any, Literal

import httpx
import instructor
import openai
import orjson
from instructor.core.exceptions import InstructorError

from agent_eval.errors import (
    ConfigError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeTransportError,
)
from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest
from agent_eval.judges.openai_fast import (
    RETRYABLE_PARSE_ERRORS,
    StructuredRequest,
    as_completion,
    continue_with_reasks,
    parse_with_instructor,
    structured_request,
)
from agent_eval.judges.openai_http import judge_http_client, judge_timeout
from agent_eval.redaction import redact_url, userinfo_auth

__all__ = ["MODES", "MalformedBodyError", "OpenAIJudge", "StructuredMode"]

StructuredMode = Literal["tools", "json_schema", "json"]
MODES: dict[str, instructor.Mode] = {
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json": instructor.Mode.JSON,
}
"""Structured-output modes: function/tool calling, ``response_format`` JSON schema, JSON mode."""

_PATH = "/chat/completions"

_requests_sent: ContextVar[list[int] | None] = ContextVar("agent_eval_requests_sent", default=None)


async def _count_request(_: httpx.Request) -> None:
    counter = _requests_sent.get()
    if counter is not None:
        counter[0] += 1


class MalformedBodyError(httpx.DecodingError):
    """A 200 reply whose JSON body does not parse (truncated, garbled): retried as transport."""


async def _check_json_body(response: httpx.Response) -> None:
    """Raise on a 200 JSON reply that is not JSON, so the openai client retries it with backoff.

    The openai client retries any exception raised while sending (as a connection error);
    without this a broken body would surface as a parse error and use up a re-ask instead.
    """
    if response.status_code != 200 or "json" not in response.headers.get("content-type", ""):
        return
    body = await response.aread()
    try:
        orjson.loads(body)
    except orjson.JSONDecodeError as exc:
        raise MalformedBodyError(
            f"the judge endpoint sent a 200 reply whose JSON body does not parse ({exc})",
            request=response.request,
        ) from None


class OpenAIJudge(Judge):
    """A judge on any OpenAI-compatible chat-completions endpoint.

    Args:
        model: The model name sent to the endpoint (for Azure, the deployment name).
        base_url: Endpoint root, e.g. ``http://localhost:11434/v1``; default ``OPENAI_BASE_URL``
            or OpenAI's own.
        api_key: The key itself (prefer ``api_key_env``); never stored outside the client.
        api_key_env: Environment variable holding the key (default ``OPENAI_API_KEY``).
        mode: Structured-output mode: ``tools``, ``json_schema`` or ``json``.
        timeout: Per-request timeout, seconds.
        max_retries: Re-asks after an invalid reply (instructor), so ``1 + max_retries`` tries.
        transport_retries: Retries of a failed request (openai client), per try.
        azure_endpoint: Use Azure OpenAI at this endpoint (``AsyncAzureOpenAI``).
        azure_api_version: The Azure OpenAI API version, e.g. ``"2024-10-21"``.

    Raises:
        JudgeNotConfiguredError: no key and no ``base_url`` (a local server needs no key).
        ConfigError: ``mode`` is not one of :data:`MODES`.

    """

    def __init__(
        self,
        model: str,
        *,
        base_url: str | None = None,
        api_key: str | None = None,
        api_key_env: str = "OPENAI_API_KEY",
        mode: StructuredMode = "tools",
        timeout: float = 60.0,
        max_retries: int = 2,
        transport_retries: int = 4,
        azure_endpoint: str | None = None,
        azure_api_version: str | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown judge mode {mode!r}; choose one of {', '.join(MODES)}")
        self.model = model
        self.mode = mode
        self.max_retries = max_retries
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get(api_key_env) or None
        if key is None and self.base_url is None and azure_endpoint is None:
            raise JudgeNotConfiguredError(
                f"no API key in ${api_key_env} and no --base-url: set the key, or point "
                "--base-url at a local OpenAI-compatible server (Ollama, vLLM, llama.cpp)"
            )
        http_client = judge_http_client(
            {"request": [_count_request], "response": [_check_json_body]}
        )
        common: dict[str, Any] = {
            "timeout": judge_timeout(timeout),
            "max_retries": transport_retries,
            "http_client": http_client,
        }
        client: openai.AsyncOpenAI
        base_url, auth = userinfo_auth(self.base_url) if self.base_url else (None, {})
        if auth:  # http://user:pass@host: HTTP clients send no userinfo; Basic auth instead
            common["default_headers"] = auth
        if azure_endpoint is not None:
            client = openai.AsyncAzureOpenAI(
                azure_endpoint=azure_endpoint,
                api_version=azure_api_version,
                api_key=key,
                **common,
            )
        else:
            client = openai.AsyncOpenAI(base_url=base_url, api_key=key or "not-needed", **common)
        self._openai = client

    def __repr__(self) -> str:
        url = None if self.base_url is None else redact_url(self.base_url)
        return f"OpenAIJudge(model={self.model!r}, base_url={url!r}, mode={self.mode!r})"

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request``; see :meth:`Judge.ask` for the errors raised."""
        counter = [0]
        token = _requests_sent.set(counter)
        start = time.perf_counter()
        try:
            reply = await self._ask(request, counter)
        finally:
            _requests_sent.reset(token)
        return dataclasses.replace(reply, latency_ms=(time.perf_counter() - start) * 1000)

    async def _ask(self, request: JudgeRequest, counter: list[int]) -> JudgeReply[Any]:
        template = structured_request(request.response_model, MODES[self.mode])
        kwargs = template.kwargs(self.model, request.messages, _sampling(request))
        data = await self._first_attempt(template, kwargs, counter)
        usage = _usage_of(data.get("usage"))
        model = str(data.get("model") or self.model)
        fast = template.accept(data)
        if fast is not None:
            return JudgeReply(fast.output, model, *usage, 0.0, counter[0], fast.raw_reply)
        completion = as_completion(data)
        try:
            output = parse_with_instructor(template, completion)
        except RETRYABLE_PARSE_ERRORS as exc:
            if self.max_retries < 1:
                raise self._output_error(exc, counter[0], usage, completion) from None
            return await self._reask(
                template=template,
                kwargs=kwargs,
                completion=completion,
                error=exc,
                first_usage=usage,
                counter=counter,
            )
        except Exception as exc:  # a refusal or a truncated reply: instructor does not re-ask
            raise self._output_error(exc, counter[0], usage, completion) from None
        return JudgeReply(output, model, *usage, 0.0, counter[0], raw_text(completion))

    async def _first_attempt(
        self, template: StructuredRequest, kwargs: dict[str, Any], counter: list[int]
    ) -> dict[str, Any]:
        """POST the request (the openai client's retries apply); the reply body as a dict."""
        try:
            if isinstance(self._openai, openai.AsyncAzureOpenAI):  # it routes by json body
                response = await self._openai.post(_PATH, body=kwargs, cast_to=httpx.Response)
            else:
                content = template.body(kwargs)
                response = await self._openai.post(_PATH, content=content, cast_to=httpx.Response)
        except openai.APIError as error:
            raise self._transport_error(error, counter[0]) from None
        try:
            data = orjson.loads(response.content)
        except orjson.JSONDecodeError as error:
            raise self._transport_error(error, counter[0]) from None
        if not isinstance(data, dict):
            raise self._transport_error(None, counter[0], "the reply body is not a JSON object")
        return data

    async def _reask(
        self,
        *,
        template: StructuredRequest,
        kwargs: dict[str, Any],
        completion: Any,
        error: Exception,
        first_usage: tuple[int, int],
        counter: list[int],
    ) -> JudgeReply[Any]:
        create = self._openai.chat.completions.create
        try:
            output = await continue_with_reasks(
                create,
                template=template,
                kwargs=kwargs,
                completion=completion,
                error=error,
                max_retries=self.max_retries,
            )
        except InstructorError as exc:
            raise self._judge_error(exc, counter[0], first_usage) from None
        last = output._raw_response
        prompt, completion_tokens = _usage(last.usage)
        return JudgeReply(
            output=output,
            model=last.model or self.model,
            input_tokens=first_usage[0] + prompt,
            output_tokens=first_usage[1] + completion_tokens,
            latency_ms=0.0,
            attempts=counter[0],
            raw_reply=raw_text(last),
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._openai.close()

    def _judge_error(
        self, exc: InstructorError, requests_sent: int, first_usage: tuple[int, int]
    ) -> JudgeOutputError | JudgeTransportError:
        """The error for a failed re-ask flow (the first attempt already failed validation)."""
        cause = exc.__cause__
        prompt, completion_tokens = _usage(getattr(exc, "total_usage", None))
        usage = (first_usage[0] + prompt, first_usage[1] + completion_tokens)
        if isinstance(cause, openai.APIError) and not isinstance(
            cause, openai.APIResponseValidationError
        ):
            return self._transport_error(cause, requests_sent, usage=usage)
        completion = getattr(exc, "last_completion", None)
        return self._output_error(cause or exc, requests_sent, usage, completion)

    def _output_error(
        self, error: BaseException, requests_sent: int, usage: tuple[int, int], completion: Any
    ) -> JudgeOutputError:
        attempts = max(requests_sent, 1)
        return JudgeOutputError(
            f"judge reply did not validate after {attempts} request(s): "
            + self._redact(str(error)),
            attempts=attempts,
            raw_reply=raw_text(completion),
            input_tokens=usage[0],
            output_tokens=usage[1],
        )

    def _transport_error(
        self,
        error: BaseException | None,
        requests_sent: int,
        detail: str | None = None,
        usage: tuple[int, int] = (0, 0),
    ) -> JudgeTransportError:
        attempts = max(requests_sent, 1)
        return JudgeTransportError(
            f"judge endpoint failed after {attempts} request(s): "
            + (detail or self._describe(error)),
            attempts=attempts,
            input_tokens=usage[0],
            output_tokens=usage[1],
        )

    def _describe(self, error: BaseException | None) -> str:
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            return f"HTTP {error.status_code}: the endpoint refused the API key; check it"
        if isinstance(error, openai.APIConnectionError) and isinstance(
            error.__cause__, MalformedBodyError
        ):
            return str(error.__cause__)
        if isinstance(error, orjson.JSONDecodeError):
            return f"the reply body is not valid JSON ({error.msg} at char {error.pos})"
        return self._redact(f"{type(error).__name__}: {error}")

    def _redact(self, text: str) -> str:
        key = self._openai.api_key
        return text.replace(key, "***") if key and len(key) >= 8 else text


def _sampling(request: JudgeRequest) -> dict[str, Any]:
    params = {
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    return {name: value for name, value in params.items() if value is not None}


def _usage_of(usage: Any) -> tuple[int, int]:
    """Prompt and completion tokens of a reply body's ``usage`` object (0 when absent)."""
    if not isinstance(usage, dict):
        return 0, 0
    return int(usage.get("prompt_tokens") or 0), int(usage.get("completion_tokens") or 0)


def _usage(usage: Any) -> tuple[int, int]:
    if usage is None:
        return 0, 0
    return int(getattr(usage, "prompt_tokens", 0) or 0), int(
        getattr(usage, "completion_tokens", 0) or 0
    )


def raw_text(completion: Any) -> str:
    """The text a chat completion carried: its first tool call's arguments, else its content."""
    try:
        message = completion.choices[0].message
    except (AttributeError, IndexError, TypeError):
        return ""
    tool_calls = getattr(message, "tool_calls", None)
    if tool_calls:
        return str(tool_calls[0].function.arguments or "")
    return str(getattr(message, "content", "") or "")
