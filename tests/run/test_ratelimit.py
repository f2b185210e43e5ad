"""Request and token rate limits around a judge (aiolimiter)."""

from __future__ import annotations

import asyncio

import pytest

from agent_eval._tokens import count_tokens
from agent_eval.errors import ConfigError
from agent_eval.run._ratelimit import RateLimitedJudge, estimate_tokens

from .fakes import CountingJudge, request


async def test_requests_per_period_are_held_to_the_limit() -> None:
    inner = CountingJudge()
    judge = RateLimitedJudge(inner, requests_per_minute=5, period_s=0.5)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.gather(*(judge.ask(request(str(i))) for i in range(15)))
    elapsed = loop.time() - start
    # Leaky bucket: a burst of 5, then 10 per second, so the k-th start (1-based) is never
    # before (k - 5) / 10 s; 15 requests take at least 1 s (without a limit, no time at all).
    started = sorted(t - start for t in inner.started)
    for k, at in enumerate(started, 1):
        assert at >= (k - 5) / 10 - 0.01, (k, at)
    assert 0.99 <= elapsed < 10


async def test_tokens_per_period_are_held_to_the_limit() -> None:
    inner = CountingJudge()
    text = "word " * 50
    cost = estimate_tokens(request(text))
    judge = RateLimitedJudge(inner, tokens_per_minute=cost * 2, period_s=0.4)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.gather(*(judge.ask(request(text)) for _ in range(6)))
    # 2 at once, then 4 more at 5 per second: at least 0.8 s.
    assert 0.79 <= loop.time() - start < 10


def test_token_estimate_counts_messages_and_max_tokens() -> None:
    req = request("hello there", max_tokens=100)
    assert estimate_tokens(req) == count_tokens("judge") + count_tokens("hello there") + 100
    assert estimate_tokens(request("hello there")) == estimate_tokens(req) - 100


async def test_a_request_larger_than_the_budget_still_goes() -> None:
    judge = RateLimitedJudge(CountingJudge(), tokens_per_minute=3, period_s=0.1)
    reply = await asyncio.wait_for(judge.ask(request("many many words " * 10)), 2)
    assert reply.output.verdict == "1"


async def test_no_limits_passes_straight_through() -> None:
    inner = CountingJudge()
    judge = RateLimitedJudge(inner)
    await asyncio.gather(*(judge.ask(request(str(i))) for i in range(50)))
    assert len(inner.calls) == 50 and judge.model == inner.model


@pytest.mark.parametrize("kwargs", [{"requests_per_minute": 0}, {"tokens_per_minute": -5}])
def test_non_positive_limits_are_config_errors(kwargs: dict[str, float]) -> None:
    with pytest.raises(ConfigError, match="positive"):
        RateLimitedJudge(CountingJudge(), **kwargs)


async def test_retry_after_is_honoured_through_the_rate_limited_openai_judge(fake_server) -> None:
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.testing import HttpError, Structured

    fake_server.add_rule(HttpError(429, retry_after=1.0), times=1)
    fake_server.add_rule(Structured({"reason": "ok", "verdict": "0"}), schema="Verdict")
    inner = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-x")
    judge = RateLimitedJudge(inner, requests_per_minute=600)
    loop = asyncio.get_running_loop()
    start = loop.time()
    reply = await judge.ask(request("rate limited once"))
    elapsed = loop.time() - start
    await judge.aclose()
    assert reply.output.verdict == "0" and reply.attempts == 2
    assert [r.status for r in fake_server.requests] == [429, 200]
    gap = fake_server.requests[1].timestamp - fake_server.requests[0].timestamp
    assert gap >= 0.95 and elapsed >= 0.95  # waited as the server asked, not openai's ~0.5 s
