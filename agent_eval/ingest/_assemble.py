"""Assembly: spans and GenAI log records in, one :class:`AgentTrace` per conversation out.

The :class:`Assembler` is what the ingest pipeline and the SDK exporter feed. It

1. reads each span when it arrives with every registered convention that detects it
   (:mod:`~agent_eval.ingest._span_entry`; the raw span is not kept);
2. buffers GenAI log records (v1.28-v1.36 message events) and joins them to their span by trace
   and span id at :meth:`Assembler.finish`. Only traces still being written stay in memory:
   beyond ``StreamLimits.max_spans_in_memory`` entries the least recently touched traces spill
   to disk and are read back at the end (:mod:`~agent_eval.ingest._spill`); the output is the
   same either way;
3. groups spans into conversations and orders them (:mod:`~agent_eval.ingest._grouping`);
4. replays each conversation's LLM calls, tool runs and retrievals into one deduplicated
   transcript (:mod:`~agent_eval.ingest._transcript`) and pairs tool results with their calls
   (:mod:`~agent_eval.ingest._pairing`);
5. folds the one-trace-per-call conversations of a bare instrumented client (no conversation
   id) whose transcript a later call replays whole into that later one
   (:mod:`~agent_eval.ingest._folding`); these are yielded last. A bare call whose reply was
   not recorded is held uncounted too: folded, its spans are used; else ``no_message_content``.

What assembly expects from a convention's :class:`~agent_eval.ingest._extraction.SpanExtraction`
(the contract for convention plugins):

- ``detect`` is cheap and total (an exception counts as "no match"); it is asked only on spans
  carrying one of the convention's ``triggers`` (every span when it declares none). ``extract``
  raises ``InvalidSpanError`` for unusable attribute values (the span is counted ``invalid_span``
  with the message); any other exception counts as ``convention_error``.
- ``kind="llm"``: ``input_messages`` as sent (the whole replayed history is fine, system first)
  and ``output_messages`` (the first choice). Message ``span_ids`` are left empty; assembly fills
  them and labels outputs with the agent and ``model``. Tool calls carry ``id`` when recorded and
  arguments parsed (invalid JSON in ``raw_arguments``); tool results carry ``tool_call_id``.
- ``kind="tool"``: ``tool=ToolExecution`` (name, ``call_id`` when recorded, arguments, result text).
- ``kind="agent"``: ``agent_name``; messages on an agent span are used only when no LLM span below
  it recorded the calls. ``agent_name`` on any span labels the assistant messages of the spans
  beneath it.
- ``kind="retriever"``: ``documents`` and ``retrieval_query``.
- ``conversation_id``, ``model``, ``input_tokens``/``output_tokens`` whenever recorded; usage is
  summed per model over LLM calls, once per call.
- Nothing usable: return an extraction whose ``ignored_reason`` names why (``no_genai_content``,
  a transport reason...); it becomes the span's accounting reason.
- Several conventions on one span: the non-empty extraction with the lowest ``priority`` number
  wins (ties: most messages), missing scalars are filled from the others, and the others are
  noted, so each message is read once. GenAI log records are read by the ``genai`` convention.

Span accounting (:class:`~agent_eval.ingest._accounting.IngestReport`): the caller counts
``FileReport.spans_read`` / ``logs_read`` (it also sees the container's ``Skipped`` items); the
assembler counts every span and log record it was given as used or ignored with a reason, so after
``finish()`` has been exhausted ``report.balanced`` holds. Span reasons: ``no_genai_content``,
``http_span``, ``rpc_span``, ``db_span``, ``invalid_span``, ``convention_error``,
``duplicate_span`` (same trace and span id twice), ``duplicate_of_parent_llm_span`` (a call
that an LLM span above it also recorded, with more message content: two instrumentations of
one call), ``duplicate_of_child_llm_span`` (a span whose
messages a descendant LLM span also recorded: framework span over a client span),
``duplicate_of_parent_retrieval`` (an empty retriever span beneath one already read),
``no_message_content`` (a conversation with usage but no message content). Log reasons:
``not_genai_event``, ``log_without_span_context``, ``log_span_not_found``, ``invalid_log``,
``no_genai_content``, ``duplicate_of_span_messages``, ``duplicate_log`` (a record equal to one
already read for the same span from another file: the same export given twice).
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import fields, replace
from operator import attrgetter
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._conversation import ConversationBuilder
from agent_eval.ingest._folding import PrefixFolder, is_bare_call_trace
from agent_eval.ingest._grouping import Conversation, conversation_keys, group_conversations
from agent_eval.ingest._span_entry import SpanEntry, read_span
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest._spill import SpillStore, StreamLimits
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.conventions._base import Convention, conventions, span_markers
from agent_eval.ingest.conventions._genai_events import is_genai_event
from agent_eval.ingest.conventions._genai_keys import (
    CHOICE_EVENT,
    CONVERSATION_ID,
    CONVERSATION_ID_FALLBACKS,
)
from agent_eval.ingest.conventions._history_cache import history_scope


def _debug_traceback(message: str, *args: object) -> None:
    """Log ``message`` at DEBUG with the exception being handled (``logging`` imported here)."""
    import logging  # an ingest that catches nothing imports no logging (issue 15)

    logging.getLogger(__name__).debug(message, *args, exc_info=True)


__all__ = ["STREAM_LIMITS", "Assembler", "StreamLimits", "admit_log"]

GENAI_CONVENTION = "genai"
"""The convention that reads GenAI log records (message events)."""

Key = tuple[str, str]
_SCOPE_KEYS = (CONVERSATION_ID, *CONVERSATION_ID_FALLBACKS)
_ASKED_MAX = 1024
"""Marker sets :meth:`Assembler._detecting` remembers at most (then it starts again)."""
STREAM_LIMITS = StreamLimits()
"""The memory bounds an :class:`Assembler` gets when none are given (tests may swap it)."""


class Assembler:
    """Collects spans and log records, then yields one AgentTrace per conversation.

    Args:
        report: The run's accounting; updated as items are added and conversations finished.

    Not thread-safe: callers that add from several threads (the SDK exporter) hold a lock.
    """

    def __init__(self, report: IngestReport, limits: StreamLimits | None = None) -> None:
        self.report = report
        self.limits = limits or STREAM_LIMITS
        self._conventions: list[Convention] | None = None
        self._always: list[int] = []
        """Indexes (in priority order) of the conventions asked on every span (no triggers)."""
        self._by_marker: dict[str, list[int]] = {}
        """Span marker -> indexes of the conventions it triggers."""
        self._asked: dict[frozenset[str], list[Convention]] = {}
        """A span's markers -> the conventions asked on it, in priority order (memoised)."""
        self._traces: OrderedDict[str, dict[str, SpanEntry]] = OrderedDict()
        """In-memory trace parts: trace id -> span id -> entry; least recently touched first."""
        self._first_seq: dict[str, int] = {}
        """Every trace seen -> the arrival number of its first span (the traces' order)."""
        self._logs: dict[str, dict[str, list[tuple[str, LogRecord]]]] = {}
        """Log records waiting for the end: trace id -> span id -> (file, record) in arrival
        order. Copies (the same record from another file) are found when they are joined."""
        self._span_copies: dict[str, dict[str, list[str]]] = {}
        """Files a spilled span was read again from (noted on it when it is read back)."""
        self.orphan_choices: dict[str, int] = {}
        """File -> ``gen_ai.choice`` records without span context (named in notes on
        conversations whose final reply is missing)."""
        self._in_memory = 0
        self._spill: SpillStore | None = None
        self._spilled: set[str] = set()
        self._keys: dict[str, list[tuple[str, tuple[int, int, int]]]] = {}
        """Spilled traces of one part and no log records -> their conversation ids, read once."""
        self._seq = 0

    def add_span(self, span: SpanRecord, file: FileReport, seq: int | None = None) -> None:
        """Read one span with the conventions that detect it; the raw span is not kept.

        ``seq`` is the span's place in the input (spans are ordered by it where their start
        times tie); by default the arrival order. The engine-neutral stages
        (:mod:`agent_eval.ingest._stages`) give each span its place over all inputs.
        """
        if seq is not None:
            self._seq = seq
        trace_id, span_id = span.trace_id, span.span_id
        part = self._traces.get(trace_id)
        if (part is not None and span_id in part) or (
            trace_id in self._spilled
            and self._spill is not None
            and self._spill.has_span(trace_id, span_id)
        ):
            self.report.ignore_span("duplicate_span")
            if part is not None and span_id in part:
                _note_copy(part[span_id], file.path)
            else:
                copies = self._span_copies.setdefault(trace_id, {})
                copies.setdefault(span_id, []).append(file.path)
            return
        matched = self._detecting(span)
        with history_scope(_history_scope(span)):
            entry = read_span(span, file, matched, self._seq)
        if part is None:
            part = self._traces[trace_id] = {}
            self._first_seq.setdefault(trace_id, self._seq)
        else:
            self._traces.move_to_end(trace_id)
        part[span_id] = entry
        self._seq += 1
        self._in_memory += 1
        if self._in_memory > self.limits.max_spans_in_memory:
            self._spill_idle()

    def add_log(self, log: LogRecord, file: FileReport) -> None:
        """Buffer a GenAI event log record until :meth:`finish` joins it to its span."""
        compact = admit_log(log, file.path, self.report, self.orphan_choices)
        if compact is not None:
            spans = self._logs.setdefault(compact.trace_id or "", {})
            spans.setdefault(compact.span_id or "", []).append((file.path, compact))

    def finish(self) -> Iterator[AgentTrace]:
        """Join logs, group, order and assemble; yield conversations in order of first span.

        Everything added so far is consumed: the assembler can be reused afterwards. When
        traces were spilled to disk (:mod:`~agent_eval.ingest._spill`), they are read back one
        trace, then one conversation, at a time; the output is the same either way.
        """
        if self._spill is not None:
            yield from self._finish_spilled()
            return
        traces = self.take_traces()
        grouped = group_conversations(e for _, _, entries in traces for e in entries)
        del traces
        yield from self.emit(grouped)

    def take_traces(self) -> list[tuple[str, int, list[SpanEntry]]]:
        """Every trace held in memory, log records joined: ``(trace id, first seq, entries)``.

        Traces in order of their first span's ``seq``, each trace's entries in arrival order;
        log records of traces that have no span are counted ``log_span_not_found``. Everything
        added so far is consumed.

        Raises:
            RuntimeError: Traces were spilled to disk (use :meth:`finish`).

        """
        if self._spill is not None:
            raise RuntimeError("take_traces() reads traces held in memory; some were spilled")
        order = sorted(self._traces, key=self._first_seq.__getitem__)
        traces, self._traces = self._traces, OrderedDict()
        first, self._first_seq, self._in_memory = self._first_seq, {}, 0
        self._join_logs(traces)
        return [(t, first[t], list(traces[t].values())) for t in order]

    def emit(self, grouped: Iterable[Conversation]) -> Iterator[AgentTrace]:
        """Assemble conversations in order; bare-call ones are held and folded, yielded last.

        ``grouped`` in the order :func:`~agent_eval.ingest._grouping.group_conversations`
        gives; the bare-call conversations among them are folded with each other only
        (:mod:`~agent_eval.ingest._folding`).
        """
        folder = PrefixFolder()
        unanswered: dict[str, ConversationBuilder] = {}
        """Bare calls without a recorded reply, held uncounted: a later call may continue one."""
        counted: dict[str, tuple[str, ...]] = {}
        """Held bare calls -> the files they were counted a conversation of."""
        for conversation in grouped:
            builder = ConversationBuilder(conversation, self.report, self.orphan_choices)
            trace = self._build(builder)
            if trace is None:
                continue
            if builder.unanswered is not None:
                unanswered[trace.conversation_id] = builder
                folder.add(trace, unanswered=True)
                continue
            if is_bare_call_trace(trace):
                folder.add(trace)  # held: a later bare call may replay it whole
                counted[trace.conversation_id] = builder.counted_files
                continue
            self.report.conversations += 1
            yield trace
        drained = folder.drain()
        for left in folder.unanswered_left:  # skipped no_message_content, as when built
            unanswered.pop(left.conversation_id).settle(folded=False)
        for one in (one for _, folded in drained for one in folded):
            held = unanswered.pop(one.conversation_id, None)
            if held is not None:
                held.settle(folded=True)  # its spans are the later conversation's
                counted[one.conversation_id] = held.counted_files
        files = {f.path: f for f in self.report.files}
        for trace, folded in drained:
            # each file counts the folded conversation once: its calls were counted apart
            own = counted.get(trace.conversation_id, ())
            earlier = [p for one in folded for p in counted.get(one.conversation_id, ())]
            for path in earlier:  # counted when built; now part of ``trace``
                if path in files:
                    files[path].conversations -= 1
            for path in dict.fromkeys(earlier):
                if path in files and path not in own:  # read only by the folded calls
                    files[path].conversations += 1
            self.report.conversations += 1
            yield trace

    def _spill_idle(self, keep: int | None = None) -> None:
        """Move the least recently touched traces to disk until ``keep`` entries are left.

        A part spilled without waiting log records has its conversation ids read now: when it
        stays its trace's only part, the end need not read it twice.
        """
        if self._spill is None:
            self._spill = SpillStore()
        if keep is None:
            keep = int(self.limits.max_spans_in_memory * self.limits.spill_to)
        files = _FileIndex(self.report)
        batch: list[tuple[str, list[str], Any]] = []
        while self._in_memory > keep and self._traces:
            trace_id, part = self._traces.popitem(last=False)
            logs = self._logs.pop(trace_id, {})
            batch.append((trace_id, list(part), (files.pack(part.values()), logs)))
            self._in_memory -= len(part)
            if trace_id in self._spilled:
                self._keys.pop(trace_id, None)  # a second part: read whole at the end
            else:
                self._spilled.add(trace_id)
                if not logs:
                    self._keys[trace_id] = conversation_keys(list(part.values()))
        self._spill.add_parts(batch)

    def _finish_spilled(self) -> Iterator[AgentTrace]:
        """Pass 1: each trace whole, logs joined, conversation ids found; pass 2: assemble.

        Traces still in memory (at most the budget) stay there; spilled ones are read back.
        """
        store = self._spill
        assert store is not None
        try:
            files = _FileIndex(self.report)
            resident: dict[str, list[SpanEntry]] = {}
            index: dict[str, tuple[tuple[int, int, int], list[str]]] = {}
            joined: set[str] = set()
            for trace_id in sorted(self._first_seq, key=self._first_seq.__getitem__):
                keys = self._keys.pop(trace_id, None)
                if trace_id not in self._spilled:
                    entries = list(self._traces.pop(trace_id).values())
                    logs = self._logs.pop(trace_id, None)
                    if logs:
                        self._join_logs(
                            {trace_id: {e.span_id: e for e in entries}}, {trace_id: logs}
                        )
                    resident[trace_id] = entries
                    keys = conversation_keys(entries)
                elif (
                    keys is None
                    or trace_id in self._logs
                    or trace_id in self._traces
                    or trace_id in self._span_copies
                ):
                    keys = self._join_trace(trace_id, store, files)
                    joined.add(trace_id)
                for conversation_id, key in keys:
                    found = index.get(conversation_id)
                    if found is None:
                        index[conversation_id] = (key, [trace_id])
                    else:
                        index[conversation_id] = (min(found[0], key), found[1])
                        found[1].append(trace_id)
            self._join_logs({}, self._logs)  # log records of traces that have no span
            self._first_seq, self._spilled, self._in_memory = {}, set(), 0
            order = sorted(index.items(), key=lambda item: (item[1][0][0], item[1][0][2]))
            del index

            def load(trace_id: str) -> list[SpanEntry]:
                if trace_id in resident:
                    return resident[trace_id]
                if trace_id in joined:
                    return files.unpack(store.joined(trace_id))
                (packed, _), *_ = store.parts(trace_id)
                return files.unpack(packed)

            def conversations() -> Iterator[Conversation]:
                for conversation_id, (_, trace_ids) in order:
                    entries = [e for t in trace_ids for e in load(t)]
                    yield next(c for c in group_conversations(entries) if c.id == conversation_id)

            yield from self.emit(conversations())
        finally:
            self._spill, self._keys, self._span_copies = None, {}, {}
            store.close()

    def _join_trace(
        self, trace_id: str, store: SpillStore, files: _FileIndex
    ) -> list[tuple[str, tuple[int, int, int]]]:
        """Read a trace's parts whole, join its log records, store it joined; its ids."""
        entries: list[SpanEntry] = []
        logs: dict[str, list[tuple[str, LogRecord]]] = {}
        for packed, part_logs in store.parts(trace_id):
            entries += files.unpack(packed)
            for span_id, records in part_logs.items():
                logs.setdefault(span_id, []).extend(records)
        memory = self._traces.pop(trace_id, None)
        if memory is not None:  # the part that arrived since the last spill
            entries += memory.values()
        for span_id, records in self._logs.pop(trace_id, {}).items():
            logs.setdefault(span_id, []).extend(records)
        by_id = {e.span_id: e for e in entries}
        for span_id, paths in self._span_copies.pop(trace_id, {}).items():
            for path in paths:  # the span read again after it had spilled
                _note_copy(by_id[span_id], path)
        if logs:
            self._join_logs({trace_id: by_id}, {trace_id: logs})
        store.put_joined(trace_id, files.pack(entries))
        return conversation_keys(entries)

    def _build(self, builder: ConversationBuilder) -> AgentTrace | None:
        conversation = builder.conversation
        try:
            return builder.build(hold_unanswered=True)
        except Exception as exc:  # safety net: a bug must cost one conversation, not the run
            builder.unanswered = None
            first = conversation.entries[0]
            _debug_traceback("internal error assembling %s", conversation.id)
            self.report.internal_errors += 1
            self.report.note_skipped(
                Skipped(
                    reason="internal_error",
                    detail=f"conversation {conversation.id!r} could not be assembled: "
                    f"{type(exc).__name__}: {str(exc)[:200]} (a bug; the traceback is in the debug "
                    "log); please report it with this file",
                    trace_id=first.trace_id,
                    span_id=first.span_id,
                    source=first.location,
                    spans=len(conversation.entries) - builder.counted,
                )
            )
            return None

    def _registered(self) -> list[Convention]:
        if self._conventions is None:
            self._conventions = sorted((c for _, c in conventions), key=lambda c: c.priority)
            self._always = []
            self._by_marker = {}
            self._asked = {}
            for n, convention in enumerate(self._conventions):
                triggers = _triggers(convention)
                if not triggers:
                    self._always.append(n)
                for marker in triggers:
                    self._by_marker.setdefault(marker, []).append(n)
        return self._conventions

    def _detecting(self, span: SpanRecord) -> list[Convention]:
        """The conventions that detect ``span``, in priority order; one pass over its keys.

        A convention is asked when it declares no triggers or one of them is among the span's
        markers (looked up per marker, not per convention).
        """
        registered = self._registered()
        markers = frozenset(span_markers(span))
        asked = self._asked.get(markers)
        if asked is None:  # spans repeat a few marker sets: each is resolved once
            by_marker = self._by_marker
            found = set(self._always)
            for marker in markers:
                triggered = by_marker.get(marker)
                if triggered is not None:
                    found.update(triggered)
            if len(self._asked) >= _ASKED_MAX:
                self._asked.clear()
            asked = self._asked[markers] = [registered[n] for n in sorted(found)]
        return [c for c in asked if _detects(c, span)]

    def _join_logs(
        self,
        traces: dict[str, dict[str, SpanEntry]],
        logs: dict[str, dict[str, list[tuple[str, LogRecord]]]] | None = None,
    ) -> None:
        """Join the waiting log records (default: all of them) to their spans in ``traces``.

        A record equal to one already held for its span, read from another file than the
        span's first record, is a copy (the same export given twice): counted
        ``duplicate_log`` and noted on the span, as the records arrived.
        """
        genai = next((c for c in self._registered() if c.name == GENAI_CONVENTION), None)
        waiting = self._logs if logs is None else logs
        for trace_id, spans in waiting.items():
            trace = traces.get(trace_id, {})
            for span_id, arrived in spans.items():
                records, copies = self._without_copies(arrived)
                entry = trace.get(span_id)
                if entry is not None:
                    for path in sorted(copies):
                        _note_copy(entry, path)
                if entry is None or genai is None:
                    self.report.ignore_log("log_span_not_found", len(records))
                    continue
                self._join(entry, genai, records)
                if entry.logs:  # joined: the files they came from gave this span's messages
                    entry.log_files = tuple(dict.fromkeys(p for p, _ in arrived if p not in copies))
        if logs is None or logs is self._logs:
            self._logs = {}

    def _without_copies(
        self, arrived: list[tuple[str, LogRecord]]
    ) -> tuple[list[LogRecord], set[str]]:
        """One span's records in arrival order without copies; the files the copies came from."""
        first = arrived[0][0]
        held: list[LogRecord] = []
        copies: set[str] = set()
        for path, record in arrived:
            if path != first and _is_copy(record, held):
                self.report.ignore_log("duplicate_log")
                copies.add(path)
            else:
                held.append(record)
        return held, copies

    def _join(self, entry: SpanEntry, genai: Convention, logs: list[LogRecord]) -> None:
        stub = SpanRecord(trace_id=entry.trace_id, span_id=entry.span_id, name=entry.name)
        try:
            found = genai.extract(stub, logs)
        except Exception:  # InvalidSpanError for bad bodies; anything else must not end the run
            self.report.ignore_log("invalid_log", len(logs))
            return
        if not (found.input_messages or found.output_messages):
            self.report.ignore_log("no_genai_content", len(logs))
        elif entry.has_messages:
            self.report.ignore_log("duplicate_of_span_messages", len(logs))
        else:
            base = entry.extraction
            kind = base.kind if base is not None and base.kind in ("llm", "agent") else "llm"
            entry.extraction = replace(
                base or found,
                convention=genai.name,
                kind=kind,
                input_messages=found.input_messages,
                output_messages=found.output_messages,
                ignored_reason=None,
            )
            entry.reason, entry.logs = None, len(logs)
            self.report.logs_used += len(logs)


def admit_log(
    log: LogRecord, path: str, report: IngestReport, orphan_choices: dict[str, int]
) -> LogRecord | None:
    """The record as assembly keeps it, or ``None`` when it cannot be joined to a span.

    A record that is no GenAI event is counted ``not_genai_event``; one without trace and span
    id ``log_without_span_context`` (a ``gen_ai.choice`` one is also counted in
    ``orphan_choices[path]``). The kept record drops its resource and source.
    """
    if not is_genai_event(log.event_name):
        report.ignore_log("not_genai_event")
        return None
    if not log.trace_id or not log.span_id:
        report.ignore_log("log_without_span_context")
        if log.event_name == CHOICE_EVENT:
            orphan_choices[path] = orphan_choices.get(path, 0) + 1
        return None
    return LogRecord(
        event_name=log.event_name,
        trace_id=log.trace_id,
        span_id=log.span_id,
        time_unix_nano=log.time_unix_nano,
        body=log.body,
        attributes=log.attributes,
    )


def _note_copy(entry: SpanEntry, path: str) -> None:
    """Remember that ``entry``'s span (or its log records) was read again from ``path``."""
    if path != entry.file.path and path not in entry.copies:
        entry.copies = (*entry.copies, path)


def _is_copy(log: LogRecord, held: Iterable[LogRecord]) -> bool:
    """Whether an equal record (event, time, body, attributes) is already held."""
    return any(
        h.time_unix_nano == log.time_unix_nano
        and h.event_name == log.event_name
        and h.body == log.body
        and h.attributes == log.attributes
        for h in held
    )


class _FileIndex:
    """Entries as tuples for pickling, their :class:`FileReport` as its index in the report."""

    def __init__(self, report: IngestReport) -> None:
        self._files = report.files
        self._index = {id(f): n for n, f in enumerate(report.files)}

    def pack(self, entries: Iterable[SpanEntry]) -> list[tuple[Any, ...]]:
        out = []
        for entry in entries:
            values = list(_ENTRY_VALUES(entry))
            file = values[_FILE_FIELD]
            if id(file) not in self._index:  # a file added to the report since
                self._index = {id(f): n for n, f in enumerate(self._files)}
            values[_FILE_FIELD] = self._index[id(file)]
            out.append(tuple(values))
        return out

    def unpack(self, packed: list[tuple[Any, ...]]) -> list[SpanEntry]:
        out = []
        for values in packed:
            entry = SpanEntry(*values)
            entry.file = self._files[values[_FILE_FIELD]]
            out.append(entry)
        return out


_ENTRY_FIELDS = tuple(f.name for f in fields(SpanEntry))
_ENTRY_VALUES = attrgetter(*_ENTRY_FIELDS)
_FILE_FIELD = _ENTRY_FIELDS.index("file")


def _history_scope(span: SpanRecord) -> str:
    """Where the span's replayed histories are looked up first: its conversation, else trace."""
    attributes = span.attributes
    for key in _SCOPE_KEYS:
        value = attributes.get(key)
        if type(value) is str and value:
            return value
    return span.trace_id


def _triggers(convention: Convention) -> frozenset[str]:
    """A convention's declared triggers; none (always asked) when unset or malformed."""
    try:
        triggers = frozenset(convention.triggers)
    except Exception:  # a broken plugin's triggers must not end the run
        return frozenset()
    return triggers if all(isinstance(t, str) for t in triggers) else frozenset()


def _detects(convention: Convention, span: SpanRecord) -> bool:
    try:
        return convention.detect(span)
    except Exception:  # a broken plugin's detect must not end the run
        return False
