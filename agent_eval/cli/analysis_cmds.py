"""agent-eval CLI commands: ``calibrate``, ``compare`` and ``stability``.

``calibrate`` reads a run (or an external predictions file) and labels; ``compare`` and
``stability`` score conversations through :mod:`agent_eval.cli.scoring` and then analyse the
results. Each prints rich tables, or a JSON summary with ``--json``, and evaluates the declared
gates (exit code 1 when one fails).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from agent_eval.analysis.calibration import Calibration, calibrate, calibrate_results
from agent_eval.analysis.gates import GateCount
from agent_eval.analysis.labels import labels_from_traces, read_binary_file
from agent_eval.cli.analysis_options import (
    apply_gates,
    config_path,
    exit_on_failed_gates,
    gates_from,
    out_console,
    write_json,
)
from agent_eval.cli.app import app
from agent_eval.errors import ConfigError
from agent_eval.ingest.pipeline import ingest
from agent_eval.report.terminal import calibration_table
from agent_eval.result import MetricResult
from agent_eval.store import load_results

__all__ = ["calibrate_cmd"]

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
