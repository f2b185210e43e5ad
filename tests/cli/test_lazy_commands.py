"""The command table: ``agent-eval --help`` imports no command module, and lists what they say.

Regression: every command started by importing every command module (the engine, the judges,
the report, langchain-core): 0.9 s of CPU before ``--help`` printed a line.
"""

from __future__ import annotations

import subprocess
import sys

import pytest
import typer.main
from typer.core import TyperCommand, TyperGroup

from agent_eval.cli._app import app
from agent_eval.cli._commands import COMMANDS

_HEAVY = ("agent_eval.run._engine", "agent_eval.judges", "agent_eval.report", "langchain_core")


def _imported_after(argv: list[str]) -> set[str]:
    code = (
        "import sys\n"
        "from agent_eval.cli import main\n"
        f"sys.argv = {['agent-eval', *argv]!r}\n"
        "try:\n    main()\nexcept SystemExit:\n    pass\n"
        "print('\\n'.join(sorted(sys.modules)), file=sys.stderr)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    return set(done.stderr.split())


def test_top_level_help_imports_no_command_module() -> None:
    modules = _imported_after(["--help"])
    assert not {m for m in modules if m.startswith(_HEAVY)}
    assert not {command.module for command in COMMANDS.values()} & modules


def test_ingest_imports_its_own_module_only() -> None:
    modules = _imported_after(["ingest", "--help"])
    assert "agent_eval.cli._ingest_cmds" in modules
    assert "agent_eval.cli._score_cmds" not in modules
    assert "agent_eval.run._engine" not in modules


@pytest.mark.parametrize("name", list(COMMANDS))
def test_table_summary_is_the_command_s_own(name: str) -> None:
    command = typer.main.get_command(app).get_command(None, name)  # type: ignore[arg-type]
    assert command is not None
    assert isinstance(command, TyperCommand | TyperGroup)  # the real command (HelpCommand...)
    assert command.get_short_help_str(limit=1000) == COMMANDS[name].summary


def test_every_registered_command_is_in_the_table() -> None:
    from agent_eval.cli._commands import load_all

    load_all()
    registered = {info.name or info.callback.__name__ for info in app.registered_commands}  # type: ignore[union-attr]
    registered |= {info.name for info in app.registered_groups}  # type: ignore[misc]
    assert registered == set(COMMANDS)
