"""Progress of reading the inputs, on stderr, for ``ingest`` and the ingest phase of ``score``.

One line, redrawn a few times a second while the inputs are read and erased when they are:
the file being read (``file 2/11 big.jsonl``), its bytes read of its size (of a gzip'd file,
the compressed bytes; of standard input, the bytes read), and the spans, log records and
conversations so far. Shown only when stderr is a terminal, so CI logs and redirected stderr
stay clean; the counts come from the run's :class:`~agent_eval.ingest.IngestReport`, read by
rich's refresh thread, so the reading loop does no extra work for it.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from rich.console import Console
from rich.live import Live
from rich.text import Text

from agent_eval.ingest import IngestReport
from agent_eval.ingest import _sources as sources

__all__ = ["REFRESH_PER_SECOND", "ingest_progress", "progress_line"]

REFRESH_PER_SECOND = 4
"""How often the progress line is redrawn."""
_UNITS = ("B", "KB", "MB", "GB", "TB")


def _size(count: int) -> str:
    value = float(count)
    for unit in _UNITS:
        if value < 1000 or unit == _UNITS[-1]:
            return f"{value:.0f} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1000
    raise AssertionError("unreachable")


def progress_line(report: IngestReport) -> str:
    """``"reading file 2/11 big.jsonl: 312.4 MB of 723.0 MB (43%); 310,122 spans, ..."``.

    ``"reading the inputs; ..."`` before the first file is opened, and ``"read 11/11 file(s);
    ..."`` once the last is closed (its conversations are being put together). Log records are
    counted when there are any.
    """
    files = report.files
    counts = f"{report.spans_read:,} spans"
    if report.logs_read:
        counts += f", {report.logs_read:,} log records"
    if not files:
        return f"reading the inputs; {counts}"
    noun = "conversation" if report.conversations == 1 else "conversations"
    counts += f", {report.conversations:,} {noun}"
    total = max(report.inputs, len(files))
    current = files[-1]
    position, size = sources.position(current.path), sources.size(current.path)
    if position is None and len(files) == total:
        return f"read {total}/{total} file(s); {counts}"
    where = f"reading file {len(files)}/{total} {current.path}"
    if position is not None and size:
        where += f": {_size(position)} of {_size(size)} ({min(100, 100 * position // size)}%)"
    elif position is not None:
        where += f": {_size(position)}"
    return f"{where}; {counts}"


@contextmanager
def ingest_progress(report: IngestReport, console: Console) -> Iterator[None]:
    """Show :func:`progress_line` on ``console`` while the block runs, if it is a terminal.

    Args:
        report: The report of the run being iterated in the block (``IngestRun.report``).
        console: Where to draw (the stderr console); nothing is drawn when it is not a
            terminal (``Console.is_terminal``), and the line is erased when the block ends.

    """
    if not console.is_terminal:
        yield
        return
    live = Live(
        get_renderable=lambda: Text(progress_line(report), no_wrap=True, overflow="ellipsis"),
        console=console,
        transient=True,
        refresh_per_second=REFRESH_PER_SECOND,
        redirect_stdout=False,
        redirect_stderr=False,
    )
    with live:
        yield
