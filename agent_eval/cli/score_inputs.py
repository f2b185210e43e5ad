"""The inputs of ``agent-eval score``: the conversations, with the ingest accounting on stderr.

``read_inputs`` ingests the paths and prints on stderr the same accounting ``agent-eval ingest``
prints (files read and with errors, each error naming its file and reason, spans used and
ignored), then says which files gave no conversation: they are not scored and not counted in
``scored + skipped + errored = input``.
"""

from __future__ import annotations

from collections.abc import Sequence

from rich.markup import escape

from agent_eval.cli.app import err_console
from agent_eval.cli.ingest_cmds import summary_lines
from agent_eval.errors import InputError
from agent_eval.ingest import IngestReport, ingest
from agent_eval.trace import AgentTrace

__all__ = ["no_conversation_lines", "read_inputs"]


def no_conversation_lines(report: IngestReport) -> list[str]:
    """Lines naming the input files that produced no conversation, and why.

    A file that could not be read (``error``) gives none; a readable file gives none when every
    span or record in it was ignored (the reasons are in the accounting above these lines).
    """
    unreadable = [f.path for f in report.files if f.error]
    empty = [f.path for f in report.files if not f.error and not f.conversations]
    lines = []
    if unreadable:
        lines.append(
            f"{len(unreadable)} unreadable file(s) produced no conversations and are not "
            f"scored: {', '.join(unreadable)}"
        )
    if empty:
        lines.append(
            f"{len(empty)} file(s) were read but gave no conversation (everything in them was "
            f"ignored, see above): {', '.join(empty)}"
        )
    return lines


def read_inputs(paths: Sequence[str], fmt: str) -> list[AgentTrace]:
    """The conversations of ``paths``, after printing the ingest accounting on stderr.

    Raises:
        InputError: no paths, no input could be read at all, or no conversation was found.

    """
    if not paths:
        raise InputError("no input: give PATH... (files, directories or globs) to score")
    run = ingest(paths, format=fmt)
    traces = list(run)
    for line in summary_lines(run.report) + no_conversation_lines(run.report):
        err_console.print(escape(line), highlight=False, soft_wrap=True)
    if not traces:
        raise InputError(f"no conversations found in {', '.join(paths)}")
    return traces
