"""The typer application every ``agent-eval`` sub-command registers on, and the entry point.

Exit codes (one table for every command, :mod:`agent_eval.cli.exit_codes`): 0 done; 1 a gate
failed; 2 a usage or configuration error; 3 input unreadable; 4 nothing scored (or no
conversation found); 5 output not written. The message names the file, id or value and the
fix. No command ends in a bare traceback for an error agent-eval anticipates.
"""

from __future__ import annotations

import logging
import os
import sys

import typer
from rich.console import Console
from rich.markup import escape

from agent_eval.cli.commands import LazyGroup
from agent_eval.cli.exit_codes import EXIT_GATE, EXIT_USAGE, exit_code
from agent_eval.errors import AgentEvalError
from agent_eval.redaction import RedactingFilter

__all__ = ["EXIT_GATE", "EXIT_USAGE", "app", "err_console", "main"]

app = typer.Typer(
    name="agent-eval",
    cls=LazyGroup,  # each command's module is imported when that command is used
    help="Score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
    rich_markup_mode=None,  # plain help: flags shown as flags (rich help shows "<bool>")
)
err_console = Console(stderr=True)


DEBUG_ENV = "AGENT_EVAL_DEBUG"
"""Set (to anything) to log at DEBUG on stderr: tracebacks of internal errors, HTTP requests."""


def _debug_logging() -> None:
    """DEBUG logging on stderr, every line passed through :class:`RedactingFilter`."""
    handler = logging.StreamHandler()
    handler.addFilter(RedactingFilter())
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    logging.basicConfig(level=logging.DEBUG, handlers=[handler], force=True)


def _show_version(value: bool) -> None:
    if value:
        from importlib.metadata import version

        typer.echo(f"agent-eval {version('otel-agent-eval')}")
        raise typer.Exit()


@app.callback()
def _root(
    version: bool = typer.Option(
        False,
        "--version",
        help="Print the version and exit.",
        callback=_show_version,
        is_eager=True,
    ),
) -> None:
    """Score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges."""


def main() -> None:
    """Run the CLI; turn agent-eval errors into a one-line message and their exit code."""
    if os.environ.get(DEBUG_ENV):
        _debug_logging()
    try:
        app()
    except AgentEvalError as exc:
        err_console.print(f"[bold red]error:[/] {escape(str(exc))}", highlight=False)
        sys.exit(exit_code(exc))
