"""``agent-eval export phoenix RUN``: write a run's results into Phoenix as annotations.

``RUN`` is a run directory or run id (``--out`` to look it up), as for ``agent-eval errors``.
A conversation-level result is written on its Phoenix session and on the root (agent) span of
each of its traces (from the run's ``conversations.jsonl``), a unit-level result on the span of
the answer it judged (:mod:`agent_eval.export._phoenix`); Phoenix must hold those spans (it
received the agent's traces over OTLP).
Exit codes (:mod:`agent_eval.cli._exit_codes`): 0 every exportable result written; 2 usage
error (the ``phoenix`` extra missing, no such run); 3 the run cannot be read; 5 some were not
written (Phoenix down or refusing: the line says how many; run the same command again, it
writes each annotation once).
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Annotated

import typer
from rich.markup import escape

from agent_eval.cli._app import app, err_console
from agent_eval.cli._exit_codes import EXIT_OUTPUT, exit_code
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import ExportPayload, emit_json
from agent_eval.errors import AgentEvalError

__all__ = ["export_app", "phoenix"]

export_app = typer.Typer(
    rich_markup_mode=None, help="Write results into other tools (Phoenix annotations)."
)
app.add_typer(export_app, name="export")


@export_app.command("phoenix", cls=HelpCommand)
def phoenix(  # noqa: PLR0917  (a typer command: one parameter per flag)
    run: Annotated[str, typer.Argument(help="Run directory, or run id with --out.")],
    endpoint: Annotated[str, typer.Option(help="Phoenix base URL.")] = "http://127.0.0.1:6006",
    out: Annotated[Path | None, typer.Option(help="Where to look a run id up.")] = None,
    api_key_env: Annotated[
        str, typer.Option(help="Env var holding Phoenix's API key, when auth is on.")
    ] = "PHOENIX_API_KEY",
    timeout: Annotated[float, typer.Option(help="Seconds per request.")] = 30.0,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """Write RUN's results into Phoenix: on sessions, root spans and answer spans."""
    from agent_eval._result import CONVERSATION_UNIT
    from agent_eval.export._phoenix import export_annotations
    from agent_eval.run._artifacts import read_conversations
    from agent_eval.run._runs import find_run
    from agent_eval.run._store import ResultStore

    try:
        ref = find_run(run, out)
        with ResultStore(ref.directory) as store:
            results = store.results(ref.run_id)
        wanted = {r.conversation_id for r in results if r.unit_id == CONVERSATION_UNIT}
        conversations = read_conversations(ref.directory, wanted) if wanted else {}
        report = export_annotations(
            results,
            endpoint=endpoint.rstrip("/"),
            api_key=os.environ.get(api_key_env) or None,
            timeout=timeout,
            roots={cid: trace.root_spans for cid, trace in conversations.items()},
        )
    except AgentEvalError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        raise typer.Exit(exit_code(exc)) from None
    if as_json:
        payload = ExportPayload(
            endpoint=endpoint,
            run_id=ref.run_id,
            written=report.written,
            written_by_kind=dict(report.written_by_kind),
            not_written=report.not_written,
            not_written_annotations=report.not_written_annotations,
            skipped=dict(report.skipped),
            errors=report.errors,
        )
        emit_json("export phoenix", payload)
    else:
        typer.echo(f"phoenix {endpoint}: run {ref.run_id}: {report.line()}")
    if not report.ok:
        for error in report.errors:
            err_console.print(
                f"[bold red]error:[/] not written: {escape(error)}", highlight=False, soft_wrap=True
            )
        err_console.print(
            "[bold red]error:[/] not written: " + escape(report.not_written_line()),
            highlight=False,
            soft_wrap=True,
        )
        err_console.print(
            f"[bold red]error:[/] {len(report.not_written)} annotation(s) not written; run the "
            "same command again "
            "to retry (annotations already written are updated, not duplicated)",
            highlight=False,
        )
        raise typer.Exit(EXIT_OUTPUT)
