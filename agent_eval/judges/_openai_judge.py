"""The ``openai`` judge: any OpenAI-compatible chat-completions endpoint.

Works with OpenAI, Azure OpenAI (``azure_endpoint``), and local OpenAI-compatible servers
(Ollama, vLLM, llama.cpp server, LM Studio) through ``base_url``. Two retry layers, both on
tenacity rather than hand-rolled:

- transport (:mod:`agent_eval.judges._openai_http`): ``transport_retries`` retries on
  408/409/429/5xx, timeouts, connection errors and 200 replies whose body is not JSON, with
  the openai client's backoff rules, honouring ``Retry-After`` / ``retry-after-ms``;
- output: re-asks (``max_retries``, :mod:`agent_eval.judges._reask`) when the reply fails
  validation, the reply and the validation error appended to the conversation, as the
  ``langchain`` and ``llama-cpp`` judges do.

The request is the chat-completions body of :mod:`agent_eval.judges._structured` (built once per
response model and mode, pre-serialized), POSTed with aiohttp's public client API to
``{base_url}/chat/completions`` with ``Authorization: Bearer KEY`` (or, for Azure, to
``{azure_endpoint}/openai/deployments/{model}/chat/completions?api-version=V`` with an
``api-key`` header, as Azure documents its REST API); no SDK is imported on the call path.

With ``client=``, an ``openai.AsyncOpenAI`` or ``AsyncAzureOpenAI`` the user built (Azure AD
token provider, custom HTTP client, default headers...), the same body goes through that client
instead (:mod:`agent_eval.judges._openai_client`, the ``openai`` extra), with the same re-asks,
transport retries, counting and errors.

``attempts`` counts every HTTP request sent, so both layers show; attempts that could not even
open a connection are counted apart (:attr:`OpenAIJudge.connect_failures`) and named in the
error of a call that failed. The API key is kept in the request headers only; it never appears
in a reply, an error message or ``repr``. A judge is an async context manager; leave it (or
await :meth:`OpenAIJudge.aclose`) in the event loop that used it.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, cast
from urllib.parse import quote, urlsplit, urlunsplit

from pydantic import ValidationError

from agent_eval._redaction import redact_url, userinfo_auth
from agent_eval.errors import (
    ConfigError,
    JudgeContextLengthError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeRequestError,
    JudgeTransportError,
)
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, JudgeSettings
from agent_eval.judges._openai_client import ClientTransport, check_client
from agent_eval.judges._openai_http import ChatTransport, EndpointError, SendCounts
from agent_eval.judges._reask import AttemptUsage, InvalidReply, ask_with_reasks, reask_messages
from agent_eval.judges._structured import (
    MODES,
    StructuredMode,
    StructuredOutput,
    parse_reply,
    reply_text,
    structured_output,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["DEFAULT_BASE_URL", "MODES", "OpenAIJudge", "StructuredMode"]

DEFAULT_BASE_URL = "https://api.openai.com/v1"
"""Where requests go without ``base_url``, ``$OPENAI_BASE_URL`` or ``azure_endpoint``."""

_CONTEXT_MARKERS = ("context_length_exceeded", "maximum context length", "context window")


class OpenAIJudge(Judge):
    """A judge on any OpenAI-compatible chat-completions endpoint.

    Args:
        model: The model name sent to the endpoint (for Azure, the deployment name).
        base_url: Endpoint root, e.g. ``http://localhost:11434/v1``; default ``OPENAI_BASE_URL``
            or OpenAI's own (:data:`DEFAULT_BASE_URL`). Userinfo (``http://user:pass@host``)
            is sent as HTTP Basic auth instead of the bearer key.
        api_key: The key itself (prefer ``api_key_env``); kept in the request headers only.
        api_key_env: Environment variable holding the key (default ``OPENAI_API_KEY``; for
            Azure, ``AZURE_OPENAI_API_KEY`` is read when it is unset, as openai's client does).
        mode: Structured-output mode: ``tools``, ``json_schema`` or ``json``.
        timeout: Seconds to connect and between reads of a reply (per request).
        max_retries: Re-asks after an invalid reply, so ``1 + max_retries`` tries.
        transport_retries: Retries of a failed request, per try.
        azure_endpoint: Use Azure OpenAI at this endpoint (``https://NAME.openai.azure.com``).
        azure_api_version: The Azure OpenAI API version, e.g. ``"2024-10-21"`` (default
            ``$OPENAI_API_VERSION``).
        default_headers: Further headers sent with every request (a gateway's own, e.g.
            ``{"OpenAI-Organization": ...}``); they override the judge's own headers.
        client: Your own ``openai.AsyncOpenAI`` or ``openai.AsyncAzureOpenAI`` to send
            through (needs the ``openai`` extra). Endpoint, credentials, headers and timeout
            are then the client's: give none of ``base_url``, ``api_key``, ``azure_endpoint``,
            ``azure_api_version``, ``default_headers``. Its own retries are turned off
            (``transport_retries`` applies instead). The judge does not close it.

    Raises:
        JudgeNotConfiguredError: no key and no ``base_url`` (a local server needs no key), or
            Azure without a key.
        ConfigError: ``mode`` is not one of :data:`MODES`, Azure without an API version, a
            ``client`` that is not an async openai client or comes with endpoint settings, or
            ``client`` without the openai package installed.

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
        default_headers: Mapping[str, str] | None = None,
        client: AsyncOpenAI | None = None,
    ) -> None:
        if mode not in MODES:
            raise ConfigError(f"unknown judge mode {mode!r}; choose one of {', '.join(MODES)}")
        self.model = model
        self.mode = mode
        self.max_retries = max_retries
        self.connect_failures = 0
        """Attempts, over the judge's life, that could not open a connection (never sent)."""
        self._transport: ChatTransport | ClientTransport
        self._key: str | None
        if client is not None:
            given = {"base_url": base_url, "api_key": api_key, "azure_endpoint": azure_endpoint}
            given |= {"azure_api_version": azure_api_version}
            _no_endpoint_with_client(
                {k for k, v in given.items() if v is not None}, default_headers
            )
            self._transport = ClientTransport(
                check_client(client, "client"), retries=transport_retries
            )
            self.base_url: str | None = self._transport.url
            self._key = self._transport.api_key
            return
        self.base_url = base_url or os.environ.get("OPENAI_BASE_URL") or None
        key = api_key or os.environ.get(api_key_env) or None
        if azure_endpoint is not None:
            url, headers = self._azure(model, azure_endpoint, azure_api_version, key)
        else:
            if key is None and self.base_url is None:
                raise JudgeNotConfiguredError(
                    f"no API key in ${api_key_env} and no --base-url: set the key, or point "
                    "--base-url at a local OpenAI-compatible server (Ollama, vLLM, llama.cpp)"
                )
            root, auth = userinfo_auth(self.base_url) if self.base_url else (DEFAULT_BASE_URL, {})
            url = _under(root, "chat/completions")  # ?api-key=K and such stay the query
            # http://user:pass@host: HTTP clients send no userinfo; Basic auth instead
            headers = auth or {"Authorization": f"Bearer {key or 'not-needed'}"}
        self._key = key
        headers.update(default_headers or {})
        self._transport = ChatTransport(url, headers, timeout=timeout, retries=transport_retries)

    @staticmethod
    def _azure(
        model: str, endpoint: str, api_version: str | None, key: str | None
    ) -> tuple[str, dict[str, str]]:
        key = key or os.environ.get("AZURE_OPENAI_API_KEY") or None
        version = api_version or os.environ.get("OPENAI_API_VERSION") or None
        if key is None:
            raise JudgeNotConfiguredError(
                "Azure OpenAI needs an API key: set $AZURE_OPENAI_API_KEY or the variable "
                "--api-key-env names"
            )
        if version is None:
            raise ConfigError(
                "Azure OpenAI needs an API version: give --azure-api-version (e.g. 2024-10-21) "
                "or set $OPENAI_API_VERSION"
            )
        root = f"{endpoint.rstrip('/')}/openai/deployments/{quote(model, safe='')}"
        return f"{root}/chat/completions?api-version={quote(version)}", {"api-key": key}

    def __repr__(self) -> str:
        url = None if self.base_url is None else redact_url(self.base_url)
        return f"OpenAIJudge(model={self.model!r}, base_url={url!r}, mode={self.mode!r})"

    @property
    def url(self) -> str:
        """The URL requests are POSTed to, secrets masked (``?api-key=***``).

        Userinfo is not in it: it is sent as a Basic auth header.
        """
        return redact_url(str(self._transport.url))

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Send ``request``; see :meth:`Judge.ask` for the errors raised.

        Raises:
            JudgeContextLengthError: the endpoint said the prompt exceeds the context window.

        """
        output = structured_output(request.response_model, self.mode)
        messages = output.messages(request.messages)
        sampling = _sampling(request)
        counts = SendCounts()
        try:
            reply = await ask_with_reasks(
                lambda usage: self._attempt(output, messages, sampling, usage, counts),
                model=self.model,
                max_retries=self.max_retries,
            )
        finally:
            self.connect_failures += counts.connect_failures
        return reply

    async def _attempt(
        self,
        output: StructuredOutput,
        messages: list[dict[str, Any]],
        sampling: dict[str, Any],
        usage: AttemptUsage,
        counts: SendCounts,
    ) -> tuple[Any, str]:
        """One try: POST, read the reply, validate it (raise :class:`InvalidReply` to re-ask)."""
        try:
            if isinstance(self._transport, ChatTransport):
                body = output.body(self.model, messages, sampling)
                data = await self._transport.post(body, counts)
            else:  # the user's openai client takes keyword arguments
                request = output.request(self.model, messages, sampling)
                data = await self._transport.post(request, counts)
        except EndpointError as error:
            usage.attempts = counts.sent
            raise self._transport_error(error, counts, usage) from None
        except BaseException:  # cancelled (an interrupted run): what was sent is still counted
            usage.attempts, usage.unanswered = counts.sent, counts.cancelled
            raise
        usage.attempts = counts.sent
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
            empty = ValueError("the reply has no tool call and no content; answer with the JSON")
            reask_messages(messages, "", empty)
            raise InvalidReply(empty, "")
        try:
            parsed = parse_reply(text, output.response_model)
        except ValidationError as error:
            reask_messages(messages, text, error)
            raise InvalidReply(error, text) from None
        if data.get("model"):
            usage.model = str(data["model"])
        return parsed, text

    async def aclose(self) -> None:
        """Close the HTTP connections (idempotent); the judge can be used again afterwards."""
        await self._transport.aclose()

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
        self, error: EndpointError, counts: SendCounts, usage: AttemptUsage
    ) -> JudgeTransportError | JudgeRequestError | JudgeContextLengthError:
        attempts = counts.sent  # 0 when no connection could be opened: nothing was sent
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
        failed = f"{counts.sent} request(s)"
        if counts.connect_failures:
            failed += f" and {counts.connect_failures} failed connection attempt(s)"
        if _is_bad_request(error):
            return JudgeRequestError(
                f"the judge endpoint refused the request: {self._describe(error)}",
                attempts=attempts,
                input_tokens=usage.input_tokens,
                output_tokens=usage.output_tokens,
                usage_known=usage.known,
            )
        return JudgeTransportError(
            f"judge endpoint failed after {failed}: {self._describe(error)}",
            attempts=attempts,
            input_tokens=usage.input_tokens,
            output_tokens=usage.output_tokens,
            usage_known=usage.known,
        )

    def _describe(self, error: EndpointError) -> str:
        if error.status in (401, 403):
            return f"HTTP {error.status}: the endpoint refused the API key; check it"
        return self._redact(str(error))

    def _redact(self, text: str) -> str:
        key = self._key
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


def _no_endpoint_with_client(given: set[str], headers: Mapping[str, str] | None) -> None:
    """Refuse endpoint settings beside a client: they would be silently ignored."""
    if headers is not None:
        given.add("default_headers")
    if given:
        raise ConfigError(
            f"OpenAIJudge(client=...) takes no {', '.join(sorted(given))}: configure the "
            "endpoint, credentials and headers on the client you pass"
        )


_NOT_THE_REQUEST = frozenset({401, 403, 408, 409, 429})
"""4xx statuses that do not say the request itself is wrong: the key, a timeout, a conflict or
the rate limit (the last three retried by the openai client's rules)."""


def _is_bad_request(error: EndpointError) -> bool:
    """Whether the endpoint answered with a 4xx saying the request is wrong (400, 404, 422)."""
    status = error.status
    return (
        error.kind == "status"
        and status is not None
        and 400 <= status < 500
        and status not in _NOT_THE_REQUEST
    )


def _is_context_length(error: EndpointError) -> bool:
    """Whether an HTTP 400/413 error says the prompt exceeds the model's context window."""
    if error.kind != "status" or error.status not in {400, 413}:
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


def _under(base_url: str, path: str) -> str:
    """``base_url`` with ``path`` appended to its path, its query (``?api-key=K``) kept.

    ``http://h/v1?api-key=K`` and ``chat/completions`` give
    ``http://h/v1/chat/completions?api-key=K`` (RFC 3986: the query follows the path).
    """
    parts = urlsplit(base_url)
    return urlunsplit(parts._replace(path=f"{parts.path.rstrip('/')}/{path}"))
