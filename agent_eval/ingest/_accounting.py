"""Span accounting: every span and log record read is either used or ignored with a reason.

The ingest contract is that nothing is dropped silently: ``spans_read == spans_used +
sum(spans_ignored.values())`` (and likewise for log records), per file and overall. Files of
whole conversations (chat logs, datasets: no spans) have their records accounted the same way,
``records_read == records_used + sum(record_skips.values())``. The CLI prints this; ``--json``
emits :meth:`IngestReport.to_json` and :meth:`IngestReport.records_json`.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from agent_eval.ingest.containers._base import Skipped

__all__ = ["FileReport", "IngestReport"]

MAX_DETAILS = 50
"""How many skipped items are kept with their full detail (the counts are always complete)."""


@dataclass
class FileReport:
    """What one input file gave.

    Attributes:
        path: The file as given.
        container: The container it was read as.
        conventions: Convention names seen on the spans used from this file.
        spans_read / logs_read: Items decoded (skipped items included).
        conversations: AgentTraces that include something from this file.
        error: A file-level error message when the file could not be read at all.
        note: Why the file was passed over although it exists (a labels, verdicts, references
            or results file next to the traces; see
            :func:`agent_eval.ingest._paths.companion_note`).
        text_replaced: Code points UTF-8 cannot encode (lone surrogates) replaced by U+FFFD.
        whole_conversations: Read by a container of whole conversations (its records are
            accounted: :attr:`records_used`, :attr:`records_skipped`).
        records_declared: Records the container said it used (:class:`~agent_eval.ingest.
            containers.base.RecordsUsed`), ``None`` when it said nothing (one per conversation).
        records_skipped: Reason -> count for the records of this file skipped whole.
    """

    path: str
    container: str | None = None
    conventions: set[str] = field(default_factory=set)
    spans_read: int = 0
    logs_read: int = 0
    conversations: int = 0
    error: str | None = None
    note: str | None = None
    text_replaced: int = 0
    whole_conversations: bool = False
    records_declared: int | None = None
    records_skipped: Counter[str] = field(default_factory=Counter)

    @property
    def records_used(self) -> int:
        """Records that went into a conversation (0 for a span file)."""
        if not self.whole_conversations:
            return 0
        return self.conversations if self.records_declared is None else self.records_declared

    @property
    def records_read(self) -> int:
        """Records decoded, used or skipped (0 for a span file)."""
        if not self.whole_conversations:
            return 0
        return self.records_used + sum(self.records_skipped.values())


@dataclass
class IngestReport:
    """The accounting of one ingest run.

    Attributes:
        files: One entry per input file, in input order.
        spans_used: Spans that contributed to a conversation.
        spans_ignored: Reason -> count for spans that did not (e.g. ``"no_genai_content"``,
            ``"duplicate_convention"``, ``"invalid_span_id"``, ``"http_span"``).
        logs_used / logs_ignored: The same for log records.
        conversations: AgentTraces produced.
        records_ignored: Reason -> count for whole records (chat-log records, AgentTrace
            lines) a container skipped; they hold no spans, so they are counted here.
        skipped: The first :data:`MAX_DETAILS` skipped items with their detail.
        internal_errors: Times a safety net caught an unexpected exception (a bug) at an item
            boundary: a file, a record or a conversation; each is also an error or a skip
            with reason ``internal_error``.
        text_replaced: Code points UTF-8 cannot encode (lone surrogates) replaced by U+FFFD.
        inputs: How many input files the paths expanded to (set when iteration starts; the
            progress line's ``file 2/11``); not part of :meth:`to_json`, whose ``files`` are
            one entry per input.
    """

    files: list[FileReport] = field(default_factory=list)
    spans_used: int = 0
    spans_ignored: Counter[str] = field(default_factory=Counter)
    logs_used: int = 0
    logs_ignored: Counter[str] = field(default_factory=Counter)
    conversations: int = 0
    records_ignored: Counter[str] = field(default_factory=Counter)
    skipped: list[Skipped] = field(default_factory=list)
    internal_errors: int = 0
    text_replaced: int = 0
    inputs: int = 0

    @property
    def spans_read(self) -> int:
        """Total spans decoded over all files."""
        return sum(f.spans_read for f in self.files)

    @property
    def logs_read(self) -> int:
        """Total log records decoded over all files."""
        return sum(f.logs_read for f in self.files)

    @property
    def records_read(self) -> int:
        """Records decoded from files of whole conversations (chat logs, datasets)."""
        return sum(f.records_read for f in self.files)

    @property
    def records_used(self) -> int:
        """Records of those files that went into a conversation."""
        return sum(f.records_used for f in self.files)

    @property
    def record_skips(self) -> Counter[str]:
        """Reason -> count for the records of those files skipped whole.

        The part of :attr:`records_ignored` read from files of whole conversations; the rest
        is records of span files that held no span that could be counted (an OTLP JSON Lines
        line that does not parse).
        """
        total: Counter[str] = Counter()
        for f in self.files:
            if f.whole_conversations:
                total.update(f.records_skipped)
        return total

    @property
    def balanced(self) -> bool:
        """Whether used + ignored equals read, for spans, log records and records."""
        spans_ok = self.spans_used + sum(self.spans_ignored.values()) == self.spans_read
        logs_ok = self.logs_used + sum(self.logs_ignored.values()) == self.logs_read
        records_ok = self.records_used + sum(self.record_skips.values()) == self.records_read
        return spans_ok and logs_ok and records_ok

    def ignore_span(self, reason: str, count: int = 1) -> None:
        """Count ``count`` spans as ignored for ``reason`` (nothing when ``count`` is 0)."""
        if count > 0:
            self.spans_ignored[reason] += count

    def ignore_log(self, reason: str, count: int = 1) -> None:
        """Count ``count`` log records as ignored for ``reason`` (nothing when ``count`` is 0)."""
        if count > 0:
            self.logs_ignored[reason] += count

    def note_skipped(self, item: Skipped) -> None:
        """Record a container's :class:`Skipped` item, keeping its detail.

        It counts as ignored spans, ignored log records, or (when it held neither) an ignored
        whole record.
        """
        if item.spans:
            self.ignore_span(item.reason, item.spans)
        if item.logs:
            self.ignore_log(item.reason, item.logs)
        if not (item.spans or item.logs):
            self.records_ignored[item.reason] += 1
        if len(self.skipped) < MAX_DETAILS:
            self.skipped.append(item)

    def records_json(self) -> dict[str, Any]:
        """The record accounting, JSON-ready: ``{"read", "used", "skipped": {reason: n}}``.

        Counts the records of files of whole conversations (chat logs, datasets); all 0 when
        only span files were read. ``agent-eval ingest --json`` prints it as ``records``,
        beside :meth:`to_json`'s keys.
        """
        return {
            "read": self.records_read,
            "used": self.records_used,
            "skipped": dict(sorted(self.record_skips.items())),
        }

    def to_json(self) -> dict[str, Any]:
        """A JSON-ready summary: files, spans, logs, conversations, skips.

        ``agent-eval ingest --json`` prints these keys and ``records`` (:meth:`records_json`).
        """
        return {
            "files": [
                {
                    "path": f.path,
                    "container": f.container,
                    "conventions": sorted(f.conventions),
                    "spans_read": f.spans_read,
                    "logs_read": f.logs_read,
                    "conversations": f.conversations,
                    "error": f.error,
                    "note": f.note,
                    "text_replaced": f.text_replaced,
                }
                for f in self.files
            ],
            "spans": {
                "read": self.spans_read,
                "used": self.spans_used,
                "ignored": dict(sorted(self.spans_ignored.items())),
            },
            "logs": {
                "read": self.logs_read,
                "used": self.logs_used,
                "ignored": dict(sorted(self.logs_ignored.items())),
            },
            "conversations": self.conversations,
            "records_ignored": dict(sorted(self.records_ignored.items())),
            "balanced": self.balanced,
            "internal_errors": self.internal_errors,
            "text_replaced": self.text_replaced,
            "skipped": [
                {
                    "reason": s.reason,
                    "detail": s.detail,
                    "source": str(s.source) if s.source else None,
                    "trace_id": s.trace_id,
                    "span_id": s.span_id,
                }
                for s in self.skipped
            ],
        }
