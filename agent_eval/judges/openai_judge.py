"""The ``openai`` judge: instructor over ``openai.AsyncOpenAI``, any OpenAI-compatible endpoint.

Works with OpenAI, Azure OpenAI (``azure_endpoint``), and local OpenAI-compatible servers
(Ollama, vLLM, llama.cpp server, LM Studio) through ``base_url``. Two retry layers, both from
the libraries rather than hand-rolled:

- transport: the openai client's own retries (``transport_retries``) on 408/409/429/5xx,
  timeouts, connection errors and 200 replies whose body is not JSON (an httpx response hook
  turns those into a send error), with exponential backoff that honours ``Retry-After``;
- output: instructor's re-ask (``max_retries``) when the reply fails validation, the
  validation error appended to the conversation.

``attempts`` counts every HTTP request sent (an httpx request hook), so both layers show.
The API key is handed to the openai client and kept nowhere else; it never appears in a
reply, an error message or ``repr``.
"""

from __future__ import annotations

import json
import os
import time
from contextvars import ContextVar
from typing import Any, Literal, cast

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

__all__ = ["MODES", "MalformedBodyError", "OpenAIJudge", "StructuredMode"]

StructuredMode = Literal["tools", "json_schema", "json"]
MODES: dict[str, instructor.Mode] = {
    "tools": instructor.Mode.TOOLS,
    "json_schema": instructor.Mode.JSON_SCHEMA,
    "json": instructor.Mode.JSON,
}
"""Structured-output modes: function/tool calling, ``response_format`` JSON schema, JSON mode."""

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
        http_client = openai.DefaultAsyncHttpxClient(
            event_hooks={"request": [_count_request], "response": [_check_json_body]}
        )
        common: dict[str, Any] = {
            "timeout": timeout,
            "max_retries": transport_retries,
            "http_client": http_client,
        }
        client: openai.AsyncOpenAI
        if azure_endpoint is not None:
            client = openai.AsyncAzureOpenAI(
                azure_endpoint=azure_endpoint,
                api_version=azure_api_version,
                api_key=key,
                **common,
            )
        else:
            client = openai.AsyncOpenAI(
                base_url=self.base_url, api_key=key or "not-needed", **common
            )
        self._openai = client
        self._client = instructor.from_openai(client, mode=MODES[mode])

    def __repr__(self) -> str:
        return f"OpenAIJudge(model={self.model!r}, base_url={self.base_url!r}, mode={self.mode!r})"

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request``; see :meth:`Judge.ask` for the errors raised."""
        counter = [0]
        token = _requests_sent.set(counter)
        start = time.perf_counter()
        try:
            output, completion = await self._client.chat.completions.create_with_completion(
                model=self.model,
                messages=cast(Any, list(request.messages)),
                response_model=request.response_model,
                max_retries=self.max_retries,
                **_sampling(request),
            )
        except InstructorError as exc:
            raise self._judge_error(exc, counter[0]) from None
        finally:
            _requests_sent.reset(token)
        prompt, completion_tokens = _usage(completion.usage)
        return JudgeReply(
            output=output,
            model=completion.model or self.model,
            input_tokens=prompt,
            output_tokens=completion_tokens,
            latency_ms=(time.perf_counter() - start) * 1000,
            attempts=counter[0],
            raw_reply=raw_text(completion),
        )

    async def aclose(self) -> None:
        """Close the HTTP connection pool."""
        await self._openai.close()

    def _judge_error(
        self, exc: InstructorError, requests_sent: int
    ) -> JudgeOutputError | JudgeTransportError:
        cause = exc.__cause__
        attempts = max(requests_sent, 1)
        prompt, completion_tokens = _usage(getattr(exc, "total_usage", None))
        if _is_transport_failure(exc):
            return JudgeTransportError(
                f"judge endpoint failed after {attempts} request(s): {self._describe(cause)}",
                attempts=attempts,
                input_tokens=prompt,
                output_tokens=completion_tokens,
            )
        return JudgeOutputError(
            f"judge reply did not validate after {attempts} request(s): "
            + self._redact(str(cause or exc)),
            attempts=attempts,
            raw_reply=raw_text(getattr(exc, "last_completion", None)),
            input_tokens=prompt,
            output_tokens=completion_tokens,
        )

    def _describe(self, error: BaseException | None) -> str:
        if isinstance(error, openai.AuthenticationError | openai.PermissionDeniedError):
            return f"HTTP {error.status_code}: the endpoint refused the API key; check it"
        if isinstance(error, openai.APIConnectionError) and isinstance(
            error.__cause__, MalformedBodyError
        ):
            return str(error.__cause__)
        if isinstance(error, json.JSONDecodeError):
            return f"the reply body is not valid JSON ({error.msg} at char {error.pos})"
        return self._redact(f"{type(error).__name__}: {error}")

    def _redact(self, text: str) -> str:
        key = self._openai.api_key
        return text.replace(key, "***") if key and len(key) >= 8 else text


def _is_transport_failure(exc: InstructorError) -> bool:
    """The endpoint failed (HTTP error, timeout, or a 200 body that is not JSON at all)."""
    cause = exc.__cause__
    if isinstance(cause, json.JSONDecodeError):
        return not getattr(exc, "failed_attempts", None)
    return isinstance(cause, openai.APIError) and not isinstance(
        cause, openai.APIResponseValidationError
    )


def _sampling(request: JudgeRequest) -> dict[str, Any]:
    params = {
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    return {name: value for name, value in params.items() if value is not None}


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
