"""Options and helpers shared by the commands that render conversations (``show``, ``diff``).

``read_traces`` streams conversations from ``agent_eval.ingest._pipeline.ingest``, reports files
it had to skip on stderr, and fails with the conversation ids it saw (and ``did you mean X?``
for a close one, as unknown metric and formatter names get) when ``--conversation`` matched none.
"""

from __future__ import annotations

import difflib
from collections.abc import Iterator
from typing import Annotated

import typer
from rich.markup import escape

from agent_eval._terminal_text import escape_control
from agent_eval._trace import AgentTrace
from agent_eval.cli._app import err_console
from agent_eval.errors import ConfigError, NoConversationError
from agent_eval.formatting import load_formatters

__all__ = [
    "Conversation",
    "FormatterPath",
    "InputFormat",
    "load_formatter_paths",
    "read_traces",
]

FormatterPath = Annotated[
    list[str] | None,
    typer.Option(
        "--formatter-path",
        help="Load formatters from a directory, .py file or module path (repeatable).",
    ),
]
InputFormat = Annotated[
    str, typer.Option("--format", help="Input container: auto, or a registered container name.")
]
Conversation = Annotated[
    str | None, typer.Option("--conversation", help="Only the conversation with this id.")
]


class _Closest:
    """The id closest to ``wanted`` among those offered, as :func:`difflib.get_close_matches`.

    It picks the highest ratio >= 0.6 (that function's default cutoff), kept while streaming, so
    memory stays one id whatever the input holds.
    """

    CUTOFF = 0.6

    def __init__(self, wanted: str) -> None:
        self._matcher = difflib.SequenceMatcher()
        self._matcher.set_seq2(wanted)
        self._ratio = self.CUTOFF
        self.best: str | None = None

    def offer(self, candidate: str) -> None:
        m = self._matcher
        m.set_seq1(candidate)
        if m.real_quick_ratio() < self._ratio or m.quick_ratio() < self._ratio:
            return
        ratio = m.ratio()
        if ratio > self._ratio or (self.best is None and ratio >= self._ratio):
            self._ratio, self.best = ratio, candidate


def load_formatter_paths(paths: list[str] | None) -> None:
    """Register the formatters of every ``--formatter-path`` location (see ``load_formatters``)."""
    for location in paths or ():
        load_formatters(location)


def read_traces(paths: list[str], fmt: str, conversation: str | None) -> Iterator[AgentTrace]:
    """Stream the conversations of ``paths`` (only ``conversation`` when given).

    Raises:
        ConfigError: ``conversation`` matched nothing; names the closest id (``did you mean``)
            and lists the first ids seen.
        InputError: no input could be read at all.
        NoConversationError: the inputs were read but gave no conversation (the CLI exits 4,
            as ``ingest`` does); the message gives the reasons.

    """
    from agent_eval.ingest._pipeline import ingest

    run = ingest(paths, format=fmt)
    seen: list[str] = []  # the first ids only, for the error message (memory stays bounded)
    closest = _Closest(conversation or "")
    found = False
    for trace in run:
        if len(seen) <= 20:
            seen.append(trace.conversation_id)
        if conversation is not None and not found:
            closest.offer(trace.conversation_id)
        if conversation is None or trace.conversation_id == conversation:
            found = True
            yield trace
    from agent_eval.cli._ingest_cmds import no_conversation_reason, skipped_lines

    for file in run.report.files:
        if file.error is not None:
            where = "" if file.error.startswith(file.path) else f"{file.path}: "
            err_console.print(
                f"skipped {escape(where + file.error)}", highlight=False, soft_wrap=True
            )
    for file in run.report.files:  # labels, references... beside the traces, as ingest says
        if file.note is not None:
            err_console.print(
                f"skipped {escape(file.path)}: {escape(file.note)}", highlight=False, soft_wrap=True
            )
    for line in skipped_lines(run.report):  # a bad line or span is not lost without a word
        err_console.print(escape(escape_control(line)), highlight=False, soft_wrap=True)
    if not seen:  # read, but nothing to show: exit 4, as ingest does
        raise NoConversationError(no_conversation_reason(run.report))
    if conversation is not None and not found:
        listed = ", ".join(seen[:20]) + (" ..." if len(seen) > 20 else "")
        hint = f"; did you mean {closest.best!r}?" if closest.best else ""
        raise ConfigError(
            f"no conversation {conversation!r} in the input{hint}; conversations: {listed}"
        )
