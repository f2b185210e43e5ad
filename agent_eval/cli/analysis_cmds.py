"""agent-eval CLI commands: ``calibrate``, ``compare`` and ``stability``.

``calibrate`` reads a run (or an external predictions file) and labels; ``compare`` and
``stability`` score conversations through :mod:`agent_eval.cli.scoring` and then analyse the
results. Each prints rich tables, or a JSON summary with ``--json``, and evaluates the declared
gates (exit code 1 when one fails).
"""

from __future__ import annotations

import asyncio
import json
import logging
from collections.abc import Coroutine
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from agent_eval.analysis.calibration import Calibration, calibrate, calibrate_results
from agent_eval.analysis.gates import GateCount
from agent_eval.analysis.labels import labels_from_traces, read_binary_file
from agent_eval.analysis.paired import VariantComparison, compare_formatters
from agent_eval.analysis.scoring import score_repeats, score_variants
from agent_eval.analysis.stability import stability
from agent_eval.cache import CACHE_FILENAME, CachedJudge, JudgeCache
from agent_eval.cli.analysis_options import (
    apply_gates,
    config_path,
    exit_on_failed_gates,
    gates_from,
    out_console,
    price_table,
    usage_errors,
    write_json,
)
from agent_eval.cli.app import app
from agent_eval.cli.score_cmds import HOW_TO_CONFIGURE, build_judge, judge_model
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config
from agent_eval.engine import new_run_id
from agent_eval.errors import ConfigError, InputError, JudgeNotConfiguredError
from agent_eval.ingest.pipeline import ingest
from agent_eval.judges.base import Judge
from agent_eval.metrics.base import Metric, metrics
from agent_eval.references import load_references
from agent_eval.report.terminal import calibration_table, comparison_tables, stability_tables
from agent_eval.result import MetricResult
from agent_eval.store import load_results
from agent_eval.trace import AgentTrace

__all__ = ["calibrate_cmd", "compare_cmd", "stability_cmd"]

ConfigOpt = Annotated[Path | None, typer.Option("--config", help="agent-eval.toml to read.")]
GateOpt = Annotated[
    list[str] | None,
    typer.Option("--gate", help="[NAME=]STATISTIC>=THRESHOLD/ITEMS, e.g. accuracy>=0.8/50."),
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print a JSON summary on stdout.")]
LabelsOpt = Annotated[
    Path | None, typer.Option("--labels", help="JSONL/CSV of {conversation_id, label}.")
]
LabelFieldOpt = Annotated[
    str | None, typer.Option("--label-field", help="Column holding the label (default: auto).")
]


def _metric_matches(row_metric: str, wanted: str | None) -> bool:
    if wanted is None:
        return True
    return row_metric == wanted if "@" in wanted else row_metric.partition("@")[0] == wanted


def _select(
    results: list[MetricResult], metric: str | None, formatter: str | None
) -> list[MetricResult]:
    rows = [
        r for r in results if _metric_matches(r.metric, metric) and formatter in (None, r.formatter)
    ]
    if results and not rows:
        have = sorted({f"{r.metric} {r.formatter}" for r in results})
        raise ConfigError(f"no results match --metric/--formatter; the run has: {'; '.join(have)}")
    return rows


def _labels(labels: Path | None, inputs: list[Path] | None, field: str | None) -> dict[str, int]:
    if labels is not None:
        return read_binary_file(labels, field=field)
    if inputs:
        found = labels_from_traces(ingest(inputs), field=field)
        if found:
            return found
        raise ConfigError("the --inputs traces carry no labels; give --labels FILE")
    raise ConfigError(
        "calibrate needs labels: --labels FILE, or --inputs PATH with labelled traces"
    )


def _show(cal: Calibration, as_json: bool) -> None:
    if as_json:
        write_json(cal.model_dump_json(indent=2))
    else:
        out_console.print(calibration_table(cal))


@app.command("calibrate")
def calibrate_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    run: Annotated[
        Path | None, typer.Argument(help="Run directory, results.db or results.jsonl.")
    ] = None,
    labels: LabelsOpt = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions", help="External verdicts: JSONL/CSV {conversation_id, verdict}."
        ),
    ] = None,
    inputs: Annotated[
        list[Path] | None,
        typer.Option("--inputs", help="Traces carrying labels (e.g. tau-bench rewards)."),
    ] = None,
    label_field: LabelFieldOpt = None,
    prediction_field: Annotated[
        str | None, typer.Option("--prediction-field", help="Column holding the verdict.")
    ] = None,
    metric: Annotated[str | None, typer.Option("--metric", help="Only this metric.")] = None,
    formatter: Annotated[
        str | None, typer.Option("--formatter", help="Only this formatter identity.")
    ] = None,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Agreement of judge verdicts with labels: accuracy, Cohen's kappa [95% CI], confusion."""
    with usage_errors():
        gates = gates_from(config_path(config), gate or [])
        truth = _labels(labels, inputs, label_field)
        if predictions is not None:
            if run is not None:
                raise ConfigError("give either a RUN or --predictions FILE, not both")
            cal = calibrate(read_binary_file(predictions, field=prediction_field), truth)
        elif run is not None:
            cal = calibrate_results(_select(load_results(run), metric, formatter), truth)
        else:
            raise ConfigError("calibrate needs a RUN directory or --predictions FILE")
        _show(cal, as_json)
        counts = {"accuracy": [GateCount(subject="labels", successes=cal.n_agree, n=cal.n)]}
        exit_on_failed_gates(apply_gates(gates, counts))


# -- compare and stability: scoring options shared with `agent-eval score` -----------------

PathsArg = Annotated[list[str], typer.Argument(help="Inputs: files, directories, globs.")]
MetricOpt = Annotated[str | None, typer.Option("--metric", help="Metric (goal_accuracy).")]
JudgeOpt = Annotated[str | None, typer.Option("--judge", help="Judge model name.")]
BaseUrlOpt = Annotated[str | None, typer.Option("--base-url", help="OpenAI-compatible URL.")]
KeyEnvOpt = Annotated[str | None, typer.Option("--api-key-env", help="Env var with the key.")]
ModeOpt = Annotated[
    str | None, typer.Option("--mode", help="Structured output: tools | json_schema | json.")
]
ConcurrencyOpt = Annotated[int | None, typer.Option("--concurrency")]
RefOpt = Annotated[bool | None, typer.Option("--with-reference/--without-reference")]
RefsOpt = Annotated[Path | None, typer.Option("--references", help="JSONL/CSV references.")]
TempOpt = Annotated[float | None, typer.Option("--temperature", help="Judge temperature.")]
OutOpt = Annotated[Path | None, typer.Option("--out", help="Output dir (runs/RUN_ID).")]
CacheOpt = Annotated[
    Path | None, typer.Option("--cache", help="Judge-call cache file (OUT/judge-cache.db).")
]
NoCacheOpt = Annotated[bool, typer.Option("--no-cache", help="Call the judge for everything.")]
FormatOpt = Annotated[str | None, typer.Option("--format", help="Input container, or auto.")]


def _scoring_config(config: Path | None, **overrides: Any) -> ScoreConfig:
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


def _variant_counts(cmp: VariantComparison) -> dict[str, list[GateCount]]:
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


def _cache(out: Path, cache: Path | None, no_cache: bool) -> JudgeCache | None:
    return None if no_cache else JudgeCache(cache or out / CACHE_FILENAME)


def _run_dir(cfg: ScoreConfig) -> tuple[str, Path]:
    run_id = new_run_id()
    return run_id, cfg.out or Path("runs") / run_id


def _labels_for(labels: dict[str, int] | None, traces: list[AgentTrace]) -> dict[str, int] | None:
    return labels if labels is not None else (labels_from_traces(traces) or None)


async def _closing(
    judge: Judge, work: Coroutine[Any, Any, list[MetricResult]]
) -> list[MetricResult]:
    try:
        return await work
    finally:
        await judge.aclose()


def _run_compare(
    cfg: ScoreConfig, formatters: list[str], cache_opts: tuple[Path | None, bool]
) -> tuple[str, Path, list[AgentTrace], list[MetricResult]]:
    traces = _traces(cfg)
    run_id, out = _run_dir(cfg)
    references = load_references(cfg.references) if cfg.references else None
    inner = _judge(cfg)
    cache = _cache(out, *cache_opts)
    judge = CachedJudge(inner, cache, parameters={"mode": cfg.mode}) if cache is not None else inner
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


@app.command("compare")
def compare_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    paths: PathsArg,
    formatters: Annotated[
        str, typer.Option("--formatters", help="Comma-separated formatter identities, >= 2.")
    ],
    metric: MetricOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    mode: ModeOpt = None,
    concurrency: ConcurrencyOpt = None,
    with_reference: RefOpt = None,
    references: RefsOpt = None,
    temperature: TempOpt = None,
    labels: LabelsOpt = None,
    label_field: LabelFieldOpt = None,
    out: OutOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    input_format: FormatOpt = None,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Score the same conversations under each formatter and compare the verdicts pairwise."""
    logging.getLogger("instructor").setLevel(logging.CRITICAL)  # failures become result rows
    with usage_errors():
        names = [f.strip() for f in formatters.split(",") if f.strip()]
        if len(names) < 2 or len(set(names)) != len(names):
            raise ConfigError(f"--formatters needs two or more distinct formatters, got {names}")
        cfg = _scoring_config(
            config, paths=tuple(paths), metric=metric, judge=judge, base_url=base_url,
            api_key_env=api_key_env, mode=mode, concurrency=concurrency,
            with_reference=with_reference, references=references, temperature=temperature,
            out=out, format=input_format,
        )  # fmt: skip
        gates = gates_from(config_path(config), gate or [])
        truth = read_binary_file(labels, field=label_field) if labels else None
        run_id, directory, traces, results = _run_compare(cfg, names, (cache, no_cache))
        cmp = compare_formatters(
            results,
            labels=_labels_for(truth, traces),
            pricing=price_table(config_path(config)).cost,
        )
        (directory / "comparison.json").write_text(cmp.model_dump_json(indent=2), "utf-8")
    _emit(as_json, run_id, directory, name="comparison", model=cmp, table=comparison_tables(cmp))
    exit_on_failed_gates(apply_gates(gates, _variant_counts(cmp)))


def _emit(
    as_json: bool, run_id: str, directory: Path, *, name: str, model: BaseModel, table: Any
) -> None:
    if as_json:
        payload = {"run_id": run_id, "out": str(directory), name: model.model_dump(mode="json")}
        write_json(json.dumps(payload, indent=2))
    else:
        out_console.print(table)
        out_console.print(f"results in {directory} (run {run_id})", highlight=False)


def _run_repeats(
    cfg: ScoreConfig, repeats: int, cache_opts: tuple[Path | None, bool]
) -> tuple[str, Path, list[MetricResult]]:
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


@app.command("stability")
def stability_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    paths: PathsArg,
    repeats: Annotated[int, typer.Option("--repeats", min=2, help="K judge runs (>= 2).")] = 5,
    formatter: Annotated[
        str | None, typer.Option("--formatter", help="Formatter NAME@V (ragas-pretty@1).")
    ] = None,
    metric: MetricOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: KeyEnvOpt = None,
    mode: ModeOpt = None,
    concurrency: ConcurrencyOpt = None,
    with_reference: RefOpt = None,
    references: RefsOpt = None,
    temperature: TempOpt = None,
    out: OutOpt = None,
    cache: CacheOpt = None,
    no_cache: NoCacheOpt = False,
    input_format: FormatOpt = None,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Judge each conversation K times (cache bypassed for repeats) and measure agreement."""
    logging.getLogger("instructor").setLevel(logging.CRITICAL)  # failures become result rows
    with usage_errors():
        cfg = _scoring_config(
            config, paths=tuple(paths), formatter=formatter, metric=metric, judge=judge,
            base_url=base_url, api_key_env=api_key_env, mode=mode, concurrency=concurrency,
            with_reference=with_reference, references=references, temperature=temperature,
            out=out, format=input_format,
        )  # fmt: skip
        gates = gates_from(config_path(config), gate or [])
        run_id, directory, results = _run_repeats(cfg, repeats, (cache, no_cache))
        st = stability(results)
        (directory / "stability.json").write_text(st.model_dump_json(indent=2), "utf-8")
    _emit(as_json, run_id, directory, name="stability", model=st, table=stability_tables(st))
    unanimous = st.n_conversations - st.n_flipping
    counts = {
        "unanimity": [GateCount(subject="repeats", successes=unanimous, n=st.n_conversations)]
    }
    exit_on_failed_gates(apply_gates(gates, counts))
