"""Ingest as engine-neutral stages that an engine runs as tasks, with the result of ``ingest()``.

One process (``ingest()``) reads every input, then assembles. An engine (Ray, Dask, Spark)
runs the same code as four stages with two regroupings::

    read_input(path, index=i)        one task per input file          -> InputPart
      trace_pieces(part)             one row per trace id of the file -> TracePiece
    -- regroup by TracePiece.trace_id --
    assemble_trace(pieces)           one task per trace               -> TraceParts
      TraceParts.keys                one row per group key            -> (key, TraceParts)
    -- regroup by key --
    assemble_conversations(parts, key=key, report=r)  one task per key -> [AgentTrace]
    merge_reports([...every stage's report...])                       -> IngestReport
    conversation_order(trace, parts)  (optional) a sort key giving ingest()'s order

and gives the same conversations (every field, notes included) and the same accounting as
``ingest()`` of the same inputs in the same order. Every value passed between stages is
plain picklable data (dataclasses of our own records).

**Order.** Each record carries its input's ``index`` (the file's place among the inputs) and
its position in the file, so a trace whose records sit in several files is read back in
exactly the order one process reads them, whatever order the tasks ran in: spans are ordered
by start time, then parentage, then that place (:func:`span_seq`); the first copy of a span
read twice wins. ``assemble_conversations`` returns its conversations in ``ingest()``'s order
within its group; across groups, :func:`conversation_order` gives the key that restores
``ingest()``'s order.

**Group keys** (:attr:`TraceParts.keys`). A trace whose spans carry a conversation id
(``gen_ai.conversation.id``, ``session.id``...) goes to each conversation id it holds
(a span without one takes its ancestor's or its trace's, exactly as one process groups).
A trace without any conversation id is a conversation of its own, and may be a bare call that
a later call of the same client replays (:mod:`~agent_eval.ingest._folding`). One process
folds such calls only when they were read from the same files (``AgentTrace.source.files``:
the files of the spans used), so every folding candidate is sent to the group of those
files (:func:`bare_key`): ``assemble_trace`` builds the trace once to learn them (a trial
build whose accounting is discarded; the group builds it again for real). Folding candidates
therefore all meet in one group, and a group holds nothing else.
A trace without a conversation id that does not build (no message content) goes to the group
of its trace id, where its spans are counted.

Limits of the equivalence, by design: a trace without any conversation id whose trace id is
also another trace's conversation id (an instrumentation that names sessions after their first
trace, that trace left without the id) is assembled apart from that conversation; the first
:data:`~agent_eval.ingest._accounting.MAX_DETAILS` skipped items a merged report keeps with
their detail may be others than one process keeps (the counts are equal); and the note on a
conversation whose final reply is missing counts the ``gen_ai.choice`` records without span
context of the whole input only when the engine passes ``orphan_choices`` (the counts of every
:class:`InputPart`) to :func:`assemble_conversations`; otherwise those of its own files.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

from agent_eval._trace import AgentTrace
from agent_eval.errors import InputError
from agent_eval.ingest import _safe_text as safe_text
from agent_eval.ingest._accounting import MAX_DETAILS, FileReport, IngestReport
from agent_eval.ingest._paths import expand_paths
from agent_eval.ingest._pipeline import guarded, read_input_file
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.containers._base import containers

if TYPE_CHECKING:  # assembly is imported when a stage runs (`import agent_eval.ingest` stays light)
    from agent_eval.ingest._assemble import Assembler
    from agent_eval.ingest._span_entry import SpanEntry

__all__ = [
    "BARE_KEY_PREFIX",
    "InputPart",
    "TraceParts",
    "TracePiece",
    "assemble_conversations",
    "assemble_trace",
    "bare_key",
    "conversation_order",
    "input_files",
    "merge_reports",
    "read_input",
    "span_seq",
    "trace_pieces",
]

BARE_KEY_PREFIX = "\x00bare\x1f"
"""Start of the group key of conversations without a conversation id (bare calls), followed
by the files they were read from (:func:`bare_key`); no conversation id starts so."""
POSITION_BITS = 40
"""Bits of a span's place (:func:`span_seq`) given to its position in its file (10^12 records)."""
NO_SPILL = 1 << 62
"""The in-memory span budget of the stages' assemblers: one trace, or one conversation group,
is held whole in memory (its size bounds it)."""

Record = tuple[int, SpanRecord | LogRecord]
"""``(position in the file, record)``: spans and GenAI log records, numbered in file order."""


def span_seq(index: int, position: int) -> int:
    """The place of a record over all inputs: input ``index`` first, then position in the file.

    It orders spans as one process reads them (input after input, each in file order), which
    is how :class:`~agent_eval.ingest._assemble.Assembler` breaks ties between equal start times.
    """
    return (index << POSITION_BITS) + position


@dataclass
class InputPart:
    """One input file read: its records keyed by trace id, in file order, and its accounting.

    Attributes:
        path: The file as given.
        index: Its place among the run's inputs (0-based; the order one process reads them).
        container: The container that read it (``None`` when it could not be read).
        traces: Trace id -> ``(position, record)`` in file order; traces in order of first
            record. Positions count spans and kept log records from 0 over the whole file.
        conversations: Whole conversations the file held (chat logs, AgentTrace JSONL), in
            file order; they need no assembly.
        orphan_choices: ``gen_ai.choice`` log records without span context it held.
        report: This file's accounting: one :class:`FileReport` (records read, container,
            ``error`` when it could not be read, ``note`` when it is a companion file), the
            records skipped while reading, its whole conversations. Merge it with
            :func:`merge_reports`.

    """

    path: str
    index: int
    container: str | None
    traces: dict[str, list[Record]] = field(default_factory=dict)
    conversations: list[AgentTrace] = field(default_factory=list)
    orphan_choices: int = 0
    report: IngestReport = field(default_factory=IngestReport)

    @property
    def error(self) -> str | None:
        """Why the file could not be read, else ``None``."""
        return self.report.files[0].error if self.report.files else None


@dataclass
class TracePiece:
    """One trace's records from one input file (:func:`trace_pieces`).

    Attributes:
        trace_id: 32 hex characters; the key of the first regrouping.
        path / index / container: The input it was read from (see :class:`InputPart`).
        records: ``(position, record)`` in file order.
        orphan_choices: The file's ``gen_ai.choice`` records without span context.

    """

    trace_id: str
    path: str
    index: int
    container: str | None
    records: list[Record]
    orphan_choices: int = 0


@dataclass
class TraceParts:
    """One trace assembled from its pieces: its spans read, log records joined, and keys.

    Attributes:
        trace_id: 32 hex characters.
        seq: The place of its first span over all inputs (:func:`span_seq`): traces are
            assembled into a conversation in this order.
        entries: Its spans as assembly reads them, in input order (opaque to engines).
        keys: The group keys of :func:`assemble_conversations` it belongs to (see the module
            docstring): usually one; none when it had no span (only log records).
        orphan_choices: Path -> ``gen_ai.choice`` records without span context, of the files
            its records came from.
        report: The accounting of this stage (duplicate spans and log records, log records
            joined or not, text replaced): merge it once, whatever number of groups the trace
            goes to.
        ranks: Conversation id -> ``(start, depth, seq)`` of its first span in this trace
            (what :func:`conversation_order` orders conversations by).

    """

    trace_id: str
    seq: int
    entries: list[SpanEntry]
    keys: tuple[str, ...]
    orphan_choices: dict[str, int] = field(default_factory=dict)
    report: IngestReport = field(default_factory=IngestReport)
    ranks: dict[str, tuple[int, int, int]] = field(default_factory=dict)


def input_files(paths: Iterable[str | Path] | str | Path) -> list[str]:
    """The input files behind files, directories (recursive, sorted) and globs, in order.

    The files ``ingest(paths)`` reads, in the order it reads them: give each to
    :func:`read_input` with its place in this list as ``index``. A path that names nothing is
    kept (its :class:`InputPart` reports the error).
    """
    items = [paths] if isinstance(paths, str | Path) else list(paths)
    return [item.path for item in expand_paths(items)]


class _Collector:
    """A :class:`~agent_eval.ingest._pipeline.RecordSink` keeping records by trace, numbered."""

    def __init__(self, part: InputPart) -> None:
        self.part = part
        self.position = 0
        self.choices: dict[str, int] = {}

    def add_span(self, span: SpanRecord, file: FileReport) -> None:
        self.part.traces.setdefault(span.trace_id, []).append((self.position, span))
        self.position += 1

    def add_log(self, log: LogRecord, file: FileReport) -> None:
        from agent_eval.ingest._assemble import admit_log

        kept = admit_log(log, file.path, self.part.report, self.choices)
        if kept is not None and kept.trace_id:
            self.part.traces.setdefault(kept.trace_id, []).append((self.position, kept))
            self.position += 1


def read_input(path: str | Path, *, format: str = "auto", index: int = 0) -> InputPart:
    """Read one input file into its records keyed by trace id, with its accounting.

    Args:
        path: One file (a name from :func:`input_files`), as ``ingest()`` reads it.
        format: ``"auto"`` to detect the container, or a registered container name.
        index: The file's place among the run's inputs (0-based): the order one process
            reads them in, which orders spans whose start times tie.

    Returns:
        An :class:`InputPart`. A file that cannot be read is not raised: its report's file
        has the ``error`` (and :attr:`InputPart.error` says it), as in ``ingest()``.

    Raises:
        UnknownPluginError: ``format`` names no registered container.
        ValueError: ``path`` is a directory or glob naming several files (expand it with
            :func:`input_files`).

    """
    forced = None if format == "auto" else containers.get(format)
    items = expand_paths([path])
    if len(items) != 1:
        raise ValueError(
            f"read_input reads one file; {str(path)!r} names {len(items)}: "
            "give each of input_files(paths) to read_input"
        )
    part = InputPart(path=items[0].path, index=index, container=None)
    report = part.report
    report.inputs = 1
    collector = _Collector(part)
    failures: list[InputError] = []
    part.conversations = list(read_input_file(items[0], forced, report, collector, failures))
    part.container = report.files[0].container
    part.orphan_choices = sum(collector.choices.values())
    return part


def trace_pieces(part: InputPart) -> Iterator[TracePiece]:
    """One :class:`TracePiece` per trace id of the file, in order of first record."""
    for trace_id, records in part.traces.items():
        yield TracePiece(
            trace_id=trace_id,
            path=part.path,
            index=part.index,
            container=part.container,
            records=records,
            orphan_choices=part.orphan_choices,
        )


def assemble_trace(pieces: Sequence[TracePiece]) -> TraceParts:
    """One trace's pieces (from one or several files, any order) read and joined as one.

    Spans are read with the conventions in input order (the first copy of a span read twice
    is used, the others counted ``duplicate_span`` and noted), log records joined to their
    spans, and the trace's group keys found (see the module docstring).

    Raises:
        ValueError: ``pieces`` is empty or holds several trace ids.

    """
    trace_ids = {p.trace_id for p in pieces}
    if len(trace_ids) != 1:
        raise ValueError(f"assemble_trace takes the pieces of one trace; got {len(trace_ids)}")
    (trace_id,) = trace_ids
    report = IngestReport()
    files: dict[str, FileReport] = {}
    assembler = _assembler(report)
    for piece in sorted(pieces, key=lambda p: p.index):
        file = files.get(piece.path)
        if file is None:
            file = files[piece.path] = FileReport(path=piece.path, container=piece.container)
            report.files.append(file)
        _add_records(assembler, piece, file, report)
    traces = assembler.take_traces()
    choices = {p.path: p.orphan_choices for p in pieces if p.orphan_choices}
    if not traces:  # log records only: counted log_span_not_found by take_traces
        return TraceParts(trace_id, -1, [], (), choices, report)
    from agent_eval.ingest._grouping import conversation_keys

    _, seq, entries = traces[0]
    ranks = dict(conversation_keys(entries))
    keys = _group_keys(trace_id, entries, ranks)
    return TraceParts(trace_id, seq, entries, keys, choices, report, ranks)


def _assembler(report: IngestReport) -> Assembler:
    """An assembler that holds everything in memory (:data:`NO_SPILL`)."""
    from agent_eval.ingest._assemble import Assembler, StreamLimits

    return Assembler(report, StreamLimits(max_spans_in_memory=NO_SPILL))


def _add_records(
    assembler: Assembler, piece: TracePiece, file: FileReport, report: IngestReport
) -> None:
    """Feed one piece's records to ``assembler``; text replaced in spans counted on ``file``."""
    for position, record in piece.records:
        if isinstance(record, SpanRecord):
            seq = span_seq(piece.index, position)
            replaced = safe_text.replaced_so_far()
            guarded(partial(_add_span, assembler, seq=seq), record, file, report)
            more = safe_text.replaced_so_far() - replaced
            file.text_replaced += more
            report.text_replaced += more
        else:
            guarded(assembler.add_log, record, file, report)


def _add_span(assembler: Assembler, span: SpanRecord, file: FileReport, *, seq: int) -> None:
    assembler.add_span(span, file, seq)


def _group_keys(
    trace_id: str, entries: list[SpanEntry], ranks: Mapping[str, object]
) -> tuple[str, ...]:
    """The keys of the groups the trace's conversation parts are assembled in."""
    if any(e.extraction is not None and e.extraction.conversation_id for e in entries):
        return tuple(ranks)
    files = _trial_files(entries)
    return (trace_id,) if files is None else (bare_key(files),)


def bare_key(files: Sequence[str]) -> str:
    """The group key of the conversations without conversation id read from ``files``.

    ``BARE_KEY_PREFIX`` and the files joined by the unit separator (U+001F).
    """
    return BARE_KEY_PREFIX + "\x1f".join(files)


def _trial_files(entries: list[SpanEntry]) -> tuple[str, ...] | None:
    """The ``source.files`` of the conversation a trace without conversation id builds into.

    Built on a scratch report (its accounting is the group's, counted when built for real);
    ``None`` when it builds into nothing or fails.
    """
    from agent_eval.ingest._conversation import ConversationBuilder
    from agent_eval.ingest._grouping import group_conversations

    scratch = IngestReport()
    own = [e.file for e in entries]
    _rehome(entries, scratch)
    try:
        (conversation,) = group_conversations(entries)
        trace = ConversationBuilder(conversation, scratch).build(hold_unanswered=True)
    except Exception:  # counted as internal_error where it is built for real
        return None
    finally:
        for entry, file in zip(entries, own, strict=True):
            entry.file = file
    return None if trace is None else trace.source.files


def _rehome(entries: Iterable[SpanEntry], report: IngestReport) -> None:
    """Point each entry's ``file`` at ``report``'s file of that path (added when missing)."""
    files = {f.path: f for f in report.files}
    for entry in entries:
        path = entry.file.path
        file = files.get(path)
        if file is None:
            file = files[path] = FileReport(path=path, container=entry.file.container)
            report.files.append(file)
        entry.file = file
        for log_path in entry.log_files:
            if log_path not in files:
                files[log_path] = FileReport(path=log_path)
                report.files.append(files[log_path])


def assemble_conversations(
    parts: Sequence[TraceParts],
    *,
    key: str | None = None,
    report: IngestReport | None = None,
    orphan_choices: Mapping[str, int] | None = None,
) -> list[AgentTrace]:
    """The conversations of one group key, assembled from the traces that have parts in it.

    Args:
        parts: Every :class:`TraceParts` whose ``keys`` hold ``key`` (any order).
        key: The group key; by default the one key all ``parts`` share.
        report: Receives this group's accounting (spans used or ignored, conversations, per
            file); merge it with :func:`merge_reports`.
        orphan_choices: Path -> ``gen_ai.choice`` records without span context over all
            inputs (each :class:`InputPart`'s ``orphan_choices``); by default the parts' own.

    Returns:
        The group's conversations in the order ``ingest()`` gives them: for a conversation
        id, that one conversation (none when it has no message content: its spans are then
        counted ``no_message_content``); for a bare-call group, its conversations with the
        calls a later one replays folded in, exactly as one process folds them.

    Raises:
        ValueError: ``key`` is not given and the parts share no single key, or a part does
            not belong to ``key``.

    """
    if key is None:
        key = _shared_key(parts)
    if any(key not in p.keys for p in parts):
        raise ValueError(f"every part given to assemble_conversations must belong to {key!r}")
    report = IngestReport() if report is None else report
    ordered = sorted(parts, key=lambda p: p.seq)
    entries = [e for p in ordered for e in p.entries]
    _rehome(entries, report)
    wanted = {p.trace_id for p in parts} if key.startswith(BARE_KEY_PREFIX) else {key}
    from agent_eval.ingest._grouping import group_conversations

    grouped = [c for c in group_conversations(entries) if c.id in wanted]
    assembler = _assembler(report)
    if orphan_choices is None:
        orphan_choices = {k: v for p in parts for k, v in p.orphan_choices.items()}
    assembler.orphan_choices = dict(orphan_choices)
    return list(assembler.emit(grouped))


def _shared_key(parts: Sequence[TraceParts]) -> str:
    if not parts:
        raise ValueError("assemble_conversations needs at least one TraceParts")
    shared = set(parts[0].keys).intersection(*(p.keys for p in parts[1:]))
    if len(shared) != 1:
        raise ValueError(
            f"the parts share {len(shared)} group keys: name the one to assemble with key="
        )
    return shared.pop()


def conversation_order(trace: AgentTrace, parts: Sequence[TraceParts]) -> tuple[int, int, int]:
    """Where ``ingest()`` puts a conversation :func:`assemble_conversations` gave from ``parts``.

    Sorting every group's conversations by this key gives ``ingest()``'s order: conversations
    with a conversation id by their first span, ``(1, start, seq)``, then those without one
    (bare calls, which one process holds until the end to fold them) by the first span of
    their last call, ``(2, start, seq)``. Whole conversations (chat logs) come before all of
    them, in input and file order: key the ``n``-th of an input ``(0, InputPart.index, n)``.

    Raises:
        ValueError: ``trace`` was not assembled from ``parts``.

    """
    cid = trace.conversation_id
    ranks = [p.ranks[cid] for p in parts if cid in p.ranks]
    if not ranks:
        raise ValueError(f"conversation {cid!r} was not assembled from these parts")
    start, _, seq = min(ranks)
    held = any(p.trace_id == cid and _is_bare(p) for p in parts)
    return (2 if held else 1, start, seq)


def _is_bare(parts: TraceParts) -> bool:
    """Whether the trace goes to a bare-call group (it has no conversation id)."""
    return len(parts.keys) == 1 and parts.keys[0].startswith(BARE_KEY_PREFIX)


def merge_reports(reports: Iterable[IngestReport]) -> IngestReport:
    """Per-task ingest reports merged into one accounting, as one process would count it.

    Files are merged by path in the order first seen (give the :class:`InputPart` reports
    first, in input order): counts add up, conventions join, and the container, error and
    note are the first given. Every count adds up; the skipped items kept with their detail
    are the first :data:`~agent_eval.ingest._accounting.MAX_DETAILS` in the order given.
    """
    merged = IngestReport()
    files: dict[str, FileReport] = {}
    for report in reports:
        for file in report.files:
            _merge_file(files, merged, file)
        merged.spans_used += report.spans_used
        merged.spans_ignored.update(report.spans_ignored)
        merged.logs_used += report.logs_used
        merged.logs_ignored.update(report.logs_ignored)
        merged.conversations += report.conversations
        merged.records_ignored.update(report.records_ignored)
        merged.skipped.extend(report.skipped[: MAX_DETAILS - len(merged.skipped)])
        merged.internal_errors += report.internal_errors
        merged.text_replaced += report.text_replaced
        merged.inputs += report.inputs
    for counter in (merged.spans_ignored, merged.logs_ignored, merged.records_ignored):
        for reason in [r for r, n in counter.items() if n == 0]:
            del counter[reason]
    return merged


def _merge_file(files: dict[str, FileReport], merged: IngestReport, file: FileReport) -> None:
    into = files.get(file.path)
    if into is None:
        into = files[file.path] = FileReport(path=file.path)
        merged.files.append(into)
    into.container = into.container or file.container
    into.conventions |= file.conventions
    into.spans_read += file.spans_read
    into.logs_read += file.logs_read
    into.conversations += file.conversations
    into.error = into.error or file.error
    into.note = into.note or file.note
    into.text_replaced += file.text_replaced
    into.whole_conversations = into.whole_conversations or file.whole_conversations
    if file.records_declared is not None:
        into.records_declared = (into.records_declared or 0) + file.records_declared
    into.records_skipped.update(file.records_skipped)
