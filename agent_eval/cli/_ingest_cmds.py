"""agent-eval CLI: ``ingest PATH... [--format auto|NAME] [--out FILE] [--json]``.

Reads files, directories, globs, ``-`` (standard input, named ``<stdin>``) and pipes; gzip'd
files are decompressed as they are read. While reading, a progress line (file, bytes, spans)
is drawn on stderr when it is a terminal, and erased. Writes one AgentTrace JSON per line (to
``--out``, else stdout; ``--out -`` is stdout too) as conversations are produced, then a
summary on stderr: files, spans, log records, conversations and the span accounting,
``used + ignored = read``, with the reasons; for files of whole conversations (chat logs,
datasets) the record accounting, ``records: used + skipped = read``. ``--json`` prints the
machine summary (:meth:`IngestReport.to_json`, and ``records``:
:meth:`IngestReport.records_json`) on stdout instead; the traces then go only to ``--out`` (a
file).
A file that cannot be read is listed as an error and the others are still ingested. ``--out``
is written atomically (a temporary file beside it, renamed when complete), so a full disk or a
kill never leaves a half line. Exit codes (:mod:`agent_eval.cli._exit_codes`): 0 when at least
one conversation was produced; 2 for a usage error; 3 when no input at all could be read; 4
when the inputs were read but gave no conversation (the message says why; the summary gives
the reason per file and span); 5 when ``--out`` cannot be written. Never a traceback.
"""

from __future__ import annotations

import os
import sys
from collections import Counter
from collections.abc import Iterable
from contextlib import AbstractContextManager, ExitStack, nullcontext
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, TextIO

import typer

from agent_eval._terminal_text import escape_control
from agent_eval.cli._app import app, error_console, print_plain
from agent_eval.cli._exit_codes import EXIT_NOTHING, EXIT_USAGE, exit_code
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._quiet import machine_stdout
from agent_eval.errors import AgentEvalError, ConfigError, OutputError
from agent_eval.ingest import IngestReport, ingest
from agent_eval.ingest._accounting import FileReport
from agent_eval.ingest._pipeline import NOT_RECOGNISED, known_formats
from agent_eval.ingest.containers._base import Skipped, containers

if TYPE_CHECKING:
    from rich.console import Console

__all__ = [
    "EXIT_NO_CONVERSATIONS",
    "ingest_command",
    "ingest_with_progress",
    "no_conversation_reason",
    "print_summary",
    "summary_lines",
    "unrecognised_files",
]

EXIT_NO_CONVERSATIONS = EXIT_NOTHING
"""Exit code of ``ingest`` when the inputs were read but produced no conversation."""
STDOUT = "-"
"""``--out -``: the traces go to stdout, as without ``--out`` (refused with ``--json``, which
prints the summary there)."""

MAX_SKIPPED_SHOWN = 10
"""Skipped items listed with their detail in the stderr summary (all are counted)."""


def _reasons(counts: dict[str, int]) -> str:
    return ", ".join(f"{reason} {n}" for reason, n in sorted(counts.items()) if n)


def _accounting(what: str, used: int, ignored: dict[str, int], read: int) -> list[str]:
    line = f"{what}: {used} used + {sum(ignored.values())} ignored = {read} read"
    return [line] + ([f"  ignored: {_reasons(ignored)}"] if any(ignored.values()) else [])


def _records_lines(report: IngestReport) -> list[str]:
    """The record accounting lines of the summary.

    ``records: U used + S skipped = R read`` and the skip reasons, for files of whole
    conversations (chat logs, datasets); ``records skipped: ...`` for records of span files
    that held no span to count (an OTLP JSON Lines line that does not parse).
    """
    lines = []
    if any(f.whole_conversations for f in report.files):
        skips = report.record_skips
        lines.append(
            f"records: {report.records_used} used + {sum(skips.values())} skipped = "
            f"{report.records_read} read"
        )
        if skips:
            lines.append(f"  skipped: {_reasons(skips)}")
    others = report.records_ignored - report.record_skips
    if others:
        lines.append(f"records skipped: {_reasons(others)}")
    return lines


def unrecognised_files(report: IngestReport) -> list[FileReport]:
    """The files no container recognises (listed as ``not recognised``; they are not errors)."""
    return [f for f in report.files if f.error and f.error.endswith(NOT_RECOGNISED)]


def _file_counts(report: IngestReport) -> str:
    unknown = len(unrecognised_files(report))
    counts = (
        (sum(1 for f in report.files if f.error) - unknown, "with errors"),
        (unknown, "not recognised"),
        (sum(1 for f in report.files if f.note), "not trace file(s)"),
    )
    return f"{len(report.files)} file(s)" + "".join(f", {n} {what}" for n, what in counts if n)


def _file_lines(report: IngestReport) -> list[str]:
    """Errors, companion files passed over, and files no container recognises."""
    unknown = unrecognised_files(report)
    lines = [f"error: {f.error}" for f in report.files if f.error and f not in unknown]
    lines += [f"skipped {f.path}: {f.note}" for f in report.files if f.note]
    if unknown:
        it = "it; if it holds" if len(unknown) == 1 else "them; if they hold"
        lines.append(
            f"not recognised: {', '.join(f.path for f in unknown)} (no container recognises "
            f"{it} traces, force one with --format NAME)"
        )
        lines.append(_known_formats())
    return lines


def summary_lines(report: IngestReport) -> list[str]:
    """The human summary of an ingest run, one string per line (plain text, no markup).

    Files that are not traces are not errors: a labels, verdicts, references or results file
    found next to the traces is listed as ``skipped PATH: not a trace file: labels (use
    --labels)``, and files no container recognises as ``not recognised: PATH, ...`` with the
    known formats.
    """
    lines = [
        f"ingested {_file_counts(report)}: {report.spans_read} spans, {report.logs_read} log "
        f"records -> {_counted(report.conversations, 'conversation')}"
    ]
    lines += _accounting("spans", report.spans_used, report.spans_ignored, report.spans_read)
    if report.logs_read:
        lines += _accounting("logs", report.logs_used, report.logs_ignored, report.logs_read)
    lines += _records_lines(report)
    if not report.balanced:
        lines.append("warning: the accounting does not add up (a bug; please report it)")
    if report.text_replaced:
        lines.append(
            f"text: {report.text_replaced} code point(s) UTF-8 cannot encode (lone surrogates, "
            "e.g. a truncated emoji) replaced by U+FFFD"
        )
    if report.internal_errors:
        lines.append(
            f"warning: {report.internal_errors} internal error(s) caught (a bug; the rest was "
            "still read; run with AGENT_EVAL_DEBUG=1 for the traceback, and please report it)"
        )
    return lines + _file_lines(report) + skipped_lines(report)


def skipped_lines(report: IngestReport) -> list[str]:
    """``skipped: FILE:LINE [trace T] [span S]: reason: detail``, one per skipped item.

    The first :data:`MAX_SKIPPED_SHOWN` of the run's skipped records and spans, each naming
    where it was read, for every command that reads traces (``ingest``, ``score``, ``show``).
    A hint that several ``no_message_content`` items share (how to record the text) is said
    once, after them, with how many of the skipped conversations it concerns.
    """
    hints = Counter(h for item in report.skipped if (h := _shared_hint(item)))
    repeated = [h for h, n in hints.items() if n > 1]
    lines = []
    for item in report.skipped[:MAX_SKIPPED_SHOWN]:
        ids = "".join(
            f" {label} {value}"
            for label, value in (("trace", item.trace_id), ("span", item.span_id))
            if value
        )
        detail, hint = item.detail, _shared_hint(item)
        if hint in repeated:
            detail = detail[: -len(hint) - len(_HINT_SEPARATOR)] + " (why: below)"
        lines.append(f"skipped: {item.source or '?'}{ids}: {item.reason}: {detail}")
    lines += [
        f"why {hints[hint]} skipped conversations (no_message_content) have no text: {hint}"
        for hint in repeated
    ]
    return lines


_HINT_SEPARATOR = "; "
"""What separates a ``no_message_content`` detail (which conversation) from its hint (how)."""


def _shared_hint(item: Skipped) -> str | None:
    """The how-to-record-the-text hint of a ``no_message_content`` item, ``None`` for others."""
    if item.reason != "no_message_content":
        return None
    return item.detail.partition(_HINT_SEPARATOR)[2] or None


def print_summary(report: IngestReport, console: Console | None = None) -> None:
    """Print the human summary of an ingest run (:func:`summary_lines`) to ``console``.

    ``None``: the stderr console of every command (:func:`~agent_eval.cli._app.print_plain`,
    which prints a clean summary without importing rich).
    """
    for line in summary_lines(report):
        print_plain(escape_control(line), console)


def _print_error(message: str) -> None:
    """``error: MESSAGE`` (``error:`` in bold red) on the stderr console; ``message`` is literal."""
    from rich.markup import escape

    error_console().print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)


def no_conversation_reason(report: IngestReport, where: str = "") -> str:
    """Why a run that read its inputs produced no conversation, in one sentence.

    E.g. ``"no conversation found: all 3 spans were ignored (invalid_span_id 3)"``; with
    ``where`` (the inputs as given) ``"no conversation found in traces/: ..."``.
    """
    causes = []
    unread = sum(1 for f in report.files if f.error)
    if unread:
        causes.append(f"{unread} of {len(report.files)} file(s) could not be read")
    if report.spans_read:
        every = f"all {report.spans_read} spans were" if report.spans_read > 1 else "the span was"
        causes.append(f"{every} ignored ({_reasons(report.spans_ignored)})")
    if ignored_logs := sum(report.logs_ignored.values()):
        share = "all" if ignored_logs == report.logs_read else f"{ignored_logs} of"
        reasons = _reasons(report.logs_ignored)
        records = f"{share} {report.logs_read} log records were"
        if report.logs_read == 1:
            records = "the log record was"
        causes.append(f"{records} ignored ({reasons})")
    if report.logs_used:  # joined to spans that still gave no conversation
        causes.append(
            f"the {report.logs_used} log record(s) joined to those spans did not make a "
            "conversation either"
        )
    if report.records_ignored:
        total = sum(report.records_ignored.values())
        causes.append(f"{total} record(s) were skipped ({_reasons(report.records_ignored)})")
    causes += [f"{f.path} is {f.note}" for f in report.files if f.note]
    empty = [f.path for f in report.files if not (f.error or f.note or f.conversations)]
    if not causes and empty:  # read, valid, and nothing in them: name them
        named = ", ".join(empty[:5]) + (f" and {len(empty) - 5} more" if len(empty) > 5 else "")
        holds = "holds" if len(empty) == 1 else "hold"
        causes.append(f"{named} {holds} no spans, log records or conversations")
    if not causes:
        causes.append("the inputs hold no spans, log records or conversations")
    found = f"no conversation found in {where}" if where else "no conversation found"
    return f"{found}: " + "; ".join(causes) + "; the summary gives each reason"


def _counted(count: int, noun: str) -> str:
    """``"1 conversation"``, ``"2 conversations"``."""
    return f"{count} {noun}" if count == 1 else f"{count} {noun}s"


def _write_traces(paths: list[str], fmt: str, out: TextIO | None) -> IngestReport:
    run = ingest(paths, format=fmt)
    # no progress line between traces written to the same terminal
    draw = out is None or not out.isatty()
    with ingest_with_progress(run.report, _stderr_terminal() if draw else None):
        for trace in run:
            if out is not None:
                out.write(trace.model_dump_json())
                out.write("\n")
    return run.report


def _stderr_terminal() -> Console | None:
    """The stderr console when stderr is a terminal, else ``None`` (and no rich imported)."""
    return error_console() if sys.stderr.isatty() else None


def ingest_with_progress(
    report: IngestReport, console: Console | None
) -> AbstractContextManager[None]:
    """The progress line on ``console`` while the inputs are read (only on a terminal)."""
    if console is None or not console.is_terminal:
        return nullcontext()
    from agent_eval.cli._ingest_progress import ingest_progress  # rich.live: only when drawn

    return ingest_progress(report, console)


def _write_out(paths: list[str], fmt: str, out: Path) -> IngestReport:
    """Write the traces to a temporary file beside ``out``, then rename it onto ``out``.

    Raises:
        OutputError: ``out`` cannot be written (disk full, permissions); the message says what
            was kept (``out`` as it was before: nothing half-written).

    """
    temporary = out.with_name(f".{out.name}.{os.getpid()}.tmp")
    written = 0
    try:
        out.parent.mkdir(parents=True, exist_ok=True)
        with temporary.open("w", encoding="utf-8") as stream:
            run = ingest(paths, format=fmt)
            with ingest_with_progress(run.report, _stderr_terminal()):
                for trace in run:
                    stream.write(trace.model_dump_json())
                    stream.write("\n")
                    written += 1
            stream.flush()
            os.fsync(stream.fileno())
        os.replace(temporary, out)
    except OSError as exc:
        temporary.unlink(missing_ok=True)
        raise OutputError(
            f"cannot write {out}: {exc.strerror or exc}; {written} conversation(s) had been "
            f"written to a temporary file, which was removed: {out} is unchanged"
        ) from None
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
    return run.report


def _open_out(stack: ExitStack, out: Path | None, as_json: bool) -> TextIO | None:
    if out is None:
        return None if as_json else machine_stdout()  # written with --quiet too
    return None


def _format_help() -> str:
    return "auto (detect per file) or a container name: " + ", ".join(_names())


def _names() -> Iterable[str]:
    try:  # from the entry points' metadata: listing them imports no container
        return containers.declared_names()
    except Exception:  # the help text must never fail
        return []


def _known_formats() -> str:
    try:
        return known_formats()
    except Exception:  # the summary must never fail
        return "known formats: see agent-eval ingest --help"


@app.command("ingest", cls=HelpCommand)
def ingest_command(
    paths: Annotated[
        list[str],
        typer.Argument(
            metavar="PATH",
            help="Files, directories (recursive), globs, or '-' for standard input; gzip'd "
            "files are read.",
        ),
    ],
    format: Annotated[str, typer.Option("--format", "-f", help=_format_help())] = "auto",
    out: Annotated[
        Path | None,
        typer.Option(
            "--out",
            "-o",
            metavar="FILE",
            help="Write AgentTrace JSON Lines to this file (atomically); '-' or none: stdout.",
        ),
    ] = None,
    as_json: Annotated[
        bool, typer.Option("--json", help="Print the machine summary on stdout instead.")
    ] = False,
) -> None:
    """Read traces and write one AgentTrace JSON per line, with the span accounting.

    The summary on stderr accounts for every span (used + ignored = read) and, for chat logs
    and datasets, every record (used + skipped = read), with the reasons.

    Exit code 0 when at least one conversation was written; 3 when no input could be read at
    all; 4 when the inputs were read but gave no conversation (every span or record ignored,
    with the reasons); 5 when --out cannot be written (it is written atomically).
    """
    if out is not None and str(out) == STDOUT:
        if as_json:  # the error document carries this message and its type (ConfigError)
            refusal = ConfigError(
                "--out - writes the traces to stdout, where --json prints the summary; give "
                "--out a file name with --json"
            )
            _print_error(str(refusal))
            raise typer.Exit(EXIT_USAGE) from refusal
        out = None  # '-' is stdout, as when --out is not given
    try:
        if out is not None:
            report = _write_out(paths, format, out)
        else:
            with ExitStack() as stack:
                report = _write_traces(paths, format, _open_out(stack, out, as_json))
    except AgentEvalError as exc:
        _print_error(escape_control(str(exc)))
        raise typer.Exit(exit_code(exc)) from None
    if as_json:
        from agent_eval.cli._json_output import emit_json  # its payload models cost 30 ms

        emit_json("ingest", {**report.to_json(), "records": report.records_json()})
    else:
        print_summary(report)
    if not report.conversations:
        _print_error(escape_control(no_conversation_reason(report)))
        raise typer.Exit(EXIT_NO_CONVERSATIONS)
