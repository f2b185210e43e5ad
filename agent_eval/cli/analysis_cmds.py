"""agent-eval CLI commands: ``calibrate``, ``compare`` and ``stability``.

``calibrate`` reads a run (or an external predictions file) and labels; ``compare`` and
``stability`` score conversations through :mod:`agent_eval.cli.scoring` and then analyse the
results. Each prints rich tables, or a JSON summary with ``--json``, and evaluates the declared
gates (exit code 1 when one fails).
"""

from __future__ import annotations

import json
import logging
from pathlib import Path
from typing import Annotated, Any

import typer
from pydantic import BaseModel

from agent_eval.analysis.calibration import Calibration, calibrate, calibrate_results
from agent_eval.analysis.gates import GateCount
from agent_eval.analysis.labels import labels_from_traces, read_binary_file
from agent_eval.analysis.paired import compare_formatters
from agent_eval.analysis.stability import stability
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
from agent_eval.cli.analysis_runs import (
    labels_for,
    run_compare,
    run_repeats,
    scoring_config,
    variant_counts,
)
from agent_eval.cli.app import app
from agent_eval.errors import ConfigError
from agent_eval.ingest.pipeline import ingest
from agent_eval.report.renderings import read_renderings, tokens_by_formatter
from agent_eval.report.terminal import calibration_table, comparison_tables, stability_tables
from agent_eval.result import MetricResult
from agent_eval.store import load_results

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
        cfg = scoring_config(
            config, paths=tuple(paths), metric=metric, judge=judge, base_url=base_url,
            api_key_env=api_key_env, mode=mode, concurrency=concurrency,
            with_reference=with_reference, references=references, temperature=temperature,
            out=out, format=input_format,
        )  # fmt: skip
        gates = gates_from(config_path(config), gate or [])
        truth = read_binary_file(labels, field=label_field) if labels else None
        run_id, directory, traces, results = run_compare(cfg, names, (cache, no_cache))
        cmp = compare_formatters(
            results,
            labels=labels_for(truth, traces),
            pricing=price_table(config_path(config)).cost,
            rendered_tokens=tokens_by_formatter(read_renderings(directory)),
        )
        (directory / "comparison.json").write_text(cmp.model_dump_json(indent=2), "utf-8")
    _emit(as_json, run_id, directory, name="comparison", model=cmp, table=comparison_tables(cmp))
    exit_on_failed_gates(apply_gates(gates, variant_counts(cmp)))


def _emit(
    as_json: bool, run_id: str, directory: Path, *, name: str, model: BaseModel, table: Any
) -> None:
    if as_json:
        payload = {"run_id": run_id, "out": str(directory), name: model.model_dump(mode="json")}
        write_json(json.dumps(payload, indent=2))
    else:
        out_console.print(table)
        out_console.print(f"results in {directory} (run {run_id})", highlight=False)


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
        cfg = scoring_config(
            config, paths=tuple(paths), formatter=formatter, metric=metric, judge=judge,
            base_url=base_url, api_key_env=api_key_env, mode=mode, concurrency=concurrency,
            with_reference=with_reference, references=references, temperature=temperature,
            out=out, format=input_format,
        )  # fmt: skip
        gates = gates_from(config_path(config), gate or [])
        run_id, directory, results = run_repeats(cfg, repeats, (cache, no_cache))
        st = stability(results)
        (directory / "stability.json").write_text(st.model_dump_json(indent=2), "utf-8")
    _emit(as_json, run_id, directory, name="stability", model=st, table=stability_tables(st))
    unanimous = st.n_conversations - st.n_flipping
    counts = {
        "unanimity": [GateCount(subject="repeats", successes=unanimous, n=st.n_conversations)]
    }
    exit_on_failed_gates(apply_gates(gates, counts))
