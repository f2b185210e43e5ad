"""Client-side rate limits for judge calls: requests per minute and tokens per minute.

:class:`RateLimitedJudge` wraps any :class:`~agent_eval.judges._base.Judge` and waits before
each request until both limits have room, using ``aiolimiter``'s leaky bucket (up to the limit
may go at once, then the rate is held). Tokens per request are estimated before sending as the
``o200k_base`` token count of the messages plus ``max_tokens`` when the request sets one (the
provider counts both against the limit); a request larger than the whole per-minute budget
waits for a full bucket.

The server's own limit is honoured separately: on HTTP 429 the ``openai`` judge's transport
(:mod:`agent_eval.judges._openai_http`) retries after the ``Retry-After`` / ``retry-after-ms``
header (up to 60 s, openai-python's rule), with exponential backoff otherwise. Those retries
happen inside the wrapped judge, so they are not counted against these limits a second time.
"""

from __future__ import annotations

from typing import Any

from aiolimiter import AsyncLimiter

from agent_eval._tokens import count_tokens
from agent_eval.errors import ConfigError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest

__all__ = ["RateLimitedJudge", "estimate_tokens"]


def estimate_tokens(request: JudgeRequest) -> int:
    """Tokens ``request`` will count against a tokens-per-minute limit (an estimate).

    Returns:
        ``o200k_base`` tokens of every message's content plus ``request.max_tokens`` (0 when
        unset); chat framing adds a few tokens per message that are not counted.

    """
    prompt = sum(count_tokens(message.get("content", "")) for message in request.messages)
    return prompt + (request.max_tokens or 0)


def _limiter(limit: float | None, what: str, period_s: float) -> AsyncLimiter | None:
    if limit is None:
        return None
    if limit <= 0:
        raise ConfigError(f"{what} must be a positive number, got {limit!r}; omit it for no limit")
    return AsyncLimiter(limit, period_s)


class RateLimitedJudge(Judge):
    """A judge that holds requests to ``inner`` within request and token rate limits.

    Args:
        inner: The judge to call.
        requests_per_minute: Most requests started per minute; ``None`` for no limit.
        tokens_per_minute: Most estimated tokens (prompt + ``max_tokens``) sent per minute;
            ``None`` for no limit.
        period_s: The window the limits are counted over, seconds (60 for per-minute limits;
            shorter in tests).

    Raises:
        ConfigError: a limit is zero or negative.

    """

    def __init__(
        self,
        inner: Judge,
        requests_per_minute: float | None = None,
        tokens_per_minute: float | None = None,
        *,
        period_s: float = 60.0,
    ) -> None:
        self.inner = inner
        self.model = inner.model
        self._requests = _limiter(requests_per_minute, "requests per minute (--rpm)", period_s)
        self._tokens = _limiter(tokens_per_minute, "tokens per minute (--tpm)", period_s)

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Wait until both limits have room, then ask ``inner``."""
        if self._tokens is not None:
            await self._tokens.acquire(min(estimate_tokens(request), self._tokens.max_rate))
        if self._requests is not None:
            await self._requests.acquire()
        return await self.inner.ask(request)

    async def aclose(self) -> None:
        """Close the inner judge."""
        await self.inner.aclose()
