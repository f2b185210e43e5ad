"""Scoring for the analyses: the same conversations under several formatters, or K times.

:func:`score_variants` scores every trace once per formatter through the run session
(:class:`~agent_eval.run._session.RunSession`, as ``score`` and the API do), all variants
under one run id in one output directory and with one judge, so a judge-call cache wrapped
around it is shared by the variants.
:func:`score_repeats` scores every trace K times with one formatter (result ``repeat`` 0..K-1):
repeat 0 may answer from the cache, repeats 1..K-1 always bypass it, so each is a fresh judge
call at the configured temperature. Both also store the renderings the judge saw
(:mod:`agent_eval.run._artifacts`) for the HTML report, and keep a unit an interrupt cut
short after its judge calls had sent a request as a row skipped ``interrupted`` with what they
spent (``Engine(keep_interrupted=True)``, as ``score`` does), so that the run's usage counts
every request the endpoint received.

Both read their conversations through a :class:`~agent_eval.run._spool.TraceSpool` (a list is
spooled here; ``compare`` and ``stability`` spool the input as they ingest it), one
conversation at a time per pass: the renderings and ``conversations.jsonl`` in one read, then
each variant's or repeat's engine. So their memory is bounded by the conversations in flight,
not by the input, as ``score``'s is; ``renderings.jsonl`` is written streaming, byte for byte
what it was.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

from rich.console import Console

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.config import ScoreConfig
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import Metric
from agent_eval.run._budget import Budget
from agent_eval.run._cache import CachedJudge, CacheMode, JudgeCache
from agent_eval.run._session import RunSession, SessionHooks
from agent_eval.run._spool import TraceSpool

__all__ = ["Traces", "score_repeats", "score_variants"]

Traces = Sequence[AgentTrace] | TraceSpool
"""The conversations of an analysis run, read once per pass: a list, or a spool."""


async def score_variants(
    traces: Traces,
    *,
    formatters: Sequence[str],
    metric: Metric,
    judge: Judge,
    out: Path,
    run_id: str,
    concurrency: int,
    max_context_tokens: int | None,
    references: Mapping[str, str] | None = None,
    argv: Sequence[str] = (),
    budget: Budget | None = None,
    record: Mapping[str, Any] | None = None,
) -> list[MetricResult]:
    """Score ``traces`` under each formatter; returns this run's rows, formatters in order given.

    ``argv`` (the command line, secrets already removed) and ``record`` (the reproducibility
    record) are stored with the run; ``budget`` is shared by the variants (the judge must be
    wrapped in its :class:`~agent_eval.run._budget.BudgetedJudge`).

    Raises:
        ConfigError / UnknownPluginError: A formatter identity is malformed or unknown
            (checked for all before any judge call).

    """
    built = [get_formatter(f) for f in formatters]
    session = RunSession(
        _settings(out, concurrency, max_context_tokens),
        judge=judge,
        model=judge.model,
        metrics=[metric],
        formatter=built[0],
        formatters=built,
        argv=argv,
        hooks=SessionHooks(progress=_stderr()),
        budget=budget,
        run_id=run_id,
        record=record,
        config=lambda engines: {
            "metric": metric.id,
            "formatters": [f.identity for f in built],
            "judge_model": judge.model,
            "concurrency": concurrency,
            "max_context_tokens": max_context_tokens,
        },
        close_judges=False,
    )
    try:
        session.read(traces, references=dict(references or {}))
        rows = session.results(await session.run())
    finally:
        if not isinstance(traces, TraceSpool):
            session.close()
    order = {f.identity: i for i, f in enumerate(built)}
    return sorted(rows, key=lambda r: order.get(r.formatter, len(order)))  # stable: as given


async def score_repeats(
    traces: Traces,
    *,
    repeats: int,
    formatter: str,
    metric: Metric,
    judge: Judge,
    cache: JudgeCache | None,
    out: Path,
    run_id: str,
    concurrency: int,
    max_context_tokens: int | None,
    references: Mapping[str, str] | None = None,
    cache_mode: CacheMode = "use",
    argv: Sequence[str] = (),
    budget: Budget | None = None,
    record: Mapping[str, Any] | None = None,
    cache_parameters: Mapping[str, Any] | None = None,
) -> list[MetricResult]:
    """Score ``traces`` ``repeats`` times with one formatter; returns this run's rows.

    Args:
        traces: The conversations (a list, or a spool read once per repeat).
        repeats: K, at least 2.
        formatter: The formatter identity, ``name@version[params]``.
        metric: The metric (its temperature is the judge's sampling temperature).
        judge: The uncached judge; the cache (when given) is put around it for repeat 0 only.
        cache: The judge-call cache, or ``None`` to bypass it for every repeat.
        out: Output directory (results store and renderings).
        run_id: The run id all repeats share.
        concurrency: Conversations in flight at once, per repeat.
        max_context_tokens: Skip longer prompts (``None``: never).
        references: Reference goals by conversation id, for the reference variant.
        cache_mode: How repeat 0 uses the cache: ``use`` or ``refresh`` (``off`` = no cache).
        argv: The command line (secrets already removed), recorded with the run.
        budget: The run's budget, shared by the repeats (``judge`` wraps its BudgetedJudge).
        record: The reproducibility record stored with the run.
        cache_parameters: Settings hashed into the cache key besides the request (the
            structured-output mode, as ``score`` and ``compare`` pass it), so that repeat 0
            shares their cache entries.

    Raises:
        ValueError: ``repeats`` is below 2.

    """
    if repeats < 2:
        raise ValueError(f"stability needs at least 2 repeats, got {repeats}")
    chosen = get_formatter(formatter)

    def repeat_judge(k: int, wrapped: Judge) -> Judge:
        mode: CacheMode = cache_mode if k == 0 and cache is not None else "off"
        return CachedJudge(
            wrapped, cache if mode != "off" else None, mode=mode, parameters=cache_parameters
        )

    session = RunSession(
        _settings(out, concurrency, max_context_tokens),
        judge=judge,
        model=judge.model,
        metrics=[metric],
        formatter=chosen,
        argv=argv,
        hooks=SessionHooks(progress=_stderr()),
        budget=budget,
        run_id=run_id,
        record=record,
        repeats=repeats,
        repeat_judge=repeat_judge,
        config=lambda engines: engines[0].identity() | {"repeats": repeats},
        close_judges=False,
    )
    try:
        session.read(traces, references=dict(references or {}))
        return session.results(await session.run())
    finally:
        if not isinstance(traces, TraceSpool):
            session.close()


def _settings(out: Path, concurrency: int, max_context_tokens: int | None) -> ScoreConfig:
    """The session settings of an analysis run: its judge comes wrapped (cache, limits)."""
    return ScoreConfig(
        out=out, concurrency=concurrency, max_context_tokens=max_context_tokens, cache="off"
    )


def _stderr() -> Console:
    return Console(stderr=True)
