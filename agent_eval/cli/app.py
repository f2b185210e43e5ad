"""The typer application every ``agent-eval`` sub-command registers on, and the entry point.

Exit codes: 0 success; 1 a declared gate failed (``--fail-under``, gates), or ``ingest`` read its
inputs but found no conversation; 2 a usage,
configuration or input error (the message names the file, id or value and the fix). No command
ends in a bare traceback for an error agent-eval anticipates.
"""

from __future__ import annotations

import sys

import typer
from rich.console import Console

from agent_eval.errors import AgentEvalError

__all__ = ["EXIT_GATE", "EXIT_USAGE", "app", "err_console", "main"]

EXIT_GATE = 1
EXIT_USAGE = 2

app = typer.Typer(
    name="agent-eval",
    help="Score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges.",
    no_args_is_help=True,
    pretty_exceptions_enable=False,
    add_completion=True,  # --install-completion / --show-completion (bash, zsh, fish, pwsh)
)
err_console = Console(stderr=True)


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
    """Run the CLI; turn agent-eval errors into a one-line message and exit code 2."""
    from agent_eval import cli  # noqa: F401  (registers every command module)

    try:
        app()
    except AgentEvalError as exc:
        err_console.print(f"[bold red]error:[/] {exc}", highlight=False, markup=True)
        sys.exit(EXIT_USAGE)
