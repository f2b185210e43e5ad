"""Assembly: spans and GenAI log records in, one :class:`AgentTrace` per conversation out.

The :class:`Assembler` is what the ingest pipeline and the SDK exporter feed. It

1. reads each span when it arrives with every registered convention that detects it
   (:mod:`~agent_eval.ingest.span_entry`; the raw span is not kept);
2. buffers GenAI log records (v1.28-v1.36 message events) and joins them to their span by trace
   and span id at :meth:`Assembler.finish`;
3. groups spans into conversations and orders them (:mod:`~agent_eval.ingest.grouping`);
4. replays each conversation's LLM calls, tool runs and retrievals into one deduplicated
   transcript (:mod:`~agent_eval.ingest.transcript`) and pairs tool results with their calls
   (:mod:`~agent_eval.ingest.pairing`).

Span accounting (:class:`~agent_eval.ingest.accounting.IngestReport`): the caller counts
``FileReport.spans_read`` / ``logs_read`` (it also sees the container's ``Skipped`` items); the
assembler counts every span and log record it was given as used or ignored with a reason, so after
``finish()`` has been exhausted ``report.balanced`` holds. Span reasons: ``no_genai_content``,
``http_span``, ``rpc_span``, ``db_span``, ``invalid_span``, ``convention_error``,
``duplicate_span`` (same trace and span id twice), ``duplicate_of_child_llm_span`` (a span whose
messages a descendant LLM span also recorded: framework span over a client span),
``no_message_content`` (a conversation with usage but no message content). Log reasons:
``not_genai_event``, ``log_without_span_context``, ``log_span_not_found``, ``invalid_log``,
``no_genai_content``, ``duplicate_of_span_messages``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator
from dataclasses import replace

from agent_eval.errors import InputError
from agent_eval.ingest.accounting import FileReport, IngestReport
from agent_eval.ingest.containers.base import Skipped
from agent_eval.ingest.conventions.base import Convention, conventions
from agent_eval.ingest.conventions.genai_events import is_genai_event
from agent_eval.ingest.grouping import Conversation, group_conversations
from agent_eval.ingest.pairing import pair_tool_results
from agent_eval.ingest.span_entry import SpanEntry, read_span
from agent_eval.ingest.spans import LogRecord, SpanRecord
from agent_eval.ingest.transcript import Transcript
from agent_eval.trace import AgentTrace, ModelUsage, Retrieval, SourceInfo

__all__ = ["Assembler"]

GENAI_CONVENTION = "genai"
"""The convention that reads GenAI log records (message events)."""

Key = tuple[str, str]


class Assembler:
    """Collects spans and log records, then yields one AgentTrace per conversation.

    Args:
        report: The run's accounting; updated as items are added and conversations finished.

    Not thread-safe: callers that add from several threads (the SDK exporter) hold a lock.
    """

    def __init__(self, report: IngestReport) -> None:
        self.report = report
        self._conventions: list[Convention] | None = None
        self._entries: dict[Key, SpanEntry] = {}
        self._logs: dict[Key, list[LogRecord]] = {}
        self._seq = 0

    def add_span(self, span: SpanRecord, file: FileReport) -> None:
        """Read one span with the conventions that detect it; the raw span is not kept."""
        key = (span.trace_id, span.span_id)
        if key in self._entries:
            self.report.ignore_span("duplicate_span")
            return
        matched = [c for c in self._registered() if _detects(c, span)]
        self._entries[key] = read_span(span, file, matched, self._seq)
        self._seq += 1

    def add_log(self, log: LogRecord, file: FileReport) -> None:
        """Buffer a GenAI event log record until :meth:`finish` joins it to its span."""
        if not is_genai_event(log.event_name):
            self.report.ignore_log("not_genai_event")
        elif not log.trace_id or not log.span_id:
            self.report.ignore_log("log_without_span_context")
        else:
            compact = LogRecord(
                event_name=log.event_name,
                trace_id=log.trace_id,
                span_id=log.span_id,
                time_unix_nano=log.time_unix_nano,
                body=log.body,
                attributes=log.attributes,
            )
            self._logs.setdefault((log.trace_id, log.span_id), []).append(compact)

    def finish(self) -> Iterator[AgentTrace]:
        """Join logs, group, order and assemble; yield conversations in order of first span.

        Everything added so far is consumed: the assembler can be reused afterwards.
        """
        self._join_logs()
        grouped = group_conversations(self._entries.values())
        self._entries = {}
        for conversation in grouped:
            trace = _ConversationBuilder(conversation, self.report).build()
            if trace is not None:
                self.report.conversations += 1
                yield trace

    def _registered(self) -> list[Convention]:
        if self._conventions is None:
            self._conventions = sorted((c for _, c in conventions), key=lambda c: c.priority)
        return self._conventions

    def _join_logs(self) -> None:
        genai = next((c for c in self._registered() if c.name == GENAI_CONVENTION), None)
        for key, logs in self._logs.items():
            entry = self._entries.get(key)
            if entry is None or genai is None:
                self.report.ignore_log("log_span_not_found", len(logs))
                continue
            self._join(entry, genai, logs)
        self._logs = {}

    def _join(self, entry: SpanEntry, genai: Convention, logs: list[LogRecord]) -> None:
        stub = SpanRecord(trace_id=entry.trace_id, span_id=entry.span_id, name=entry.name)
        try:
            found = genai.extract(stub, logs)
        except InputError:
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


def _detects(convention: Convention, span: SpanRecord) -> bool:
    try:
        return convention.detect(span)
    except Exception:  # a broken plugin's detect must not end the run
        return False


class _ConversationBuilder:
    """Turns one grouped conversation into an AgentTrace and does its span accounting."""

    def __init__(self, conversation: Conversation, report: IngestReport) -> None:
        self.conversation = conversation
        self.report = report
        self.transcript = Transcript()
        self.retrievals: list[Retrieval] = []
        self.usage: dict[str, ModelUsage] = {}
        self.used: list[SpanEntry] = []
        self.agent_sources: set[str] = set()
        self.shadowed: Counter[tuple[str, str]] = Counter()

    def build(self) -> AgentTrace | None:
        covered = self._covered_by_descendant_calls()
        candidates: list[SpanEntry] = []
        for entry in self.conversation.entries:
            reason = self._add(entry, covered)
            if reason is None:
                self.used.append(entry)
            elif reason == "agent":
                candidates.append(entry)
            else:
                self._ignore(entry, reason)
        for entry in candidates:
            if entry.span_id in self.agent_sources:
                self.used.append(entry)
            else:
                self._ignore(
                    entry, "duplicate_of_child_llm_span" if entry.span_id in covered else None
                )
        if not len(self.transcript):
            self.report.ignore_span("no_message_content", len(self.used))
            return None
        return self._trace()

    def _covered_by_descendant_calls(self) -> set[str]:
        covered: set[str] = set()
        for entry in self.conversation.entries:
            if _is_call(entry):
                covered.update(a.span_id for a in self.conversation.ancestors(entry))
        return covered

    def _add(self, entry: SpanEntry, covered: set[str]) -> str | None:
        """Feed one entry; ``None`` when used, ``"agent"`` when maybe used, else the reason."""
        ex = entry.extraction
        if ex is None:
            return entry.reason or "no_genai_content"
        if _is_call(entry) and entry.span_id in covered:
            return "agent" if ex.agent_name else "duplicate_of_child_llm_span"
        if entry.has_messages:
            agent = self._agent_name(entry)
            self.transcript.add_call(
                ex.input_messages,
                ex.output_messages,
                entry.span_id,
                agent_name=agent,
                model=ex.model,
            )
        elif ex.tool is not None:
            self.transcript.add_tool_run(ex.tool, entry.span_id, self._agent_name(entry))
        elif ex.documents:
            self.retrievals.append(
                Retrieval(
                    after_message=len(self.transcript),
                    query=ex.retrieval_query,
                    documents=ex.documents,
                    span_id=entry.span_id,
                )
            )
        elif not _is_call(entry):
            return "agent" if ex.agent_name else (ex.ignored_reason or "no_genai_content")
        self._count_usage(entry)
        self.shadowed.update((entry.extraction.convention, s) for s in entry.shadowed)  # type: ignore[union-attr]
        return None

    def _agent_name(self, entry: SpanEntry) -> str | None:
        for candidate in (entry, *self.conversation.ancestors(entry)):
            ex = candidate.extraction
            if ex is not None and ex.agent_name:
                if candidate is not entry:
                    self.agent_sources.add(candidate.span_id)
                return ex.agent_name
        return None

    def _count_usage(self, entry: SpanEntry) -> None:
        ex = entry.extraction
        if ex is None or not _is_call(entry):
            return
        model = ex.model or "unknown"
        old = self.usage.get(model, ModelUsage(model=model))
        self.usage[model] = ModelUsage(
            model=model,
            input_tokens=old.input_tokens + (ex.input_tokens or 0),
            output_tokens=old.output_tokens + (ex.output_tokens or 0),
            calls=old.calls + 1,
        )

    def _ignore(self, entry: SpanEntry, reason: str | None) -> None:
        reason = reason or (entry.extraction.ignored_reason if entry.extraction else None)
        reason = reason or "no_genai_content"
        if entry.detail is not None:
            self.report.note_skipped(
                Skipped(
                    reason=reason,
                    detail=entry.detail,
                    trace_id=entry.trace_id,
                    span_id=entry.span_id,
                )
            )
        else:
            self.report.ignore_span(reason)

    def _trace(self) -> AgentTrace:
        messages, pairing_notes = pair_tool_results(self.transcript.messages())
        files: dict[str, FileReport] = {}
        for entry in self.used:
            files.setdefault(entry.file.path, entry.file)
            if entry.extraction is not None:
                entry.file.conventions.add(entry.extraction.convention)
        for file in files.values():
            file.conversations += 1
        self.report.spans_used += len(self.used)
        used_conventions = sorted({e.extraction.convention for e in self.used if e.extraction})
        first_file = next(iter(files.values()))
        return AgentTrace(
            conversation_id=self.conversation.id,
            trace_ids=tuple(self.conversation.trace_ids),
            messages=tuple(messages),
            retrievals=tuple(
                r.model_copy(update={"after_message": min(r.after_message, len(messages))})
                for r in self.retrievals
            ),
            usage=tuple(self.usage.values()),
            errors=tuple(err for e in self.conversation.entries for err in e.errors),
            source=SourceInfo(
                container=first_file.container or "unknown",
                conventions=tuple(used_conventions),
                files=tuple(files),
            ),
            notes=tuple(
                self.conversation.notes()
                + self.transcript.notes
                + pairing_notes
                + self._shadow_notes()
            ),
        )

    def _shadow_notes(self) -> list[str]:
        return [
            f"{count} span(s) also matched convention {other!r}; messages read once, with {kept!r}"
            for (kept, other), count in sorted(self.shadowed.items())
        ]


def _is_call(entry: SpanEntry) -> bool:
    """An LLM call: a span with messages, or an LLM span with usage but no recorded content."""
    ex = entry.extraction
    if ex is None:
        return False
    if ex.input_messages or ex.output_messages:
        return True
    return ex.kind == "llm" and (ex.input_tokens is not None or ex.output_tokens is not None)
