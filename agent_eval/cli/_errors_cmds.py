"""``agent-eval errors RUN``: the dead letters of a run (conversations whose result is ``error``).

Each is listed with its error type and message; ``agent-eval score --retry-errors RUN`` re-runs
exactly these conversations and replaces their rows.
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_eval._result import MetricResult
from agent_eval._terminal_text import escape_control
from agent_eval.analysis._steering import steered_units
from agent_eval.cli._analysis_options import usage_errors
from agent_eval.cli._app import app
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import ErrorsPayload, emit_json
from agent_eval.cli._steering_view import steering_table
from agent_eval.cli._tables import print_table
from agent_eval.run._runs import find_run
from agent_eval.run._store import ResultStore

__all__ = ["errors"]


def _table(run_id: str, rows: list[MetricResult]) -> Table:
    table = Table(title=f"errored units of run {run_id}", title_justify="left")
    columns = ("conversation", "unit", "metric", "formatter", "error type", "attempts", "message")
    for column in columns:
        table.add_column(column, overflow="fold")
    for row in rows:
        table.add_row(  # ids and messages come from trace content: shown, never obeyed
            *(
                escape(escape_control(text))
                for text in (
                    row.conversation_id,
                    row.unit_id,
                    row.metric,
                    row.formatter,
                    row.error_type or "",
                    str(row.attempts),
                    row.error_message or "",
                )
            )
        )
    return table


def _error(row: MetricResult) -> dict[str, Any]:
    fields = ("conversation_id", "unit_id", "trace_ids", "metric", "formatter", "judge_model")
    data = row.model_dump(mode="json", include={*fields, "error_type", "error_message"})
    data["attempts"] = row.attempts
    return data


@app.command(cls=HelpCommand)
def errors(
    run: Annotated[str, typer.Argument(help="A run directory (its latest run) or a run id.")],
    out: Annotated[
        Path | None, typer.Option("--out", help="The output directory holding the run id.")
    ] = None,
    as_json: Annotated[
        bool,
        typer.Option("--json", help="Print JSON on stdout: the run id and its errored rows."),
    ] = False,
) -> None:
    """List a run's errored conversations (dead letters) with error type and message.

    One line per errored unit (the conversation, or one of its answers, turn:K). Then the
    units whose content tries to steer the judge (steering flags), one line per flag.
    """
    with usage_errors():
        ref = find_run(run, out)
        with ResultStore(ref.directory) as store:
            results = store.results(ref.run_id)
    rows = [r for r in results if r.status == "error"]
    steered = steered_units(results)
    if as_json:
        payload = ErrorsPayload(
            run_id=ref.run_id,
            errors=[_error(r) for r in rows],
            steering=[unit.to_json() for unit in steered],
        )
        emit_json("errors", payload)
        return
    console = Console()
    if rows:
        print_table(console, _table(ref.run_id, rows))
        console.print(
            f"{len(rows)} errored; re-run only these: agent-eval score <the same inputs and "
            f"options> --retry-errors {ref.run_id} --out {ref.directory}",
            highlight=False,
        )
    else:
        console.print(f"run {ref.run_id}: no errored conversations")
    if steered:
        print_table(console, steering_table(ref.run_id, steered))
