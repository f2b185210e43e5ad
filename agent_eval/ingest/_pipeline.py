"""The ingest API: paths in, AgentTraces out, with the span accounting of the run.

``ingest(paths)`` expands the paths (:mod:`agent_eval.ingest._paths`), picks a container per
file (``--format auto``: the registered containers are asked in ``(priority, name)`` order and
the first whose ``sniff`` recognises the file's first 64 KiB reads it), streams the container's
items, sends spans and log records to the assembler and passes whole conversations (chat logs,
AgentTrace JSONL) straight through. A file that cannot be read is an error in the report, not
the end of the run; only when every input fails does iteration raise.
"""

from __future__ import annotations

import gc
import zlib
from collections.abc import Callable, Iterable, Iterator
from pathlib import Path
from typing import Any, NoReturn, Protocol

from agent_eval._trace import AgentTrace
from agent_eval.errors import DecodeError, InputError, UnknownFormatError
from agent_eval.ingest import _safe_text as safe_text
from agent_eval.ingest import _sources as sources
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._paths import InputPath, expand_paths
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import (
    Container,
    ContainerItem,
    RecordsUsed,
    Skipped,
    containers,
)

__all__ = [
    "HEAD_BYTES",
    "NOT_RECOGNISED",
    "IngestRun",
    "RecordSink",
    "detect_container",
    "feed_items",
    "guarded",
    "ingest",
    "known_formats",
    "read_input_file",
    "read_items",
]


class RecordSink(Protocol):
    """Where :func:`feed_items` sends spans and log records (the assembler, or a collector)."""

    def add_span(self, span: SpanRecord, file: FileReport) -> None:
        """Take one span read from ``file``."""

    def add_log(self, log: LogRecord, file: FileReport) -> None:
        """Take one log record read from ``file``."""


def _debug_traceback(message: str, *args: object) -> None:
    """Log ``message`` at DEBUG with the exception being handled (``logging`` imported here)."""
    import logging  # an ingest that catches nothing imports no logging (issue 15)

    logging.getLogger(__name__).debug(message, *args, exc_info=True)


HEAD_BYTES = sources.HEAD_BYTES
"""How much of a file ``Container.sniff`` sees (decompressed, for a gzip'd file)."""
INGEST_GC_THRESHOLDS = (20_000, 20, 1_000_000)
"""``gc.set_threshold`` while ingest produces: young collections rarer, no full collections
(Python's defaults are ``(700, 10, 10)``; see :func:`_young_collections_only`)."""
NOT_RECOGNISED = "no container recognises this file; force one with --format NAME"
"""The per-file error when ``--format auto`` finds no container for a file."""


class IngestRun:
    """One ingest run: iterate it once for the AgentTraces; ``report`` is complete afterwards.

    Args:
        produce: Called once, on iteration, with the run's report; yields the AgentTraces and
            fills the report as it goes.

    """

    def __init__(self, produce: Callable[[IngestReport], Iterator[AgentTrace]]) -> None:
        self.report = IngestReport()
        self._produce = produce
        self._started = False

    def __iter__(self) -> Iterator[AgentTrace]:
        """Yield the conversations, streaming; a second iteration raises ``RuntimeError``."""
        if self._started:
            raise RuntimeError("an IngestRun can be iterated once; call ingest() again")
        self._started = True
        return _young_collections_only(self._produce(self.report))

    def collect(self) -> list[AgentTrace]:
        """All conversations as a list (for small inputs and tests)."""
        return list(self)


def _young_collections_only(items: Iterator[AgentTrace]) -> Iterator[AgentTrace]:
    """``items``, produced with the garbage collector's thresholds at :data:`INGEST_GC_THRESHOLDS`.

    Ingest allocates millions of small objects that live until their conversation is built;
    each full collection walks all of them (issue 15: 48% of ingest CPU on large files before
    memory was bounded, 12% after). While the next item is being produced only young
    collections run; the caller's thresholds are restored around every ``yield``, so the
    caller's own code (scoring, writing) runs with them, and cycles made while reading (a few
    dozen per run) are freed by the next full collection.
    """
    saved = gc.get_threshold()
    try:
        while True:
            gc.set_threshold(*INGEST_GC_THRESHOLDS)
            try:
                item = next(items)
            except StopIteration:
                return
            finally:
                gc.set_threshold(*saved)
            yield item
    finally:
        close = getattr(items, "close", None)
        if close is not None:
            close()


def ingest(paths: Iterable[str | Path] | str | Path, *, format: str = "auto") -> IngestRun:
    """Read traces from files, directories (recursive) and glob patterns.

    Args:
        paths: Inputs, in order. A single path may be passed as is.
        format: ``"auto"`` to detect the container per file, or a registered container name
            (``"otlp-json"``, ``"tau-bench"``...) to force it for every file.

    Returns:
        An :class:`IngestRun` yielding :class:`~agent_eval._trace.AgentTrace` objects: whole
        conversations from chat-log containers as they are read, span-based conversations once
        every file has been read (a conversation may span several files).

    Raises:
        UnknownPluginError: ``format`` names no registered container (raised here, eagerly).
        UnknownFormatError / DecodeError / InputError: during iteration, when no input at all
            could be read; otherwise per-file errors are in ``report.files[i].error``.

    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    forced = None if format == "auto" else containers.get(format)
    return IngestRun(lambda report: _run(expand_paths(items), forced, report))


def _run(
    inputs: list[InputPath], forced: Container | None, report: IngestReport
) -> Iterator[AgentTrace]:
    from agent_eval.ingest._assemble import Assembler

    assembler = Assembler(report)
    failures: list[InputError] = []
    report.inputs = len(inputs)
    for item in inputs:
        yield from read_input_file(item, forced, report, assembler, failures)
    yield from assembler.finish()
    if not inputs:
        raise InputError("no input paths given")
    if len(failures) == len(inputs):
        raise _all_failed(failures)


def read_input_file(
    item: InputPath,
    forced: Container | None,
    report: IngestReport,
    sink: RecordSink,
    failures: list[InputError],
) -> Iterator[AgentTrace]:
    """Read one input into ``sink``, its :class:`FileReport` appended to ``report``.

    Whole conversations (chat logs) are yielded; spans and log records go to ``sink``. A file
    that cannot be read gets its ``error`` and the :class:`InputError` is appended to
    ``failures``; a companion file (labels...) gets its ``note`` and is not read.
    """
    file = FileReport(path=item.path)
    report.files.append(file)
    if item.note is not None:  # a labels/references/results file: not a trace file
        file.note = item.note
        if sources.archive_note(item.path) is not None:  # an archive: an unread input
            failures.append(InputError(item.note, path=item.path))
        return
    replaced = safe_text.replaced_so_far()
    try:
        if item.error is not None:
            raise InputError(item.error, path=item.path)
        container = forced or detect_container(item.path)
        file.container = container.name
        file.whole_conversations = container.whole_conversations
        yield from feed_items(read_items(container, item.path), file, report, sink)
    except InputError as exc:
        file.error = str(exc)
        failures.append(exc)
    except Exception as exc:  # safety net: a bug must cost this file, not the run
        failures.append(_internal_error(exc, file, report))
    finally:
        sources.release(item.path)
        file.text_replaced = safe_text.replaced_so_far() - replaced
        report.text_replaced += file.text_replaced


def read_items(container: Container, path: str) -> Iterator[ContainerItem]:
    """The container's items for ``path``, with read errors as :class:`InputError`.

    OS-level errors, gzip data cut short or corrupt, and a stream input (standard input, a
    pipe) that the container tries to seek in or open by name
    (:func:`agent_eval.ingest._sources.read_error`); the items yielded before are kept.
    """
    try:
        yield from container.read(path)
    except (OSError, EOFError, zlib.error) as exc:
        _raise_read_error(exc, path, container.name)


def _raise_read_error(exc: OSError | EOFError | zlib.error, path: str, reader: str) -> NoReturn:
    """Raise the typed error for ``exc``, raised while ``reader`` read ``path``.

    :func:`sources.read_error`'s (gzip cut short or corrupt, a stream that cannot seek), else an
    :class:`InputError` for any other ``OSError``; anything else is raised as it is.
    """
    known = sources.read_error(exc, path, reader)
    if known is not None:
        raise known from None
    if isinstance(exc, OSError):
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=path) from None
    raise exc


def feed_items(
    items: Iterator[ContainerItem], file: FileReport, report: IngestReport, assembler: RecordSink
) -> Iterator[AgentTrace]:
    """Count each container item in ``file`` and route it.

    Spans and log records go to the assembler (or any :class:`RecordSink`), skipped items to
    the report, and whole
    conversations are yielded; a conversation, or :class:`RecordsUsed`, marks ``file`` as one
    of whole conversations, whose records are accounted (a skipped item that held no span or
    log record is one record skipped).
    """
    for item in items:
        if isinstance(item, SpanRecord):
            file.spans_read += 1
            guarded(assembler.add_span, item, file, report)
        elif isinstance(item, LogRecord):
            file.logs_read += 1
            guarded(assembler.add_log, item, file, report)
        elif isinstance(item, Skipped):
            file.spans_read += item.spans
            file.logs_read += item.logs
            if not (item.spans or item.logs):
                file.records_skipped[item.reason] += 1
            report.note_skipped(item)
        elif isinstance(item, AgentTrace):
            file.conversations += 1
            file.whole_conversations = True
            report.conversations += 1
            yield item
        elif isinstance(item, RecordsUsed):
            file.records_declared = (file.records_declared or 0) + item.count
            file.whole_conversations = True
        else:
            raise TypeError(f"container {file.container!r} yielded {type(item).__name__}")


def guarded(
    add: Callable[[Any, FileReport], None],
    item: SpanRecord | LogRecord,
    file: FileReport,
    report: IngestReport,
) -> None:
    """``add(item, file)``; an unexpected exception costs this one record (``internal_error``)."""
    try:
        add(item, file)
    except Exception as exc:  # safety net: a bug must cost one record, not the file
        _debug_traceback("internal error reading a record of %s", file.path)
        report.internal_errors += 1
        is_span = isinstance(item, SpanRecord)
        report.note_skipped(
            Skipped(
                reason="internal_error",
                detail=f"{type(exc).__name__}: {str(exc)[:200]} (a bug; the traceback is in "
                "the debug log); please report it with this file",
                source=item.source if is_span else None,
                trace_id=item.trace_id,
                span_id=item.span_id,
                spans=1 if is_span else 0,
                logs=0 if is_span else 1,
            )
        )


def _internal_error(exc: Exception, file: FileReport, report: IngestReport) -> InputError:
    """Record an unexpected exception reading ``file`` as its ``internal_error``."""
    _debug_traceback("internal error reading %s", file.path)
    report.internal_errors += 1
    error = InputError(
        f"internal_error: {type(exc).__name__}: {str(exc)[:200]} (a bug; the traceback is in "
        "the debug log); what was read before it is kept",
        path=file.path,
    )
    file.error = str(error)
    return error


def detect_container(path: str) -> Container:
    """The first container, in ``(priority, name)`` order, that recognises the file.

    The containers see the file's first :data:`HEAD_BYTES` as :func:`sources.read_head` gives
    them: decompressed when the file is gzip'd, the kept bytes of standard input or a pipe.

    A JSON Lines file whose first lines are bad (cut off, garbled, of another shape) is
    recognised from its first record a container recognises, so that the bad lines cost only
    themselves (:func:`~agent_eval.ingest._json_diagnosis.later_records`).

    Raises:
        DecodeError: none does and the file starts like JSON but does not parse (cut short or
            invalid): names the line and column, and the container it looks like; or the file
            is an archive or compressed in a way that is not read (zip, tar, bzip2, xz, zstd):
            says which, with the command that extracts it.
        UnknownFormatError: none does; the message lists the registered containers.
        InputError: the file cannot be opened.

    """
    try:
        head = sources.read_head(path, HEAD_BYTES)
    except (OSError, EOFError, zlib.error) as exc:
        _raise_read_error(exc, path, "--format auto")
    if not head.strip():
        raise DecodeError("the file is empty", path=path)
    kind = sources.compressed_kind(head)
    if kind is not None:  # no container reads it: say what it is and how to get at its traces
        raise DecodeError(f"not read: it is {kind.replace('FILE', path)}", path=path)
    for container in _by_priority():
        if _sniffs(container, path, head):
            return container
    from agent_eval.ingest._json_diagnosis import diagnose_invalid_json, later_records

    for later in later_records(head):  # JSON Lines whose first lines are bad: sniff the rest
        for container in _by_priority():
            if _sniffs(container, path, later):
                return container

    try:  # JSON cut short loses the keys sniffs look for: say where it breaks instead
        size = sources.input_size(path, head)
        invalid = None if size is None else diagnose_invalid_json(path, head, size, _by_priority())
    except OSError as exc:
        raise InputError(f"cannot read the file: {exc.strerror or exc}", path=path) from None
    if invalid is not None:
        raise invalid
    raise UnknownFormatError(NOT_RECOGNISED, path=path)


def known_formats() -> str:
    """``"known formats (--format NAME): a, b, ..."``: the registered containers, sorted."""
    return f"known formats (--format NAME): {', '.join(sorted(c.name for _, c in containers))}"


def _by_priority() -> list[Container]:
    return sorted((c for _, c in containers), key=lambda c: (c.priority, c.name))


def _sniffs(container: Container, path: str, head: bytes) -> bool:
    try:
        return container.sniff(path, head)
    except Exception:  # a third-party sniff bug must not decide the format or end the run
        return False


def _all_failed(failures: list[InputError]) -> InputError:
    if all(isinstance(exc, UnknownFormatError) for exc in failures):
        files = ", ".join(exc.path or "?" for exc in failures)
        return UnknownFormatError(f"no container recognises {files}; {known_formats()}")
    if len(failures) == 1:
        return failures[0]
    lines = "\n".join(f"  {exc}" for exc in failures)
    return InputError(f"no input could be read:\n{lines}")
