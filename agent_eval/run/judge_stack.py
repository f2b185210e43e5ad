"""The judge a run uses: the adapter wrapped in rate limits and the judge-call cache.

Order, outermost first: :class:`~agent_eval.run.cache.CachedJudge` (a hit returns at once, without
waiting on a limiter) -> :class:`~agent_eval.run.ratelimit.RateLimitedJudge` -> the adapter (whose
own client retries 429/5xx/timeouts and honours ``Retry-After``).

The cache file defaults to ``DIR/judge-cache.db`` in the run's output directory, or
``runs/judge-cache.db`` when runs go to the default ``runs/RUN_ID`` directories, so running the
same job again (or resuming it) makes no judge call for anything already answered.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval.judges.base import Judge
from agent_eval.run.budget import Budget, BudgetedJudge
from agent_eval.run.cache import CACHE_FILENAME, CachedJudge, CacheMode, JudgeCache
from agent_eval.run.ratelimit import RateLimitedJudge

__all__ = ["DEFAULT_RUNS_DIR", "JudgeStack", "default_cache_path", "wrap_judge"]

DEFAULT_RUNS_DIR = Path("runs")
"""Where runs go when no output directory is given (``runs/RUN_ID``)."""


def default_cache_path(out: Path | None) -> Path:
    """``OUT/judge-cache.db``, or ``runs/judge-cache.db`` when there is no ``--out``."""
    return (out if out is not None else DEFAULT_RUNS_DIR) / CACHE_FILENAME


@dataclass(slots=True)
class JudgeStack:
    """A wrapped judge and the parts a run reports on and closes.

    Attributes:
        judge: The outermost judge; give this to the engine.
        cache: The open cache, ``None`` with ``--no-cache``.
        cached: The cache wrapper (hit and miss counts), ``None`` with ``--no-cache``.

    """

    judge: Judge
    cache: JudgeCache | None = None
    cached: CachedJudge | None = None

    def cache_line(self) -> str | None:
        """``judge cache: 12 hits, 3 calls (runs/judge-cache.db)``, or ``None`` when off."""
        if self.cached is None or self.cache is None:
            return None
        mode = "" if self.cached.mode == "use" else f", {self.cached.mode}"
        return (
            f"judge cache: {self.cached.hits} hits, {self.cached.misses} calls "
            f"({self.cache.path}{mode})"
        )

    async def aclose(self) -> None:
        """Close the judge's connections, then the cache file."""
        await self.judge.aclose()
        if self.cache is not None:
            self.cache.close()


def wrap_judge(
    inner: Judge,
    *,
    cache_mode: CacheMode = "use",
    cache_path: Path | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    parameters: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
) -> JudgeStack:
    """Wrap ``inner`` in rate limits (when set) and the cache (unless ``cache_mode="off"``).

    Args:
        inner: The judge adapter.
        cache_mode: ``use``, ``refresh`` or ``off``.
        cache_path: The cache file (required unless ``off``).
        requests_per_minute: Client-side request limit; ``None`` for none.
        tokens_per_minute: Client-side token limit (estimated); ``None`` for none.
        parameters: Adapter settings that change the bytes sent (e.g. ``{"mode": "tools"}``),
            hashed into cache keys. Never credentials.
        budget: The run's budget, checked before every call that reaches the model (inside
            the cache, so cached replies never count); ``None`` or no limit set: none.

    Raises:
        StoreError: the cache file cannot be opened.
        ConfigError: a rate limit is not positive.

    """
    judge: Judge = inner
    if requests_per_minute is not None or tokens_per_minute is not None:
        judge = RateLimitedJudge(judge, requests_per_minute, tokens_per_minute)
    if budget is not None and budget.limited:
        judge = BudgetedJudge(judge, budget)
    if cache_mode == "off" or cache_path is None:
        return JudgeStack(judge)
    cache = JudgeCache(cache_path)
    cached = CachedJudge(judge, cache, cache_mode, parameters)
    return JudgeStack(cached, cache, cached)
