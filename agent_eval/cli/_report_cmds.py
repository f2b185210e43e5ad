"""agent-eval CLI command ``report``: one self-contained HTML file for a run (or two).

The report modules are imported when the command runs; the statistics libraries only when the
rows need them (several variants, repeats or labels).
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated

import typer

from agent_eval._redaction import redact_text
from agent_eval.cli._analysis_options import (
    config_path,
    load_run_results,
    out_console,
    price_table,
    usage_errors,
    warn_formatter_drift,
)
from agent_eval.cli._app import app
from agent_eval.cli._help_format import HelpCommand
from agent_eval.run._artifacts import RenderingKey, read_conversations, read_renderings, render_all
from agent_eval.run._outcomes import NO_FORMATTER

if TYPE_CHECKING:
    from agent_eval._result import MetricResult
    from agent_eval._trace import AgentTrace
    from agent_eval.report._history import HistoryPoint
    from agent_eval.report._model import RunInfo, RunSummary

__all__ = ["report_cmd"]


def _run_dir(path: Path) -> Path:
    return path if path.is_dir() else path.parent


def _command(argv: Sequence[str]) -> str:
    """The command line, its program named without the directory it was installed in."""
    return shlex.join([Path(argv[0]).name, *argv[1:]]) if argv else ""


def _shown(value: object) -> str:
    return value if isinstance(value, str) else json.dumps(value)


def _runs(path: Path) -> list[RunInfo]:
    """The run records of ``path``'s results store (none for a bare JSONL file)."""
    from agent_eval.report._model import RunInfo
    from agent_eval.run._record import flatten
    from agent_eval.run._store import DB_NAME, ResultStore

    directory = _run_dir(path)
    if not (directory / DB_NAME).is_file():
        return []
    with ResultStore(directory) as store:
        return [
            RunInfo(
                run_id=r.run_id,
                started_at=r.started_at,
                command=redact_text(_command(r.argv)),
                record={k: _shown(v) for k, v in flatten(r.record).items()} if r.record else {},
            )
            for r in store.runs()
        ]


def _latest_revisions(
    results: list[MetricResult],
) -> tuple[list[MetricResult], list[MetricResult]]:
    """Each conversation's latest live revision, and the earlier revisions' rows.

    ``agent-eval serve`` re-scores a conversation as more of it arrives (``revision`` 1, 2,
    ...); the latest revision read the most of it and is what the stored conversation and
    rendering show, so the report reports it. Earlier revisions are not repeats: like
    superseded rows, only their judge tokens and cost count.
    """

    def group(r: MetricResult) -> tuple[str, str, str, str, str, int]:
        return (r.run_id, r.conversation_id, r.metric, r.formatter, r.judge_model, r.repeat)

    latest: dict[tuple[str, str, str, str, str, int], int] = {}
    for r in results:
        latest[group(r)] = max(latest.get(group(r), 0), r.revision)
    kept = [r for r in results if r.revision == latest[group(r)]]
    return kept, [r for r in results if r.revision != latest[group(r)]]


def _rerender(
    traces: list[AgentTrace], results: list[MetricResult], have: dict[RenderingKey, str]
) -> dict[RenderingKey, str]:
    wanted = {
        (r.conversation_id, r.formatter) for r in results if r.formatter != NO_FORMATTER
    } - set(have)
    formatters = sorted({f for _, f in wanted})
    ids = {c for c, _ in wanted}
    fresh = render_all([t for t in traces if t.conversation_id in ids], formatters)
    return {**have, **{k: v for k, v in fresh.items() if k in wanted}}


@app.command(
    "report",
    cls=HelpCommand,
    help=(
        "Write one self-contained HTML report a reviewer can work in.\n\n"
        "Summary and provenance, plots, errors by type, a results table to sort, filter, "
        "search and page, and each conversation laid out with every input of its verdicts "
        "(reference, labels, inferred goal, raw replies, atoms) and the text the judge saw; "
        "comparison, stability and calibration views when the rows support them."
    ),
)
def report_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    run: Annotated[Path, typer.Argument(help="Run directory, results.db or results.jsonl.")],
    html: Annotated[
        Path, typer.Option("--html", "-o", "--output", help="Where to write the HTML file.")
    ],
    compare: Annotated[
        Path | None, typer.Option("--compare", help="A second run to compare with.")
    ] = None,
    labels: Annotated[
        Path | None, typer.Option("--labels", help="JSONL/CSV labels: adds calibration.")
    ] = None,
    label_field: Annotated[str | None, typer.Option("--label-field")] = None,
    inputs: Annotated[
        list[Path] | None,
        typer.Option(
            "--inputs", help="The run's inputs, to lay out and render conversations not stored."
        ),
    ] = None,
    title: Annotated[str, typer.Option("--title")] = "agent-eval report",
    config: Annotated[Path | None, typer.Option("--config")] = None,
    history: Annotated[
        list[Path] | None,
        typer.Option(
            "--history",
            help="Another run to set beside RUN in each metric's history (repeatable); runs "
            "beside RUN in its parent directory with the same inputs are found on their own.",
        ),
    ] = None,
) -> None:
    """Write one self-contained HTML report a reviewer can work in.

    Summary and provenance, plots, errors by type, a results table to sort, filter, search and
    page, and each conversation laid out with every input of its verdicts (reference, labels,
    inferred goal, raw replies, atoms) and the text the judge saw; comparison, stability and
    calibration views when the rows support them.
    """
    with usage_errors():
        from agent_eval.analysis._labels import LABELS_NAME, labels_from_traces, read_binary_file
        from agent_eval.ingest._pipeline import ingest
        from agent_eval.report._html import write_html
        from agent_eval.report._model import build_report
        from agent_eval.run._store import load_superseded

        results = load_run_results(run)
        superseded = load_superseded(run)
        renderings = read_renderings(_run_dir(run))
        stored = read_conversations(_run_dir(run))
        if compare is not None:
            results += load_run_results(compare)
            superseded += load_superseded(compare)
            renderings = {**read_renderings(_run_dir(compare)), **renderings}
            stored = {**read_conversations(_run_dir(compare)), **stored}
        traces = list(ingest(inputs)) if inputs else []
        if traces:
            renderings = _rerender(traces, results, renderings)
            stored = {**stored, **{t.conversation_id: t for t in traces}}
        warn_formatter_drift(results)  # one name@version, two fingerprints: not comparable
        results, earlier = _latest_revisions(results)
        superseded += earlier
        truth = read_binary_file(labels, field=label_field) if labels else None
        if truth is None and traces:
            truth = labels_from_traces(traces, field=label_field) or None
        used = _run_dir(run) / LABELS_NAME
        if truth is None and used.is_file():  # the labels a compare run used
            truth = read_binary_file(used)
        runs = _runs(run) + (_runs(compare) if compare else [])
        data = build_report(
            results,
            renderings=renderings,
            traces=stored,
            labels=truth,
            pricing=price_table(config_path(config)).cost,
            title=title,
            runs=runs,
            superseded=superseded,
            history=_history(run, results, history or [], runs) if compare is None else None,
        )
        path = write_html(data, html)
    # soft_wrap: a path is never broken by a newline, whatever the console's width
    out_console.print(f"wrote {path} ({_rows_text(data.summary)})", soft_wrap=True)


def _history(
    run: Path, results: list[MetricResult], given: list[Path], runs: list[RunInfo]
) -> dict[str, list[HistoryPoint]] | None:
    """Each metric's history across the runs beside ``run`` (none when there is no other)."""
    from agent_eval.report._history import history_points, history_runs

    others = history_runs(_run_dir(run), results, given)
    if not others:
        return None
    return history_points(results, others, {r.run_id: r.started_at for r in runs})


def _rows_text(summary: RunSummary) -> str:
    """``27 results``; with repeats ``27 results, 81 rows over 3 repeats`` (all are shown)."""
    if summary.n_rows == summary.n_results:
        return f"{summary.n_results} results"
    return f"{summary.n_results} results, {summary.n_rows} rows over {summary.repeats} repeats"
