"""``--quiet`` / ``-q``, the one option every command has: only errors and the exit code.

:class:`~agent_eval.cli._help_format.HelpCommand` (the class of every command) adds
:func:`quiet_option` to its parameters. Given, it puts a gate in front of the process's standard
streams for the rest of the command:

- standard error keeps only the error lines: a write that begins ``error:`` (every error this
  CLI prints) or ``Error:`` (click's usage errors), after terminal escape codes; summaries,
  warnings, progress and notices are dropped;
- standard output drops what is printed for people (tables, renderings, summary lines), while a
  machine output (``--json``, ``-o -``, ``serve``'s JSON summary, ``show --raw``'s bytes) is
  written to :func:`machine_stdout`, the stream behind the gate, and so still arrives.

Errors a command raises are printed by :func:`agent_eval.cli._app.main` after the command's
context closed, which removes the gate. The gate is a stream wrapper, not a change of every
console: rich consoles and ``typer.echo`` look ``sys.stdout``/``sys.stderr`` up when they write.
"""

from __future__ import annotations

import functools
import re
import sys
from typing import Any, TextIO

import typer
import typer.main

__all__ = ["machine_stdout", "quiet_callback", "quiet_option"]

_ESCAPES = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")
"""Terminal escape codes (rich's colours), removed before a write is told an error line."""
_ERROR_PREFIXES = ("error:", "Error:")


class _Gate:
    """A text stream that passes on the writes ``keep`` accepts; everything else as ``stream``.

    A write of anything but ``str`` raises ``TypeError`` as a text stream does (click tells
    text streams from binary ones that way).
    """

    def __init__(self, stream: TextIO, *, errors: bool) -> None:
        self.stream, self.errors = stream, errors

    def write(self, text: str) -> int:
        if not isinstance(text, str):
            raise TypeError(f"write() argument must be str, not {type(text).__name__}")
        if self.errors and _ESCAPES.sub("", text).lstrip().startswith(_ERROR_PREFIXES):
            return self.stream.write(text)
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:  # encoding, isatty, fileno, flush, buffer ...
        return getattr(self.stream, name)


def machine_stdout() -> TextIO:
    """The standard output a machine output is written to: behind ``--quiet``'s gate, if any."""
    stream = sys.stdout
    return stream.stream if isinstance(stream, _Gate) else stream


def _enable() -> None:
    if not isinstance(sys.stdout, _Gate):
        sys.stdout = _Gate(sys.stdout, errors=False)
    if not isinstance(sys.stderr, _Gate):
        sys.stderr = _Gate(sys.stderr, errors=True)


def _disable() -> None:
    if isinstance(sys.stdout, _Gate):
        sys.stdout = sys.stdout.stream
    if isinstance(sys.stderr, _Gate):
        sys.stderr = sys.stderr.stream


def quiet_callback(ctx: Any, param: Any, value: bool) -> None:
    """The option's callback: the gate up now, down when the command's context closes.

    Also the top-level ``agent-eval -q``'s: the gate is then up for whichever command runs.
    """
    if value and not ctx.resilient_parsing:
        _enable()
        ctx.call_on_close(_disable)


@functools.cache
def quiet_option() -> Any:
    """The shared ``--quiet`` / ``-q`` click option (typer's click), made on first use.

    Built through typer's public API: the one parameter of a command made for it. One object
    serves every command (click keeps no per-command state in a parameter).
    """
    holder = typer.Typer()

    @holder.command()
    def _holder(
        quiet: bool = typer.Option(
            False,
            "--quiet",
            "-q",
            help="Print only errors (and machine output: --json, -o -); see the exit code.",
            callback=quiet_callback,
            expose_value=False,
            is_eager=True,
        ),
    ) -> None:
        """Holds the option."""

    return typer.main.get_command(holder).params[0]
