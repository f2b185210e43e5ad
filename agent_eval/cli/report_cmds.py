"""agent-eval CLI command ``report``: one self-contained HTML file for a run (or two).

The report modules (matplotlib, statistics) are imported when the command runs.
"""

from __future__ import annotations

import shlex
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_eval.cli.analysis_options import (
    config_path,
    load_run_results,
    out_console,
    price_table,
    usage_errors,
)
from agent_eval.cli.app import app
from agent_eval.redaction import redact_text
from agent_eval.report.renderings import RenderingKey, read_renderings, render_all

if TYPE_CHECKING:
    from agent_eval.report.model import RunInfo
    from agent_eval.result import MetricResult
    from agent_eval.trace import AgentTrace

__all__ = ["report_cmd"]


def _run_dir(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _runs(path: Path) -> list[RunInfo]:
    """The run records of ``path``'s results store (none for a bare JSONL file)."""
    from agent_eval.report.model import RunInfo
    from agent_eval.run.store import DB_NAME, ResultStore

    directory = _run_dir(path)
    if not (directory / DB_NAME).is_file():
        return []
    with ResultStore(directory) as store:
        return [
            RunInfo(
                run_id=r.run_id, started_at=r.started_at, command=redact_text(shlex.join(r.argv))
            )
            for r in store.runs()
        ]


def _rerender(
    traces: list[AgentTrace], results: list[MetricResult], have: dict[RenderingKey, str]
) -> dict[RenderingKey, str]:
    wanted = {(r.conversation_id, r.formatter) for r in results} - set(have)
    formatters = sorted({f for _, f in wanted})
    ids = {c for c, _ in wanted}
    fresh = render_all([t for t in traces if t.conversation_id in ids], formatters)
    return {**have, **{k: v for k, v in fresh.items() if k in wanted}}


@app.command("report")
def report_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    run: Annotated[Path, typer.Argument(help="Run directory, results.db or results.jsonl.")],
    html: Annotated[Path, typer.Option("--html", help="Where to write the HTML file.")],
    compare: Annotated[
        Path | None, typer.Option("--compare", help="A second run to compare with.")
    ] = None,
    labels: Annotated[
        Path | None, typer.Option("--labels", help="JSONL/CSV labels: adds calibration.")
    ] = None,
    label_field: Annotated[str | None, typer.Option("--label-field")] = None,
    inputs: Annotated[
        list[Path] | None,
        typer.Option("--inputs", help="The run's inputs, to render conversations not stored."),
    ] = None,
    title: Annotated[str, typer.Option("--title")] = "agent-eval report",
    config: Annotated[Path | None, typer.Option("--config")] = None,
) -> None:
    """Write one self-contained HTML report: summary, provenance, conversations and analyses."""
    with usage_errors():
        from agent_eval.analysis.labels import LABELS_NAME, labels_from_traces, read_binary_file
        from agent_eval.ingest.pipeline import ingest
        from agent_eval.report.html import write_html  # matplotlib: imported when needed
        from agent_eval.report.model import build_report

        results = load_run_results(run)
        renderings = read_renderings(_run_dir(run))
        if compare is not None:
            results += load_run_results(compare)
            renderings = {**read_renderings(_run_dir(compare)), **renderings}
        traces = list(ingest(inputs)) if inputs else []
        if traces:
            renderings = _rerender(traces, results, renderings)
        truth = read_binary_file(labels, field=label_field) if labels else None
        if truth is None and traces:
            truth = labels_from_traces(traces, field=label_field) or None
        stored = _run_dir(run) / LABELS_NAME
        if truth is None and stored.is_file():  # the labels a compare run used
            truth = read_binary_file(stored)
        data = build_report(
            results,
            renderings=renderings,
            labels=truth,
            pricing=price_table(config_path(config)).cost,
            title=title,
            runs=_runs(run) + (_runs(compare) if compare else []),
        )
        path = write_html(data, html)
    out_console.print(f"wrote {path} ({len(data.rows)} results)")
