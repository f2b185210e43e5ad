"""The HTTP client under the ``openai`` judge: openai's aiohttp client, through its public API.

httpx2's own connection pool rescans every pooled connection on each request, which at 64
concurrent judge calls cost more client CPU than everything else in a call together. openai's
``DefaultAioHttpClient`` (the ``openai[aiohttp]`` extra, a dependency of agent-eval) keeps the
httpx2 interface, so the openai client's retries, backoff, ``Retry-After`` handling and the
event hooks the judge counts requests with work unchanged, while aiohttp moves the bytes.

openai's aiohttp transport maps the *pool* timeout onto aiohttp's ``connect`` timeout, which
also covers opening the connection on a busy event loop; the judge sets no pool timeout (the
pool is never the wait), so only the socket connect and the read time out.

An aiohttp session belongs to the event loop that opened it: the judge makes a fresh client
after :meth:`~agent_eval.judges.openai_judge.OpenAIJudge.aclose`, so one judge can serve one
``asyncio.run`` after another when it is closed at the end of each (``async with judge``).
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Mapping, Sequence
from typing import Any

import httpx2
import openai

__all__ = ["Hook", "judge_http_client", "judge_timeout"]

Hook = Callable[[Any], Coroutine[Any, Any, None]]
"""An httpx2 event hook: ``async def hook(request_or_response) -> None``."""


def judge_timeout(seconds: float) -> httpx2.Timeout:
    """Connect, read and write timeouts of ``seconds``; no pool timeout (see the module doc)."""
    return httpx2.Timeout(seconds, pool=None)


def judge_http_client(event_hooks: Mapping[str, Sequence[Hook]]) -> httpx2.AsyncClient:
    """Openai's aiohttp-backed httpx2 client with ``event_hooks`` (``request``/``response``)."""
    hooks = {name: list(functions) for name, functions in event_hooks.items()}
    client: httpx2.AsyncClient = openai.DefaultAioHttpClient(event_hooks=hooks)
    return client
