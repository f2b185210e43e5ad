"""``agent-eval runs``: list a directory's runs, show a run's record, diff two runs.

``runs show RUN`` prints the run's configuration identity and reproducibility record
(:mod:`agent_eval.run.record`); ``runs diff RUN_A RUN_B`` lists what differs between two runs'
records and which result rows changed (:mod:`agent_eval.run.run_diff`). A RUN is a run
directory (its latest run) or a run id with ``--out DIR``. Exit codes: 0, or 3 for a run that
cannot be found or read (:mod:`agent_eval.cli.exit_codes`).
"""

from __future__ import annotations

import dataclasses
from pathlib import Path
from typing import Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_eval.cli.analysis_options import usage_errors
from agent_eval.cli.app import app
from agent_eval.cli.json_output import RunsListPayload, emit_json
from agent_eval.cli.tables import print_table
from agent_eval.run.record import flatten
from agent_eval.run.run_diff import RunDiff, diff_runs
from agent_eval.run.runs import RunRef, find_run
from agent_eval.run.store import ResultStore, RunRecord

__all__ = ["runs_app"]

runs_app = typer.Typer(
    rich_markup_mode=None,
    help="List runs, show a run's reproducibility record, diff two runs.",
    no_args_is_help=True,
)
app.add_typer(runs_app, name="runs")

RunArg = Annotated[str, typer.Argument(help="A run directory (its latest run) or a run id.")]
OutOpt = Annotated[
    Path | None, typer.Option("--out", help="The output directory holding the run id.")
]
JsonOpt = Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")]
_console = Console(highlight=False)


def _value(value: Any) -> str:
    return escape(value if isinstance(value, str) else orjson.dumps(value).decode())


def _rows(ref: RunRef) -> list[Any]:
    with ResultStore(ref.directory) as store:
        return store.results(ref.run_id)


@runs_app.command("list")
def list_cmd(
    directory: Annotated[Path, typer.Argument(help="An output directory.")],
    as_json: JsonOpt = False,
) -> None:
    """The runs recorded in DIRECTORY, oldest first, with their metric and judge."""
    with usage_errors():
        ref = find_run(str(directory))
        with ResultStore(ref.directory) as store:
            records = store.runs()
    if as_json:
        emit_json("runs list", RunsListPayload(runs=[dataclasses.asdict(r) for r in records]))
        return
    table = Table(title=f"runs in {directory}", title_justify="left")
    for column in ("run", "started", "metric", "formatter", "judge"):
        table.add_column(column, overflow="fold")
    for record in records:
        config = record.config
        formatter = config.get("formatter") or ",".join(config.get("formatters", []))
        table.add_row(
            record.run_id,
            record.started_at,
            str(config.get("metric", "")),
            str(formatter),
            str(config.get("judge_model", "")),
        )
    print_table(_console, table)


@runs_app.command("show")
def show_cmd(run: RunArg, out: OutOpt = None, as_json: JsonOpt = False) -> None:
    """A run's configuration identity and reproducibility record (one dotted key per line)."""
    with usage_errors():
        record = find_run(run, out).run
    if as_json:
        emit_json("runs show", record)
        return
    print_table(_console, _record_table(record))


def _record_table(record: RunRecord) -> Table:
    table = Table(title=f"run {record.run_id}", show_header=False, title_justify="left")
    table.add_column("key", style="bold", overflow="fold")
    table.add_column("value", overflow="fold")
    table.add_row("started_at", record.started_at)
    table.add_row("argv", _value(list(record.argv)))
    for prefix, part in (("config", record.config), ("record", record.record)):
        for key, value in flatten(part, prefix).items():
            table.add_row(escape(key), _value(value))
    return table


@runs_app.command("diff")
def diff_cmd(run_a: RunArg, run_b: RunArg, out: OutOpt = None, as_json: JsonOpt = False) -> None:
    """What differs between two runs' records, and which result rows changed."""
    with usage_errors():
        ref_a, ref_b = find_run(run_a, out), find_run(run_b, out)
        diff = diff_runs(ref_a.run, _rows(ref_a), ref_b.run, _rows(ref_b))
    if as_json:
        emit_json("runs diff", diff)
        return
    _print_diff(diff)


def _print_diff(diff: RunDiff) -> None:
    fields = Table(title=f"{diff.run_a} (A) vs {diff.run_b} (B)", title_justify="left")
    for column in ("what", "A", "B"):
        fields.add_column(column, overflow="fold")
    for prefix, items in (("config", diff.config), ("record", diff.record)):
        for key, a, b in items:
            fields.add_row(escape(f"{prefix}.{key}"), _value(a), _value(b))
    if diff.config or diff.record:
        print_table(_console, fields)
    else:
        _console.print("the two runs' configurations and records are the same")
    rows = Table(title=f"result rows that changed (paired by {diff.pairing})", title_justify="left")
    for column in ("row", "A", "B"):
        rows.add_column(column, overflow="fold")
    for change in diff.changed:
        rows.add_row(escape(" ".join(change.key)), change.a, change.b)
    if diff.changed:
        print_table(_console, rows)
    _console.print(
        f"rows: {len(diff.changed)} changed, {diff.unchanged} unchanged, "
        f"{len(diff.only_a)} only in A, {len(diff.only_b)} only in B"
    )
