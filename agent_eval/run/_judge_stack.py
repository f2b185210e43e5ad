"""The judge a run uses: the adapter wrapped in rate limits and the judge-call cache.

Order, outermost first: :class:`~agent_eval.run._cache.CachedJudge` (a hit returns at once, without
waiting on a limiter) -> :class:`~agent_eval.run._ratelimit.RateLimitedJudge` ->
:class:`~agent_eval.run._unreachable.UnreachableGuard` (stops sending once the first calls reached
no endpoint at all) -> the adapter (whose own client retries 429/5xx/timeouts and honours
``Retry-After``).

The cache file defaults to one per user (:func:`default_cache_path`): the platform's user
cache directory (``~/.cache/agent-eval/judge-cache.db`` on Linux, ``~/Library/Caches/agent-eval``
on macOS, the user ``AppData/Local`` cache on Windows, via platformdirs), or the file
named by ``$AGENT_EVAL_CACHE_PATH``; ``--cache-path`` overrides both. Scoring the same traces
again, into any ``--out``, makes no judge call for anything already answered. SQLite in WAL mode
with a busy timeout makes the file safe to share between concurrent processes.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import platformdirs

from agent_eval.judges._base import Judge
from agent_eval.run._budget import Budget, BudgetedJudge
from agent_eval.run._cache import CACHE_FILENAME, CacheBackend, CachedJudge, CacheMode, JudgeCache
from agent_eval.run._call_gate import CallGate, GatedJudge
from agent_eval.run._ratelimit import RateLimitedJudge
from agent_eval.run._unreachable import UnreachableGuard

__all__ = ["CACHE_PATH_ENV", "DEFAULT_RUNS_DIR", "JudgeStack", "default_cache_path", "wrap_judge"]

DEFAULT_RUNS_DIR = Path("runs")
"""Where runs go when no output directory is given (``runs/RUN_ID``)."""


CACHE_PATH_ENV = "AGENT_EVAL_CACHE_PATH"
"""Environment variable naming the judge-call cache file (``--cache-path`` overrides it)."""


def default_cache_path() -> Path:
    """The per-user judge-call cache file: ``$AGENT_EVAL_CACHE_PATH``, else the user cache dir.

    Returns:
        ``$AGENT_EVAL_CACHE_PATH`` (``~`` expanded) when set and not empty, else
        ``platformdirs.user_cache_path("agent-eval") / "judge-cache.db"``.

    """
    given = os.environ.get(CACHE_PATH_ENV, "").strip()
    if given:
        return Path(given).expanduser()
    return platformdirs.user_cache_path("agent-eval", appauthor=False) / CACHE_FILENAME


@dataclass(slots=True)
class JudgeStack:
    """A wrapped judge and the parts a run reports on and closes.

    Attributes:
        judge: The outermost judge; give this to the engine.
        cache: The open cache, ``None`` with ``--no-cache``.
        cached: The cache wrapper (hit and miss counts), ``None`` with ``--no-cache``.
        guard: The unreachable-judge guard around the adapter, ``None`` when not wrapped.

    """

    judge: Judge
    cache: JudgeCache | None = None
    cached: CachedJudge | None = None
    guard: UnreachableGuard | None = None

    def unreachable_line(self) -> str | None:
        """Why the run stopped sending (:meth:`UnreachableGuard.line`), or ``None``."""
        return self.guard.line() if self.guard is not None else None

    def cache_line(self) -> str | None:
        """``judge cache: 12 hits, 3 calls (runs/judge-cache.db)``, or ``None`` when off.

        Hits from entries another endpoint filled, or that name no endpoint, are said after
        the hits: ``judge cache: 7 hits (7 filled by another endpoint:
        http://127.0.0.1:8988/v1), 0 calls (...)``, ``judge cache: 2 hits (2 filled by an
        unknown endpoint), 8 calls (...)``.
        """
        if self.cached is None or self.cache is None:
            return None
        mode = "" if self.cached.mode == "use" else f", {self.cached.mode}"
        said = []
        if self.cached.other_endpoint_hits:
            said.append(
                f"{self.cached.other_endpoint_hits} filled by another endpoint: "
                f"{_endpoints(self.cached)}"
            )
        if self.cached.unknown_endpoint_hits:
            said.append(f"{self.cached.unknown_endpoint_hits} filled by an unknown endpoint")
        other = f" ({'; '.join(said)})" if said else ""
        return (
            f"judge cache: {self.cached.hits} hits{other}, {self.cached.misses} calls "
            f"({self.cache.path}{mode})"
        )

    def other_endpoint_warning(self) -> str | None:
        """A warning when some answers came from entries another or an unknown endpoint filled.

        ``warning: 7 of 7 judge answers came from the cache, filled by another endpoint
        (http://127.0.0.1:8988/v1), not from http://127.0.0.1:1/v1; --refresh-cache asks this
        endpoint again``. An entry that names no endpoint (written by an agent-eval that did
        not keep it) counts as filled by an unknown endpoint: ``warning: 2 of 10 judge answers
        came from the cache, filled by an unknown endpoint (entries an older agent-eval wrote
        name no endpoint), not known to be from http://...; --refresh-cache asks this
        endpoint again``. With both kinds, each says its own: ``... filled by another endpoint
        (8: http://a/v1), not from http://b/v1, or by an unknown one (2: entries an older
        agent-eval wrote name no endpoint), not known to be from it; ...``. ``None``: every
        hit was this endpoint's (or the cache is off).
        """
        cached = self.cached
        if cached is None or not (cached.other_endpoint_hits or cached.unknown_endpoint_hits):
            return None
        asked = cached.hits + cached.misses
        other, unknown = cached.other_endpoint_hits, cached.unknown_endpoint_hits
        unknown_why = "entries an older agent-eval wrote name no endpoint"
        here = cached.endpoint
        if not unknown:
            filled = f"filled by another endpoint ({_endpoints(cached)}), not from {here}"
        elif not other:
            filled = f"filled by an unknown endpoint ({unknown_why}), not known to be from {here}"
        else:
            filled = (
                f"filled by another endpoint ({other}: {_endpoints(cached)}), not from {here}, "
                f"or by an unknown one ({unknown}: {unknown_why}), not known to be from it"
            )
        return (
            f"warning: {other + unknown} of {asked} judge answers came from the cache, "
            f"{filled}; --refresh-cache asks this endpoint again"
        )

    async def aclose(self) -> None:
        """Close the judge's connections, then the cache file."""
        await self.judge.aclose()
        if self.cache is not None:
            self.cache.close()


def _endpoints(cached: CachedJudge, shown: int = 3) -> str:
    """The endpoints that filled the hits, most hits first (``a, b and 2 more``)."""
    names = [name for name, _ in cached.other_endpoints.most_common()]
    more = f" and {len(names) - shown} more" if len(names) > shown else ""
    return ", ".join(names[:shown]) + more


def wrap_judge(
    inner: Judge,
    *,
    cache_mode: CacheMode = "use",
    cache_path: Path | None = None,
    requests_per_minute: float | None = None,
    tokens_per_minute: float | None = None,
    parameters: Mapping[str, Any] | None = None,
    budget: Budget | None = None,
    endpoint: str | None = None,
    gate: CallGate | None = None,
    shared_cache: CacheBackend | None = None,
) -> JudgeStack:
    """Wrap ``inner`` in the unreachable guard, rate limits (when set) and the cache.

    The cache is left out with ``cache_mode="off"``. A worker of a run spread over several
    processes passes the run's ``gate`` instead of the limits and the budget, and its
    ``shared_cache`` instead of a file (:mod:`agent_eval.run.cluster`).

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
        endpoint: The endpoint the judge asks, bare (no credentials, no query: see
            :func:`agent_eval._redaction.bare_endpoint`), kept beside each cache entry so that
            hits filled by another endpoint are counted; ``None``: not said.
        gate: Rate limits, calls in flight and the budget held by the run's authority
            (:class:`~agent_eval.run._call_gate.CallGate`): asked before every call that
            reaches the model, in place of ``requests_per_minute``, ``tokens_per_minute``
            and ``budget`` (which must then be unset).
        shared_cache: The cache every worker of the run reads and writes, in place of the
            file at ``cache_path`` (then not opened); ``JudgeStack.cache`` stays ``None``.

    Raises:
        StoreError: the cache file cannot be opened.
        ConfigError: a rate limit is not positive.
        ValueError: ``gate`` given with local limits or a local budget.

    """
    guard = UnreachableGuard(inner)
    judge: Judge = guard
    limited = requests_per_minute is not None or tokens_per_minute is not None
    if gate is not None:
        if limited or (budget is not None and budget.limited):
            raise ValueError("a gate holds the limits and the budget: give them to the gate")
        judge = GatedJudge(judge, gate)
    if limited:
        judge = RateLimitedJudge(judge, requests_per_minute, tokens_per_minute)
    if budget is not None and budget.limited:
        judge = BudgetedJudge(judge, budget)
    if cache_mode != "off" and shared_cache is not None:
        cached = CachedJudge(judge, shared_cache, cache_mode, parameters, endpoint=endpoint)
        return JudgeStack(cached, None, cached, guard)
    if cache_mode == "off" or cache_path is None:
        return JudgeStack(judge, guard=guard)
    cache = JudgeCache(cache_path)
    cached = CachedJudge(judge, cache, cache_mode, parameters, endpoint=endpoint)
    return JudgeStack(cached, cache, cached, guard)
