"""The ``openai`` judge: ``openai.AsyncOpenAI`` on any OpenAI-compatible endpoint.

Works with OpenAI, Azure OpenAI (``azure_endpoint``), and local OpenAI-compatible servers
(Ollama, vLLM, llama.cpp server, LM Studio) through ``base_url``. Two retry layers, both from
libraries rather than hand-rolled:

- transport: the openai client's own retries (``transport_retries``) on 408/409/429/5xx,
  timeouts, connection errors and 200 replies whose body is not JSON (an httpx2 response hook
  turns those into a send error), with exponential backoff that honours ``Retry-After``;
- output: re-asks (``max_retries``, :mod:`agent_eval.judges.reask`, on tenacity) when the reply
  fails validation, the reply and the validation error appended to the conversation, as the
  ``langchain`` and ``llama-cpp`` judges do.

Only public APIs of openai are used: the request is the chat-completions body of
:mod:`agent_eval.judges.structured` (built once per response model and mode, pre-serialized),
sent with the client's documented low-level ``post`` (as for an endpoint the SDK has no method
for), and the reply read as bytes; no per-call schema work and no per-call model transform.
The HTTP transport is openai's aiohttp client (:mod:`agent_eval.judges.openai_http`).

``attempts`` counts every HTTP request sent (an httpx2 request hook), so both layers show.
The API key is handed to the openai client and kept nowhere else; it never appears in a
reply, an error message or ``repr``. A judge is an async context manager; leave it (or await
:meth:`OpenAIJudge.aclose`) in the event loop that used it.
"""

from __future__ import annotations

import dataclasses
import os
import time
from contextvars import ContextVar
from typing import Any, cast

import httpx2
import openai
import orjson
from pydantic import ValidationError

from agent_eval.errors import (
    ConfigError,
    JudgeContextLengthError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeTransportError,
)
from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest, JudgeSettings
from agent_eval.judges.openai_http import judge_http_client, judge_timeout
from agent_eval.judges.reask import AttemptUsage, InvalidReply, ask_with_reasks, reask_messages
from agent_eval.judges.structured import (
    MODES,
    StructuredMode,
    StructuredOutput,
    parse_reply,
    reply_text,
    structured_output,
)
from agent_eval.redaction import redact_url, userinfo_auth

__all__ = ["MODES", "MalformedBodyError", "OpenAIJudge", "StructuredMode"]

_PATH = "/chat/completions"
_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length", "context window")

_requests_sent: ContextVar[list[int] | None] = ContextVar("agent_eval_requests_sent", default=None)


async def _count_request(_: httpx2.Request) -> None:
    counter = _requests_sent.get()
    if counter is not None:
        counter[0] += 1


class MalformedBodyError(httpx2.DecodingError):
    """A 200 reply whose JSON body does not parse (truncated, garbled): retried as transport."""


async def _check_json_body(response: httpx2.Response) -> None:
    """Raise on a 200 JSON reply that is not JSON, so the openai client retries it with backoff.

    The openai client retries a request error raised while sending; without this a broken
    body would surface after the retries are skipped, or use up a re-ask instead.
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
        max_retries: Re-asks after an invalid reply, so ``1 + max_retries`` tries.
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
        common: dict[str, Any] = {
            "timeout": judge_timeout(timeout),
            "max_retries": transport_retries,
            "http_client": _http_client(),
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
        self._open = False  # True once a request went out on the current HTTP client

    def __repr__(self) -> str:
        url = None if self.base_url is None else redact_url(self.base_url)
        return f"OpenAIJudge(model={self.model!r}, base_url={url!r}, mode={self.mode!r})"

    @property
    def client(self) -> openai.AsyncOpenAI:
        """The openai client requests go through (a fresh one after :meth:`aclose`)."""
        return self._openai

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request``; see :meth:`Judge.ask` for the errors raised.

        Raises:
            JudgeContextLengthError: the endpoint said the prompt exceeds the context window.

        """
        counter = [0]
        token = _requests_sent.set(counter)
        start = time.perf_counter()
        try:
            output = structured_output(request.response_model, self.mode)
            messages = output.messages(request.messages)
            sampling = _sampling(request)
            reply = await ask_with_reasks(
                lambda usage: self._attempt(output, messages, sampling, usage, counter),
                model=self.model,
                max_retries=self.max_retries,
            )
        finally:
            _requests_sent.reset(token)
        return dataclasses.replace(reply, latency_ms=(time.perf_counter() - start) * 1000)

    async def _attempt(
        self,
        output: StructuredOutput,
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        usage: AttemptUsage,
        counter: list[int],
    ) -> tuple[Any, str]:
        """One try: POST, read the reply, validate it (raise :class:`InvalidReply` to re-ask)."""
        data = await self._post(output, messages, sampling, usage, counter)
        usage.attempts = counter[0]
        _add_usage(usage, data.get("usage"))
        choice = _first_choice(data)
        found = choice.get("message")
        message: dict[str, Any] = found if isinstance(found, dict) else {}
        text = reply_text(self.mode, message)
        if message.get("refusal"):
            raise self._output_error(f"the model refused: {message['refusal']}", usage, text)
        if choice.get("finish_reason") == "length":
            raise self._output_error(
                "the reply was cut off at the completion token limit (finish_reason=length)",
                usage,
                text,
            )
        if text is None:
            error = ValueError("the reply has no tool call and no content; answer with the JSON")
            reask_messages(messages, "", error)
            raise InvalidReply(error, "")
        try:
            parsed = parse_reply(text, output.response_model)
        except ValidationError as error:
            reask_messages(messages, text, error)
            raise InvalidReply(error, text) from None
        if data.get("model"):
            usage.model = str(data["model"])
        return parsed, text

    async def _post(
        self,
        output: StructuredOutput,
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        usage: AttemptUsage,
        counter: list[int],
    ) -> dict[str, Any]:
        """POST the request (the openai client's retries apply); the reply body as a dict."""
        client = self._openai
        self._open = True
        try:
            if isinstance(client, openai.AsyncAzureOpenAI):  # it routes on the JSON body
                body = output.request(self.model, messages, sampling)
                content = await client.post(_PATH, body=body, cast_to=bytes)
            else:
                raw = output.body(self.model, messages, sampling)
                content = await client.post(_PATH, content=raw, cast_to=bytes)
        except openai.APIError as error:
            raise self._transport_error(error, counter[0], usage) from None
        try:
            data = orjson.loads(content)
        except orjson.JSONDecodeError as error:
            raise self._transport_error(error, counter[0], usage) from None
        if not isinstance(data, dict):
            raise self._transport_error(
                None, counter[0], usage, "the reply body is not a JSON object"
            )
        return data

    async def aclose(self) -> None:
        """Close the HTTP connections (idempotent); the judge can be used again afterwards."""
        if not self._open:
            return
        await self._openai.close()
        self._openai = self._openai.copy(http_client=_http_client())
        self._open = False

    def _output_error(self, message: str, usage: AttemptUsage, raw: str | None) -> JudgeOutputError:
        attempts = max(usage.attempts, 1)
        return JudgeOutputError(
            f"judge reply did not validate after {attempts} request(s): {self._redact(message)}",
            attempts=attempts,
            raw_reply=raw,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            usage_known=usage.known,
        )

    def _transport_error(
        self,
        error: BaseException | None,
        requests_sent: int,
        usage: AttemptUsage,
        detail: str | None = None,
    ) -> JudgeTransportError | JudgeContextLengthError:
        attempts = max(requests_sent, 1)
        if _is_context_length(error):
            return JudgeContextLengthError(
                "the judge endpoint refused the prompt as longer than the model's context "
                f"window: {self._describe(error)}; lower --max-context-tokens to skip such "
                "conversations before any call",
                attempts=attempts,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                usage_known=usage.known,
            )
        return JudgeTransportError(
            f"judge endpoint failed after {attempts} request(s): "
            + (detail or self._describe(error)),
            attempts=attempts,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            usage_known=usage.known,
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
        return text.replace(key, "***") if isinstance(key, str) and len(key) >= 8 else text

    @classmethod
    def from_settings(cls, settings: JudgeSettings) -> OpenAIJudge:
        """The judge ``--judge MODEL`` / ``--judge openai:MODEL`` and ``--base-url`` ... name.

        Raises:
            ConfigError: no model is named, or the mode is unknown.
            JudgeNotConfiguredError: no key in ``settings.api_key_env`` and no endpoint.

        """
        model = settings.target or settings.model
        if not model:
            raise ConfigError("--judge openai needs a model: --judge openai:MODEL or --judge MODEL")
        if settings.params:
            raise ConfigError(
                f"the openai judge takes no [judge.params] (got {sorted(settings.params)}); "
                "its settings are the [score] keys (base-url, mode, timeout, ...)"
            )
        return cls(
            model,
            base_url=settings.base_url,
            api_key_env=settings.api_key_env,
            mode=cast("StructuredMode", settings.mode or "tools"),  # checked in __init__
            timeout=settings.timeout,
            max_retries=settings.max_retries,
            transport_retries=settings.transport_retries,
            azure_endpoint=settings.azure_endpoint,
            azure_api_version=settings.azure_api_version,
        )


def _http_client() -> httpx2.AsyncClient:
    return judge_http_client({"request": [_count_request], "response": [_check_json_body]})


def _is_context_length(error: BaseException | None) -> bool:
    """Whether an HTTP 400/413 error says the prompt exceeds the model's context window."""
    if not isinstance(error, openai.APIStatusError) or error.status_code not in {400, 413}:
        return False
    if error.code == "context_length_exceeded":
        return True
    text = f"{error.message} {error.body}".lower()
    return any(marker in text for marker in _CONTEXT_MARKERS)


def _first_choice(data: dict[str, Any]) -> dict[str, Any]:
    choices = data.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], dict):
        return choices[0]
    return {}


def _sampling(request: JudgeRequest) -> dict[str, Any]:
    params = {
        "temperature": request.temperature,
        "max_tokens": request.max_tokens,
        "seed": request.seed,
    }
    return {name: value for name, value in params.items() if value is not None}


def _add_usage(usage: AttemptUsage, reported: Any) -> None:
    """Add a reply body's ``usage`` (prompt and completion tokens) to ``usage``.

    A reply without a ``usage`` object (some local servers) marks the usage as unknown.
    """
    if not isinstance(reported, dict) or "prompt_tokens" not in reported:
        usage.known = False
        return
    usage.input_tokens += int(reported.get("prompt_tokens") or 0)
    usage.output_tokens += int(reported.get("completion_tokens") or 0)
