"""``agent-eval judges``: the judges ``--judge KIND[:TARGET]`` can pick.

Lists every judge of the ``agent_eval.judges`` entry-point group (built-in and third-party
alike), the class behind it, whether the CLI can build it (it implements
:meth:`~agent_eval.judges._base.Judge.from_settings`), and the entry points that failed to load.
With ``--json``: the ``judges list`` document (:class:`~agent_eval.cli._json_output.JudgesPayload`).
Exit code 0.
"""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape
from rich.table import Table

from agent_eval._plugins import public_path
from agent_eval.cli._app import app
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._json_output import JudgeEntry, JudgesPayload, emit_json
from agent_eval.cli._tables import print_table
from agent_eval.judges._base import Judge, judges

__all__ = ["judges_app", "list_judges"]

judges_app = typer.Typer(
    rich_markup_mode=None,
    help="The judges --judge KIND[:TARGET] can pick (the agent_eval.judges entry points).",
    no_args_is_help=True,
)
app.add_typer(judges_app, name="judges")


def _entries() -> list[JudgeEntry]:
    return [
        JudgeEntry(
            kind=name,
            cls=public_path(cls),
            cli=cls.from_settings.__func__ is not Judge.from_settings.__func__,  # type: ignore[attr-defined]
            summary=(cls.__doc__ or "").strip().splitlines()[0] if cls.__doc__ else "",
        )
        for name, cls in judges
    ]


@judges_app.command("list", cls=HelpCommand)
def list_judges(
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout.")] = False,
) -> None:
    """Every registered judge: its kind, class, whether --judge can build it, and a summary."""
    entries = _entries()
    if as_json:
        emit_json("judges list", JudgesPayload(judges=entries, broken=dict(judges.broken)))
        return
    table = Table(title=escape("judges (--judge KIND[:TARGET], or [judge] kind = ...)"))
    for column in ("kind", "class", "--judge", "summary"):
        table.add_column(column)
    for entry in entries:
        table.add_row(
            escape(entry.kind),
            escape(entry.cls),
            "yes" if entry.cli else "no",
            escape(entry.summary),
        )
    console = Console(highlight=False)
    print_table(console, table)
    for name, error in sorted(judges.broken.items()):
        console.print(f"broken: {escape(name)}: {escape(error)}")
