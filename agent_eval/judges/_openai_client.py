"""The ``openai`` judge's second transport: an openai client the user built (``openai`` extra).

``OpenAIJudge(model, client=AsyncOpenAI(...))`` (or ``AsyncAzureOpenAI`` with an
``azure_ad_token_provider``, a custom ``http_client`` with proxies or mTLS, default headers,
organization, project) sends the judge's requests through that client instead of the built-in
aiohttp transport (:mod:`agent_eval.judges._openai_http`). What is sent and how replies are read
stay the judge's: the request is the same chat-completions body
(:meth:`~agent_eval.judges._structured.StructuredOutput.request`, passed to
``client.chat.completions.with_raw_response.create``), the reply body is parsed from its raw
bytes as the built-in transport parses it, and failures go through the same retry rules
(:func:`~agent_eval.judges._openai_http.post_with_retries`): the client itself is used with
``max_retries=0`` (``client.with_options``), so every HTTP request is one counted attempt.

A connection error whose cause is a failure to connect (``ConnectError``/``ConnectTimeout`` of
the client's HTTP library) counts as a connect failure, never sent; any other as sent, as the
built-in transport counts them. Only openai's public API is used: ``with_options``,
``chat.completions.with_raw_response.create``, ``close`` and the exception classes
``APIStatusError``, ``APITimeoutError`` and ``APIConnectionError`` with their ``response``.

From the command line and ``agent-eval.toml`` the client comes from a factory the user names
(:mod:`agent_eval.judges._openai_client_judge`, the ``openai-client`` judge kind).
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
from typing import TYPE_CHECKING, Any, cast

from agent_eval.errors import ConfigError
from agent_eval.judges._openai_http import (
    EndpointError,
    Retryable,
    SendCounts,
    json_object,
    post_with_retries,
    status_error,
)

if TYPE_CHECKING:
    from openai import AsyncOpenAI

__all__ = ["EXTRA_HINT", "ClientTransport", "check_client", "require_openai"]

EXTRA_HINT = 'pip install "otel-agent-eval[openai]"'
"""How to install the openai package this transport needs."""

_CONNECT_FAILURES = frozenset({"ConnectError", "ConnectTimeout"})


def require_openai() -> Any:
    """The ``openai`` module.

    Raises:
        ConfigError: openai is not installed (names the extra that brings it).

    """
    try:
        import openai
    except ImportError as exc:
        raise ConfigError(
            f"a judge on your own openai client needs the openai package: {EXTRA_HINT}"
        ) from exc
    return openai


def check_client(client: object, where: str) -> AsyncOpenAI:
    """``client`` when it is an ``openai.AsyncOpenAI`` (``AsyncAzureOpenAI`` is one).

    Raises:
        ConfigError: it is something else (a sync ``OpenAI`` client, say); ``where`` names it.

    """
    openai = require_openai()
    if not isinstance(client, openai.AsyncOpenAI):
        raise ConfigError(
            f"{where} is a {type(client).__module__}.{type(client).__qualname__}, not an "
            "openai.AsyncOpenAI or openai.AsyncAzureOpenAI: build the async client"
        )
    return cast("AsyncOpenAI", client)


class ClientTransport:
    """Sends chat-completions requests through a user's openai client, with the judge's retries.

    Args:
        client: The user's ``openai.AsyncOpenAI`` (or ``AsyncAzureOpenAI``); the user's to
            close, unless :meth:`own` hands it over.
        retries: Retries of a failed request (so ``1 + retries`` attempts at most).

    """

    def __init__(self, client: AsyncOpenAI, *, retries: int) -> None:
        self.retries = retries
        self.source: AsyncOpenAI | None = client
        self._make: Callable[[], AsyncOpenAI] | None = None
        self._client: AsyncOpenAI | None = None
        self._errors = require_openai()

    def own(self, make: Callable[[], AsyncOpenAI]) -> None:
        """Own the client from now on: :meth:`aclose` closes it, the next request calls ``make``.

        How a judge built from a factory keeps one client per event loop.
        """
        self._make = make

    @property
    def url(self) -> str:
        """The client's ``base_url`` (no credentials), ``""`` between a close and a request."""
        return "" if self.source is None else str(self.source.base_url)

    @property
    def api_key(self) -> str | None:
        """The client's API key, to keep it out of error messages (``None`` without one)."""
        key = None if self.source is None else self.source.api_key
        return key or None

    async def post(self, request: dict[str, Any], counts: SendCounts) -> dict[str, Any]:
        """Send ``request`` (keyword arguments of ``chat.completions.create``); the reply body.

        Raises:
            EndpointError: the request failed and retrying did not help, or the 200 reply is
                not a JSON object (as :meth:`ChatTransport.post
                <agent_eval.judges._openai_http.ChatTransport.post>`).

        """
        return await post_with_retries(lambda: self._attempt(request, counts), self.retries)

    def _current(self) -> AsyncOpenAI:
        if self._client is None:
            if self.source is None:
                assert self._make is not None  # only an owned client is ever dropped
                self.source = self._make()
            self._client = self.source.with_options(max_retries=0)
        return self._client

    async def _attempt(self, request: dict[str, Any], counts: SendCounts) -> dict[str, Any]:
        errors = self._errors
        client = self._current()
        try:
            raw = await client.chat.completions.with_raw_response.create(**request)
        except errors.APIStatusError as exc:
            counts.sent += 1
            response = exc.response
            raise status_error(response.status_code, response.content, response.headers) from None
        except errors.APIConnectionError as exc:  # APITimeoutError is one
            raise self._connection_error(exc, counts) from None
        except asyncio.CancelledError:  # in flight when the run was interrupted
            counts.sent += 1
            counts.cancelled += 1
            raise
        counts.sent += 1
        return json_object(raw.content)

    def _connection_error(self, exc: BaseException, counts: SendCounts) -> Retryable:
        cause = exc.__cause__
        if cause is not None and _CONNECT_FAILURES & {k.__name__ for k in type(cause).__mro__}:
            counts.connect_failures += 1
            return Retryable(EndpointError("connect", f"cannot connect: {cause}"))
        counts.sent += 1
        if isinstance(exc, self._errors.APITimeoutError):
            return Retryable(EndpointError("timeout", "no reply within the client's timeout"))
        detail = f"{type(cause).__name__}: {cause}" if cause is not None else str(exc)
        return Retryable(EndpointError("connection", f"connection error: {detail}"))

    async def aclose(self) -> None:
        """Close the client when the transport owns it (idempotent); else leave it open."""
        client, self._client = self._client, None
        if self._make is None:
            return
        source, self.source = self.source, None
        if client is not None:
            await client.close()  # shares its HTTP client with the source
        elif source is not None:
            await source.close()
