"""The HTTP client under the ``openai`` judge: httpx's API over an aiohttp transport.

httpx's own connection pool (httpcore) rescans every pooled connection on each request, which
at 64 concurrent judge calls cost more client CPU than everything else in a call together.
openai's ``DefaultAioHttpClient`` (the ``openai[aiohttp]`` extra: ``httpx-aiohttp``) keeps the
httpx interface, so the openai client's retries, backoff, ``Retry-After`` handling and httpx
event hooks work unchanged, while aiohttp moves the bytes. Without the extra installed, the
judge falls back to openai's default httpx client.

Two differences from httpx are handled here:

- an aiohttp session belongs to the event loop that made it, so the transport keeps one
  session per loop (a judge reused by two ``asyncio.run`` calls would otherwise fail);
- httpx-aiohttp maps httpx's *pool* timeout onto aiohttp's ``connect`` timeout, which also
  covers opening the connection on a busy event loop; the judge sets no pool timeout (its
  pool of 1000 connections is never the wait), so only the socket connect and read time out;
- httpx-aiohttp (0.1.x) reports a refused or unresolvable connection
  (``aiohttp.ClientConnectorError``) as ``httpx.ConnectTimeout``, because its exception table
  matches the base class first; the transport turns it back into ``httpx.ConnectError``, so a
  dead endpoint reads as "Connection error", not "Request timed out".
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

import httpx
import openai

__all__ = ["judge_http_client", "judge_timeout"]

Hook = Callable[[Any], Coroutine[Any, Any, None]]


def judge_timeout(seconds: float) -> httpx.Timeout:
    """Connect, read and write timeouts of ``seconds``; no pool timeout (see the module doc)."""
    return httpx.Timeout(seconds, pool=None)


def judge_http_client(event_hooks: Mapping[str, Sequence[Hook]]) -> httpx.AsyncClient:
    """An httpx client for the openai judge: aiohttp transport when installed, else httpx."""
    hooks = {name: list(functions) for name, functions in event_hooks.items()}
    try:
        return _aiohttp_client(hooks)
    except ImportError:
        return openai.DefaultAsyncHttpxClient(event_hooks=hooks)


def _aiohttp_client(hooks: dict[str, list[Hook]]) -> httpx.AsyncClient:
    from aiohttp import ClientConnectorError, ClientSession
    from httpx_aiohttp.transport import AiohttpTransport

    class PerLoopAiohttpTransport(AiohttpTransport):
        """httpx-aiohttp's transport with one aiohttp session per running event loop."""

        _loop: asyncio.AbstractEventLoop | None = None

        async def handle_async_request(self, request: httpx.Request) -> httpx.Response:
            loop = asyncio.get_running_loop()
            if self._loop is not loop:
                if isinstance(self.client, ClientSession) and self._loop is not None:
                    self.client.detach()  # its loop is gone: nothing left to close
                    self.client = None
                self._loop = loop
            try:
                return await super().handle_async_request(request)
            except httpx.ConnectTimeout as exc:
                if isinstance(exc.__cause__, ClientConnectorError):
                    raise httpx.ConnectError(str(exc), request=request) from exc.__cause__
                raise

    class JudgeAioHttpClient(openai.DefaultAioHttpClient):
        def _init_transport(self, *args: Any, **kwargs: Any) -> httpx.AsyncBaseTransport:
            kwargs.pop("transport", None)
            return PerLoopAiohttpTransport(*args, **kwargs)

    return JudgeAioHttpClient(event_hooks=hooks)
