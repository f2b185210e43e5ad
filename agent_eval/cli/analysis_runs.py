"""The scoring side of ``compare`` and ``stability``: configuration, judge, cache, runs.

Settings come from the ``[score]`` table of ``agent-eval.toml`` and the flags, exactly as for
``agent-eval score`` (:func:`agent_eval.config.load_config`); the judge is built the same way
(:func:`agent_eval.cli.score_cmds.build_judge`). The judge-call cache lives in
``OUT/judge-cache.db`` unless ``--cache`` names another file; ``--no-cache`` bypasses it.
"""

from __future__ import annotations

import asyncio
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

from agent_eval.analysis.gates import GateCount
from agent_eval.analysis.labels import labels_from_traces
from agent_eval.analysis.paired import VariantComparison
from agent_eval.analysis.scoring import score_repeats, score_variants
from agent_eval.cache import CACHE_FILENAME, CachedJudge, JudgeCache
from agent_eval.cli.score_cmds import HOW_TO_CONFIGURE, build_judge, judge_model
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config
from agent_eval.engine import new_run_id
from agent_eval.errors import InputError, JudgeNotConfiguredError
from agent_eval.ingest.pipeline import ingest
from agent_eval.judges.base import Judge
from agent_eval.metrics.base import Metric, metrics
from agent_eval.references import load_references
from agent_eval.result import MetricResult
from agent_eval.trace import AgentTrace

__all__ = ["labels_for", "run_compare", "run_repeats", "scoring_config", "variant_counts"]


def scoring_config(config: Path | None, **overrides: Any) -> ScoreConfig:
    """The ``[score]`` settings overridden by the flags; inputs are required.

    Raises:
        ConfigError: An invalid setting. InputError: No input paths.

    """
    cfg = load_config(config, **overrides)
    if not cfg.paths:
        raise InputError("no input: give PATH... (files, directories or globs)")
    return cfg


def _traces(cfg: ScoreConfig) -> list[AgentTrace]:
    traces = list(ingest(cfg.paths, format=cfg.format))
    if not traces:
        raise InputError(f"no conversations found in {', '.join(cfg.paths)}")
    return traces


def _metric(cfg: ScoreConfig) -> Metric:
    options: dict[str, Any] = {"temperature": cfg.temperature, "seed": cfg.seed}
    if cfg.with_reference:
        options["with_reference"] = True
    return metrics.get(cfg.metric)(**options)


def _judge(cfg: ScoreConfig) -> Judge:
    model = judge_model(cfg)
    if model is None:
        raise JudgeNotConfiguredError(HOW_TO_CONFIGURE.format(default=DEFAULT_JUDGE))
    return build_judge(cfg, model)


def _cache(out: Path, cache: Path | None, no_cache: bool) -> JudgeCache | None:
    return None if no_cache else JudgeCache(cache or out / CACHE_FILENAME)


def _run_dir(cfg: ScoreConfig) -> tuple[str, Path]:
    run_id = new_run_id()
    return run_id, cfg.out or Path("runs") / run_id


async def _closing(
    judge: Judge, work: Coroutine[Any, Any, list[MetricResult]]
) -> list[MetricResult]:
    try:
        return await work
    finally:
        await judge.aclose()


def variant_counts(cmp: VariantComparison) -> dict[str, list[GateCount]]:
    """Gate counts of a comparison: mean score and label accuracy by variant, agreement by pair."""
    counts: dict[str, list[GateCount]] = {
        "mean_score": [
            GateCount(subject=v.variant, successes=v.n_pass, n=v.n_ok) for v in cmp.variants
        ],
        "agreement": [
            GateCount(subject=f"{p.variant_a} vs {p.variant_b}", successes=p.n_agree, n=p.n_paired)
            for p in cmp.pairs
        ],
    }
    if any(v.n_labelled for v in cmp.variants):
        counts["accuracy"] = [
            GateCount(subject=v.variant, successes=v.label_agree, n=v.n_labelled)
            for v in cmp.variants
        ]
    return counts


def labels_for(labels: dict[str, int] | None, traces: list[AgentTrace]) -> dict[str, int] | None:
    """The labels given, else those the traces carry, else ``None``."""
    return labels if labels is not None else (labels_from_traces(traces) or None)


def run_compare(
    cfg: ScoreConfig, formatters: list[str], cache_opts: tuple[Path | None, bool]
) -> tuple[str, Path, list[AgentTrace], list[MetricResult]]:
    """Score ``cfg.paths`` under each formatter, sharing one cached judge.

    Args:
        cfg: The scoring settings.
        formatters: Formatter identities, in report order.
        cache_opts: ``(--cache path or None, --no-cache)``.

    Returns:
        ``(run_id, output directory, traces, result rows)``.

    Raises:
        AgentEvalError: Input, configuration or store errors (a judge failure is a row).

    """
    traces = _traces(cfg)
    run_id, out = _run_dir(cfg)
    references = load_references(cfg.references) if cfg.references else None
    inner = _judge(cfg)
    cache = _cache(out, *cache_opts)
    judge = inner if cache is None else CachedJudge(inner, cache, parameters={"mode": cfg.mode})
    work = score_variants(
        traces, formatters=formatters, metric=_metric(cfg), judge=judge, out=out,
        run_id=run_id, concurrency=cfg.concurrency, max_context_tokens=cfg.max_context_tokens,
        references=references,
    )  # fmt: skip
    try:
        return run_id, out, traces, asyncio.run(_closing(inner, work))
    finally:
        if cache is not None:
            cache.close()


def run_repeats(
    cfg: ScoreConfig, repeats: int, cache_opts: tuple[Path | None, bool]
) -> tuple[str, Path, list[MetricResult]]:
    """Score ``cfg.paths`` ``repeats`` times with ``cfg.formatter`` (repeats 1.. uncached).

    Returns:
        ``(run_id, output directory, result rows)``.

    Raises:
        AgentEvalError: Input, configuration or store errors (a judge failure is a row).

    """
    traces = _traces(cfg)
    run_id, out = _run_dir(cfg)
    references = load_references(cfg.references) if cfg.references else None
    inner = _judge(cfg)
    cache = _cache(out, *cache_opts)
    work = score_repeats(
        traces, repeats=repeats, formatter=cfg.formatter, metric=_metric(cfg), judge=inner,
        cache=cache, out=out, run_id=run_id, concurrency=cfg.concurrency,
        max_context_tokens=cfg.max_context_tokens, references=references,
    )  # fmt: skip
    try:
        return run_id, out, asyncio.run(_closing(inner, work))
    finally:
        if cache is not None:
            cache.close()
