"""The table of ``agent-eval`` commands, and the click group that imports each one when it runs.

Every command module registers its commands on :data:`agent_eval.cli._app.app` when it is
imported, and most of them import the engine, the judges, the report or the analysis libraries.
Importing them all to print ``agent-eval --help`` or to run ``agent-eval ingest`` cost most of
the command's start-up, so :class:`LazyGroup` lists the commands from :data:`COMMANDS` (name,
module, one-line help) and imports a command's module only when that command is looked up:
to run it, to print its own ``--help``, or to complete its options.

The one-line help in :data:`COMMANDS` is what the top-level ``--help`` prints; a test checks it
equals the first line of each command's own help, so the two cannot drift apart.
"""

from __future__ import annotations

import importlib
from typing import Any, NamedTuple

import typer
import typer.main
from typer.core import TyperGroup

from agent_eval.cli._startup import collector_paused

__all__ = ["COMMANDS", "Command", "LazyGroup", "load_all"]


class Command(NamedTuple):
    """One top-level command (or command group).

    Attributes:
        module: The module that registers it on the app, imported on first use.
        summary: Its one-line help, as the top-level ``--help`` lists it.

    """

    module: str
    summary: str


COMMANDS: dict[str, Command] = {
    "score": Command(
        "agent_eval.cli._score_cmds",
        "Score conversations with metrics; results go to DIR/results.jsonl and results.db.",
    ),
    "ingest": Command(
        "agent_eval.cli._ingest_cmds",
        "Read traces and write one AgentTrace JSON per line, with the span accounting.",
    ),
    "show": Command(
        "agent_eval.cli._formatters_cmds",
        "Show conversations: readable in the terminal, or exactly as a formatter renders them.",
    ),
    "compare": Command(
        "agent_eval.cli._analysis_cmds",
        "Score the same conversations under each formatter and compare the verdicts pairwise.",
    ),
    "stability": Command(
        "agent_eval.cli._analysis_cmds",
        "Judge each conversation K times (repeat 0 may come from the cache) and measure agreement.",
    ),
    "calibrate": Command(
        "agent_eval.cli._analysis_cmds",
        "Agreement of judge verdicts with labels: accuracy, Cohen's kappa [95% CI], confusion.",
    ),
    "rag": Command(
        "agent_eval.cli._rag_cmds",
        "Per-turn RAG report: passages (+ relevant), qualities, refusal, failures, agreement.",
    ),
    "report": Command(
        "agent_eval.cli._report_cmds",
        "Write one self-contained HTML report a reviewer can work in.",
    ),
    "review": Command(
        "agent_eval.cli._review_cmds",
        "Pick units for a person to label (--select ...",
    ),
    "errors": Command(
        "agent_eval.cli._errors_cmds",
        "List a run's errored conversations (dead letters) with error type and message.",
    ),
    "runs": Command(
        "agent_eval.cli._runs_cmds",
        "List runs, show a run's reproducibility record, diff two runs.",
    ),
    "cache": Command(
        "agent_eval.cli._cache_cmds",
        "Inspect or prune the judge-call cache (per user by default).",
    ),
    "judges": Command(
        "agent_eval.cli._judges_cmds",
        "The judges --judge KIND[:TARGET] can pick (the agent_eval.judges entry points).",
    ),
    "formatters": Command(
        "agent_eval.cli._formatters_cmds",
        "Versioned formatters: list them, diff two renderings, lock their fingerprints.",
    ),
    "export": Command(
        "agent_eval.cli._export_cmds",
        "Write results into other tools (Phoenix annotations).",
    ),
    "serve": Command(
        "agent_eval.cli._serve_cmds",
        "Receive OTLP/HTTP spans (protobuf or JSON, gzip) and score conversations as they close.",
    ),
}
"""Every top-level command, in the order ``agent-eval --help`` lists them."""


def load_all() -> None:
    """Import every command module, so that every command is registered on the app."""
    for command in COMMANDS.values():
        importlib.import_module(command.module)


class LazyGroup(TyperGroup):
    """The top-level click group: commands listed from :data:`COMMANDS`, imported when used.

    ``get_command`` imports the command's module (which registers it on the typer app) and
    takes the command from the group typer builds for the app with its public
    :func:`typer.main.get_command`. Only typer's public names are used (typer 0.29 carries its
    own copy of click, so click's classes are not the ones it uses).
    """

    def list_commands(self, ctx: Any) -> list[str]:
        """The names in :data:`COMMANDS`, in its order."""
        return list(COMMANDS)

    def get_command(self, ctx: Any, cmd_name: str) -> Any:
        """The command named ``cmd_name``, importing its module first; ``None`` if unknown."""
        found = super().get_command(ctx, cmd_name)
        if found is not None or cmd_name not in COMMANDS:
            return found
        with collector_paused():  # the command's imports (agent_eval.cli._startup)
            importlib.import_module(COMMANDS[cmd_name].module)
            from agent_eval.cli._app import app

            built = typer.main.get_command(app)
        command = getattr(built, "commands", {}).get(cmd_name)
        if command is not None:
            self.add_command(command, cmd_name)
        return command

    def format_commands(self, ctx: Any, formatter: Any) -> None:
        """The ``Commands:`` section from :data:`COMMANDS`, importing no command module."""
        width = formatter.width - 6 - max(len(name) for name in COMMANDS)
        rows = [(name, _shorten(command.summary, width)) for name, command in COMMANDS.items()]
        with formatter.section("Commands"):
            formatter.write_dl(rows)


def _shorten(text: str, limit: int) -> str:
    """``text`` cut at a word to fit ``limit`` columns (at least 20), ending ``...`` if cut."""
    limit = max(limit, 20)
    if len(text) <= limit:
        return text
    return text[: limit - 3].rsplit(" ", 1)[0].rstrip(",;:") + "..."
