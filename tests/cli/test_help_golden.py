"""``--help`` of every command is byte-identical to what it was before the start-up work (issue 15).

The start-up work changes how the CLI is imported and registered (commands imported lazily, the
stderr console made on first use, consoles and help texts built from declarations), never what
it prints. ``tests/cli/golden/help.json`` holds the ``--help`` text of the top level and of every
command and sub-command, captured by :func:`capture` from the code before that work (main at
e2724fe); ``python tests/cli/test_help_golden.py`` writes it again with whatever ``agent_eval``
the interpreter imports. Regenerate it only for an intended change of a help text, and say why in
the commit.
"""

from __future__ import annotations

import json
import os
import sys
from pathlib import Path
from typing import Any

GOLDEN = Path(__file__).with_name("golden") / "help.json"
COLUMNS = "100"
"""The terminal width the help texts are formatted for (click reads ``COLUMNS``)."""


def _command_paths(command: Any, path: tuple[str, ...] = ()) -> list[tuple[str, ...]]:
    """``path`` and the path of every command under ``command``, depth first, by name."""
    paths = [path]
    for name in sorted(getattr(command, "commands", {})):
        paths += _command_paths(command.commands[name], (*path, name))
    return paths


def capture() -> dict[str, str]:
    """``" ".join(path) -> its --help text`` for the top level ("") and every command.

    Each text is what ``agent-eval PATH... --help`` prints at :data:`COLUMNS` columns, through
    typer's ``CliRunner`` (the CLI's own click group, as the console script runs it).
    """
    import typer.main
    from typer.testing import CliRunner

    from agent_eval.cli._app import app
    from agent_eval.cli._commands import load_all

    load_all()
    runner = CliRunner()
    texts: dict[str, str] = {}
    for path in _command_paths(typer.main.get_command(app)):
        done = runner.invoke(
            app, [*path, "--help"], prog_name="agent-eval", env={"COLUMNS": COLUMNS}
        )
        assert done.exit_code == 0, (path, done.output)
        texts[" ".join(path)] = done.output
    return texts


def test_every_help_text_is_unchanged() -> None:
    expected = json.loads(GOLDEN.read_text(encoding="utf-8"))
    observed = capture()
    assert len(observed) > 20  # the walk found the sub-commands, not only the top level
    assert sorted(observed) == sorted(expected)
    for path, text in expected.items():
        assert observed[path] == text, f"agent-eval {path} --help changed"


def _regenerate() -> None:  # pragma: no cover - run by hand, see the module docstring
    os.environ.pop("COLUMNS", None)
    GOLDEN.parent.mkdir(exist_ok=True)
    texts = capture()
    GOLDEN.write_text(json.dumps(texts, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    print(f"{len(texts)} help texts -> {GOLDEN}", file=sys.stderr)


if __name__ == "__main__":  # pragma: no cover
    _regenerate()
