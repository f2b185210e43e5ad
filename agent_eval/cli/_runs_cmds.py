"""``agent-eval runs``: list a directory's runs, show a run's record, diff two runs.

``runs show RUN`` prints the run's configuration identity and reproducibility record
(:mod:`agent_eval.run._record`) and what its judge calls spent (:func:`run_usage`: its rows, the
rows a later invocation replaced and, of a ``serve`` run, the conversations its shutdown left in
``unscored.jsonl``, listed with their reason and spend: :mod:`agent_eval.live._unscored`);
``runs diff RUN_A RUN_B`` lists what differs between two runs' records and which result rows
changed (:mod:`agent_eval.run._run_diff`). A RUN is a run directory (its latest run) or a run id
with ``--out DIR``. Exit codes: 0, or 3 for a run that cannot be found or read
(:mod:`agent_eval.cli._exit_codes`).
"""

from __future__ import annotations

import dataclasses
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import orjson
import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_eval.analysis._steering import steered_units
from agent_eval.cli._analysis_options import usage_errors
from agent_eval.cli._app import app, err_console
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import RunsListPayload, emit_json
from agent_eval.cli._steering_view import steering_table
from agent_eval.cli._tables import print_table
from agent_eval.run._record import flatten
from agent_eval.run._run_diff import RunDiff, diff_runs
from agent_eval.run._runs import RunRef, find_run, runs_in
from agent_eval.run._store import DB_NAME, ResultStore, RunRecord, load_results, load_superseded

if TYPE_CHECKING:
    from agent_eval.live._unscored import UnscoredEntry

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


@runs_app.command("list", cls=HelpCommand)
def list_cmd(
    directory: Annotated[
        Path,
        typer.Argument(help="An output directory, or a folder of output directories (runs/)."),
    ],
    as_json: JsonOpt = False,
) -> None:
    """The runs recorded in DIRECTORY, oldest first, with their metric and judge.

    DIRECTORY is one output directory (it holds results.db), or a folder whose output
    directories are listed one after another (agent-eval runs list runs).
    """
    with usage_errors():
        found = [(d, runs_in(d)) for d in _output_dirs(directory)]
    if as_json:
        runs = [{"directory": str(d), **dataclasses.asdict(r)} for d, rs in found for r in rs]
        emit_json("runs list", RunsListPayload(runs=runs))
        return
    table = Table(title=f"runs in {directory}", title_justify="left")
    several = not (directory / DB_NAME).is_file()  # a folder of output directories
    columns = ("directory",) * several + ("run", "started", "metric", "formatter", "judge")
    for column in columns:
        table.add_column(column, overflow="fold")
    for where, records in found:
        for record in records:
            config = record.config
            formatter = config.get("formatter") or ",".join(config.get("formatters", []))
            metrics = ", ".join(config.get("metrics") or ()) or str(config.get("metric", ""))
            judge = str(config.get("judge_model", ""))
            cells = (record.run_id, record.started_at, metrics, str(formatter), judge)
            table.add_row(*((str(where),) * several + cells))
    print_table(_console, table)


def _output_dirs(directory: Path) -> list[Path]:
    """``directory`` if it is an output directory, else its output directories, sorted.

    Raises:
        StoreError: neither (through :func:`find_run`, which names what is missing).

    """
    if (directory / DB_NAME).is_file() or not directory.is_dir():
        return [find_run(str(directory)).directory]
    inside = sorted(d for d in directory.iterdir() if (d / DB_NAME).is_file())
    return inside or [find_run(str(directory)).directory]


@runs_app.command("show", cls=HelpCommand)
def show_cmd(run: RunArg, out: OutOpt = None, as_json: JsonOpt = False) -> None:
    """A run's configuration identity, reproducibility record and judge usage, a key per line.

    The usage counts the run's rows and the rows a later invocation replaced (--resume of
    units skipped on the budget or cut short by an interrupt, --retry-errors): their judge
    calls were made and paid for. usage.interrupted counts the units an interrupt cut short,
    their requests and the requests whose reply was never read (tokens estimated).

    Of a serve run, the conversations its shutdown left unscored (OUT/unscored.jsonl, no row)
    are counted in the usage too (usage.unscored) and listed with their reason and spend.
    The units whose content tries to steer the judge (steering flags) are listed last.
    """
    from agent_eval.live._unscored import read_unscored

    with usage_errors():
        ref = find_run(run, out)
        unscored = read_unscored(ref.directory, ref.run_id)
        usage = run_usage(ref, unscored.entries)
        steered = steered_units(_rows(ref))
    if unscored.entries or unscored.unattributed:
        usage["unscored"] = unscored.summary()
    listed = [entry.to_json() for entry in unscored.entries]
    if as_json:
        document = {**dataclasses.asdict(ref.run), "usage": usage, "unscored": listed}
        if steered:  # only then: the document reads as before for a run without flags
            document["steering"] = [unit.to_json() for unit in steered]
        emit_json("runs show", document)
        return
    table = _record_table(ref.run)
    for key, value in flatten(usage, "usage").items():
        table.add_row(escape(key), _value(value))
    print_table(_console, table)
    if listed:
        print_table(_console, _unscored_table(unscored.path, unscored.entries))
    if steered:
        print_table(_console, steering_table(ref.run_id, steered))


def _unscored_table(path: Path, entries: Sequence[UnscoredEntry]) -> Table:
    """The unscored conversations of a serve run: id, revision, reason, requests, tokens."""
    from agent_eval.live._unscored import REASONS

    table = Table(
        title=f"{len(entries)} conversation(s) left unscored by the shutdown ({path}; no row)",
        title_justify="left",
    )
    for column in ("conversation", "rev", "reason", "requests", "unanswered", "in", "out"):
        table.add_column(column, overflow="fold")
    for entry in entries:
        mark = "~" if entry.tokens_estimated else ""
        table.add_row(
            escape(entry.conversation_id),
            str(entry.revision),
            escape(f"{entry.reason}: {REASONS.get(entry.reason, entry.reason)}"),
            str(entry.judge_requests),
            str(entry.unanswered_requests),
            f"{mark}{entry.judge_input_tokens}",
            f"{mark}{entry.judge_output_tokens}",
        )
    return table


def run_usage(ref: RunRef, unscored: Sequence[UnscoredEntry] = ()) -> dict[str, Any]:
    """What a run's judge calls spent, over its rows, the rows they replaced and ``unscored``.

    ``unscored``: the run's ``unscored.jsonl`` entries (a serve run's conversations its
    shutdown left without a row); their spend is added (:func:`~agent_eval.live._unscored.
    with_unscored`: requests, tokens, ``interrupted``), ``rows`` and ``status`` stay the stored
    rows'.

    Returns:
        ``rows`` (current rows), ``status`` (rows by status), ``skipped`` (the skipped rows
        by reason, when there are any: ``sampled_out``, ``budget``...), ``replaced_rows``,
        ``judge_requests`` (requests sent, retries included), ``judge_input_tokens`` /
        ``judge_output_tokens`` (a row without a usage report counts its estimate,
        :attr:`~agent_eval._result.MetricResult.best_tokens`) and ``estimated_rows`` (those
        rows), each summed over current and replaced rows alike; ``interrupted``: the rows
        cut short by an interrupt (``rows``), their ``requests`` and, of them, those whose
        reply was never read (``unanswered``: tokens unknown, counted at the estimate)
        (:class:`~agent_eval.run._usage.RunUsage`).

    Raises:
        StoreError: the run's store cannot be read.

    """
    from agent_eval.live._unscored import with_unscored
    from agent_eval.run._usage import usage_of

    rows = load_results(ref.directory, run_id=ref.run_id)
    spent = usage_of(rows, load_superseded(ref.directory, run_id=ref.run_id))
    usage = with_unscored(spent, unscored).to_json()
    status = dict(sorted(Counter(r.status for r in rows).items()))
    reasons = Counter(r.error_type or "" for r in rows if r.status == "skipped")
    skipped = {"skipped": dict(sorted(reasons.items()))} if reasons else {}  # e.g. sampled_out
    return {"rows": usage.pop("rows"), "status": status, **skipped, **usage}


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


@runs_app.command("diff", cls=HelpCommand)
def diff_cmd(run_a: RunArg, run_b: RunArg, out: OutOpt = None, as_json: JsonOpt = False) -> None:
    """What differs between two runs' records, and which result rows changed.

    Warns when one formatter name@version was recorded with two fingerprints (changed without
    a version bump: its rows are not comparable), and when the runs used different formatters
    or metric versions (such as the change of the default to the hardened transcript@2).
    """
    with usage_errors():
        ref_a, ref_b = find_run(run_a, out), find_run(run_b, out)
        diff = diff_runs(ref_a.run, _rows(ref_a), ref_b.run, _rows(ref_b))
    if as_json:
        emit_json("runs diff", diff)
        return
    _print_diff(diff)


def _print_diff(diff: RunDiff) -> None:
    for warning in [*diff.formatter_drift, *diff.identity_changes]:
        err_console.print(
            f"[bold yellow]warning:[/] {escape(warning)}", highlight=False, soft_wrap=True
        )
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
