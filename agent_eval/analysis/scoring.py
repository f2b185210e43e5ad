"""Scoring for the analyses: the same conversations under several formatters, or K times.

:func:`score_variants` scores every trace once per formatter through the scoring API
(:func:`agent_eval.api.ascore`), all variants under one run id in one output directory and with
one judge, so a judge-call cache wrapped around it is shared by the variants.
:func:`score_repeats` scores every trace K times with one formatter (result ``repeat`` 0..K-1):
repeat 0 may answer from the cache, repeats 1..K-1 always bypass it, so each is a fresh judge
call at the configured temperature. Both also store the renderings the judge saw
(:mod:`agent_eval.report.renderings`) for the HTML report, and keep a unit an interrupt cut
short after its judge calls had sent a request as a row skipped ``interrupted`` with what they
spent (``Engine(keep_interrupted=True)``, as ``score`` does), so that the run's usage counts
every request the endpoint received.

Both read their conversations through a :class:`~agent_eval.run.spool.TraceSpool` (a list is
spooled here; ``compare`` and ``stability`` spool the input as they ingest it), one
conversation at a time per pass: the renderings and ``conversations.jsonl`` in one read, then
each variant's or repeat's engine. So their memory is bounded by the conversations in flight,
not by the input, as ``score``'s is; ``renderings.jsonl`` is written streaming, byte for byte
what it was.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from agent_eval.api import ascore
from agent_eval.formatting.base import Formatter
from agent_eval.formatting.registry import get_formatter
from agent_eval.judges.base import Judge
from agent_eval.metrics.base import Metric
from agent_eval.report.conversations import write_conversations
from agent_eval.report.renderings import write_rendering_items
from agent_eval.result import MetricResult
from agent_eval.run.budget import Budget
from agent_eval.run.cache import CachedJudge, CacheMode, JudgeCache
from agent_eval.run.engine import Engine, utc_now
from agent_eval.run.spool import TraceSpool
from agent_eval.run.store import ResultStore, RunRecord, load_results
from agent_eval.trace import AgentTrace

__all__ = ["Traces", "score_repeats", "score_variants"]

Traces = Sequence[AgentTrace] | TraceSpool
"""The conversations of an analysis run, read once per pass: a list, or a spool."""


@contextmanager
def _spooled(traces: Traces) -> Iterator[TraceSpool]:
    """``traces`` as a spool: itself, or a spool of the list (closed on leaving)."""
    if isinstance(traces, TraceSpool):
        yield traces
        return
    spool = TraceSpool.collect(traces)
    try:
        yield spool
    finally:
        spool.close()


def _write_views(out: Path, spool: TraceSpool, formatters: Sequence[Formatter[Any]]) -> None:
    """``renderings.jsonl`` (every trace with every formatter) and ``conversations.jsonl``.

    One read of the spool renders (the spool keeps each rendering for its later passes) and
    writes the conversations; the renderings are then written from the spool in key order:
    what ``write_renderings(out, render_all(traces, identities))`` writes.
    """

    def rendered() -> Iterator[AgentTrace]:
        for trace in spool:
            for formatter in formatters:
                spool.renderings.render(trace, formatter)
            yield trace

    write_conversations(out, rendered())
    write_rendering_items(out, spool.sorted_renderings([f.identity for f in formatters]))


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
    wrapped in its :class:`~agent_eval.run.budget.BudgetedJudge`).

    Raises:
        ConfigError / UnknownPluginError: A formatter identity is malformed or unknown
            (checked for all before any judge call).

    """
    built = [get_formatter(f) for f in formatters]
    with _spooled(traces) as spool:
        _write_views(out, spool, built)
        config = {
            "metric": metric.id,
            "formatters": [f.identity for f in built],
            "judge_model": judge.model,
            "concurrency": concurrency,
            "max_context_tokens": max_context_tokens,
        }
        with ResultStore(out) as store:  # first record wins: ascore's own is ignored
            store.start_run(
                RunRecord(
                    run_id=run_id,
                    started_at=utc_now(),
                    config=config,
                    argv=tuple(argv),
                    record=dict(record or {}),
                )
            )
        for formatter in built:
            await ascore(
                spool,
                metric=metric,
                formatter=formatter,
                judge=judge,
                reference=dict(references) if references else None,
                concurrency=concurrency,
                max_context_tokens=max_context_tokens,
                out=out,
                run_id=run_id,
                progress=True,
                budget=budget,
                keep_interrupted=True,  # the spend of units cut short stays in the run's usage
            )
        order = {f.identity: i for i, f in enumerate(built)}
        rows = [r for r in load_results(out) if r.run_id == run_id]
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
    with _spooled(traces) as spool:
        _write_views(out, spool, [chosen])
        # every repeat judges the one rendering renderings.jsonl holds (the spool's, seeded)
        renderings = spool.renderings
        with ResultStore(out, exclusive=True) as store:
            for k in range(repeats):
                mode: CacheMode = cache_mode if k == 0 and cache is not None else "off"
                engine = Engine(
                    metric=metric,
                    formatter=chosen,
                    judge=CachedJudge(
                        judge,
                        cache if mode != "off" else None,
                        mode=mode,
                        parameters=cache_parameters,
                    ),
                    run_id=run_id,
                    store=store,
                    concurrency=concurrency,
                    max_context_tokens=max_context_tokens,
                    references=references,
                    repeat=k,
                    progress=True,
                    budget=budget,
                    renderings=renderings,
                    keep_interrupted=True,  # the spend of units cut short stays in the run's usage
                )
                if k == 0:
                    store.start_run(
                        RunRecord(
                            run_id=run_id,
                            started_at=utc_now(),
                            config=engine.identity() | {"repeats": repeats},
                            argv=tuple(argv),
                            record=dict(record or {}),
                        )
                    )
                await engine.run(spool, total=len(spool))
            return store.results(run_id)
