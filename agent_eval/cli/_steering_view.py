"""The steering flags of a run in the terminal: a table of the units whose content was flagged.

Shown by ``agent-eval errors`` and ``agent-eval runs show`` under their own output; excerpts
come from trace content, so they are escaped (markup and control characters), never obeyed.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape
from rich.table import Table

from agent_eval._terminal_text import escape_control
from agent_eval.analysis._steering import SteeredUnit

__all__ = ["steering_table"]


def _shown(text: str) -> str:
    return escape(escape_control(text))


def steering_table(run_id: str, units: Sequence[SteeredUnit]) -> Table:
    """One line per flag: conversation, unit, class, where, excerpt."""
    table = Table(
        title=f"steering flags of run {run_id}: content that tries to steer the judge "
        f"({len(units)} unit(s))",
        title_justify="left",
    )
    for column in ("conversation", "unit", "class", "where", "excerpt"):
        table.add_column(column, overflow="fold")
    for unit in units:
        for flag in unit.flags:
            table.add_row(
                *map(_shown, (unit.conversation_id, unit.unit_id, flag.kind, flag.where)),
                _shown(flag.excerpt),
            )
    return table
