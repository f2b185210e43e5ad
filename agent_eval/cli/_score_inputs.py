"""The inputs of ``agent-eval score``: the conversations, with the ingest accounting on stderr.

``read_inputs`` ingests the paths, streaming (with a progress line on stderr when it is a
terminal, erased when the inputs are read), into a :class:`~agent_eval.run._spool.TraceSpool`
(the conversations on disk, read back one at a time: memory is bounded by what a pass holds,
not by the input) and prints on stderr the same accounting ``agent-eval ingest`` prints
(files read and with errors, each error naming its file and reason, spans used and ignored),
then says which files gave no conversation: they are not scored and not counted in
``scored + skipped + errored = units``. ``check_references`` says how many ids of a
``--references`` file match a conversation, and warns when none does.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from rich.markup import escape

from agent_eval.cli._app import err_console
from agent_eval.cli._ingest_cmds import (
    ingest_with_progress,
    no_conversation_reason,
    print_summary,
    unrecognised_files,
)
from agent_eval.errors import InputError, NoConversationError
from agent_eval.ingest import IngestReport, ingest
from agent_eval.run._rendering import RenderCache
from agent_eval.run._spool import TraceSpool

__all__ = ["check_references", "no_conversation_lines", "read_inputs", "read_inputs_on_ray"]

MAX_IDS_SHOWN = 3
"""Example ids shown from each side when no reference id matches a conversation."""


def no_conversation_lines(report: IngestReport) -> list[str]:
    """Lines naming the input files that produced no conversation, and why.

    A file that could not be read (``error``) gives none, and so does one no container
    recognises (``not recognised``, as ``agent-eval ingest`` calls it: not an error); a readable
    file gives none when every span or record in it was ignored (the reasons are in the
    accounting above these lines).
    """
    unknown = unrecognised_files(report)
    unreadable = [f.path for f in report.files if f.error and f not in unknown]
    empty = [
        f.path
        for f in report.files  # a file with a note is a companion (labels...), listed as such
        if not (f.error or f.note or f.conversations)
    ]
    lines = []
    if unreadable:
        lines.append(
            f"{len(unreadable)} unreadable file(s) produced no conversations and are not "
            f"scored: {', '.join(unreadable)}"
        )
    if unknown:  # not errors: files beside the traces that hold none (the ingest word)
        lines.append(f"{len(unknown)} file(s) not recognised (listed above) are not scored")
    if empty:
        lines.append(
            f"{len(empty)} file(s) were read but gave no conversation (everything in them was "
            f"ignored, see above): {', '.join(empty)}"
        )
    return lines


def read_inputs(
    paths: Sequence[str], fmt: str, renderings: RenderCache | None = None
) -> tuple[TraceSpool, IngestReport]:
    """The conversations of ``paths`` in a spool and the ingest accounting, printed on stderr.

    The caller closes the spool. ``renderings`` is the run's render cache (the spool keeps what
    it renders). The report is what ``agent-eval ingest --json`` prints (``score --json``
    carries it as ``inputs``).

    Raises:
        InputError: no paths, or no input could be read at all.
        NoConversationError: the inputs were read but hold no conversation; the message says
            why, as :func:`~agent_eval.cli._ingest_cmds.no_conversation_reason` does for
            ``ingest`` (files unread, spans and records ignored with their reasons).

    """
    if not paths:
        raise InputError("no input: give PATH... (files, directories or globs) to score")
    run = ingest(paths, format=fmt)
    with ingest_with_progress(run.report, err_console):  # a line on a terminal, else nothing
        spool = TraceSpool.collect(run, renderings)
    try:
        _say_read(run.report, paths, spool)
    except BaseException:
        spool.close()
        raise
    return spool, run.report


def read_inputs_on_ray(
    paths: Sequence[str], fmt: str, address: str | None, renderings: RenderCache | None = None
) -> tuple[TraceSpool, IngestReport]:
    """:func:`read_inputs`, with the files read and regrouped on Ray (``--engine ray``).

    Joins the cluster (``address``, else ``$RAY_ADDRESS``, else a local one), reads with the
    ingest stages as Ray tasks (:mod:`agent_eval.run.cluster._inputs`; local paths
    and object-store URLs) and prints the same accounting.

    Raises:
        InputError / NoConversationError: as :func:`read_inputs`.

    """
    if not paths:
        raise InputError("no input: give PATH... (files, directories or globs) to score")
    from agent_eval.run.cluster._executor import connect, require_ray
    from agent_eval.run.cluster._inputs import read_on_ray

    ray = require_ray()
    connect(ray, address)
    read = read_on_ray(ray, paths, fmt)
    spool = TraceSpool.collect(read.conversations, renderings)
    try:
        _say_read(read.report, paths, spool)
    except BaseException:
        spool.close()
        raise
    return spool, read.report


def _say_read(report: IngestReport, paths: Sequence[str], spool: TraceSpool) -> None:
    print_summary(report)
    for line in no_conversation_lines(report):
        err_console.print(escape(line), highlight=False, soft_wrap=True)
    if not spool:
        raise NoConversationError(no_conversation_reason(report, ", ".join(paths)))


def check_references(
    references: Mapping[str, object], conversation_ids: Iterable[str], source: Path
) -> int:
    """Print how many ids of the ``source`` reference file match a conversation; return it.

    ``conversation_ids``: the input's (a spool's :attr:`~TraceSpool.conversation_ids`).
    When none matches the line is a warning showing a few ids of each side: every
    conversation would then go without the file's references.
    """
    ids = set(conversation_ids)
    matched = sum(1 for conversation_id in references if conversation_id in ids)
    line = (
        f"references: {matched} of {len(references)} id(s) in {source} match a conversation "
        f"of the input ({len(ids)} conversation(s))"
    )
    if matched == 0:
        line = (
            f"warning: none of the {len(references)} conversation id(s) in {source} matches a "
            f"conversation of the input (the file has {_examples(references)}; the input has "
            f"{_examples(ids)}); check its conversation_id column"
        )
    err_console.print(escape(line), highlight=False, soft_wrap=True)
    return matched


def _examples(ids: Iterable[str]) -> str:
    every = sorted(ids)
    more = ", ..." if len(every) > MAX_IDS_SHOWN else ""
    return ", ".join(repr(i) for i in every[:MAX_IDS_SHOWN]) + more
