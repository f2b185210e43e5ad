"""The compact form assembly keeps of each span: :class:`SpanEntry`.

Assembly must not hold raw :class:`~agent_eval.ingest._spans.SpanRecord` objects (their attribute
maps are most of a trace's bytes), so each span is read once, when it arrives, into a
``SpanEntry``: ids, times, name, the chosen convention's :class:`SpanExtraction`, the names of
other conventions that also matched, and the errors recorded on the span.

When several conventions detect one span, the extraction kept is the non-empty one with the
lowest ``priority`` number (ties: the richest); scalar facts it lacks (agent, conversation,
model, usage) are filled from the others, and the others' names are kept in ``shadowed`` so the
span's messages are used once.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, replace
from itertools import repeat
from typing import Any

from agent_eval._trace import SpanErrorInfo
from agent_eval.errors import InputError
from agent_eval.ingest._accounting import FileReport
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._reference_keys import REFERENCE_TOOL_CALLS
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.conventions._base import Convention
from agent_eval.ingest.conventions._genai_keys import RESPONSE_ID

__all__ = ["SpanEntry", "read_span"]

ERROR_TYPE = "error.type"
EXCEPTION_EVENT = "exception"
EXCEPTION_TYPE = "exception.type"
EXCEPTION_MESSAGE = "exception.message"
TRANSPORT_PREFIXES = {
    "http_span": ("http.", "url.", "asgi."),
    "rpc_span": ("rpc.", "grpc."),
    "db_span": ("db.",),
}
"""Ignored-span reasons for spans of the general OTel HTTP, RPC and database conventions
(``asgi.event.type`` marks the ASGI instrumentation's ``http send``/``http receive`` spans)."""
TRANSPORT_NAME_PREFIXES = {"a2a_transport_span": ("a2a.",)}
"""Ignored-span reasons by span name: the A2A SDK's request-handler and event-queue spans
(``a2a.server.*``, ``a2a.utils.*``), which carry the agent-to-agent transport, not messages."""

_ANY_TRANSPORT_PREFIX = tuple(p for prefixes in TRANSPORT_PREFIXES.values() for p in prefixes)
_FILLABLE = ("agent_name", "conversation_id", "model", "input_tokens", "output_tokens")


@dataclass(slots=True)
class SpanEntry:
    """What assembly keeps of one span.

    Attributes:
        trace_id / span_id / parent_id: Hex ids.
        name: The span name.
        start / end: Unix ns.
        seq: Arrival order (breaks ties between equal start times).
        file: The report of the file it came from.
        extraction: The chosen convention's reading, or ``None`` when no convention matched.
        shadowed: Other conventions that matched the same span.
        errors: Errors recorded on the span.
        reason: Why the span is unusable when ``extraction`` is ``None``.
        detail: A sentence for the skipped-items report (invalid spans).
        logs: Log records joined to the span.
        source: The file (and line) the span was read from, when the container knew it.
        reference_tool_calls: The span's ``agent_eval.reference.tool_calls`` attribute
            (JSON text), when it has one.
        copies: Other files the same span (same trace and span id), or the same log records of
            it, were read from again (one export given twice); each is used once.
        log_files: The files the log records joined to the span came from (a logs export
            given beside the spans), so that they count as giving its conversation.
        response_id: The span's ``gen_ai.response.id`` (the provider's id of the completion),
            when it recorded one.

    """

    trace_id: str
    span_id: str
    parent_id: str | None
    name: str
    start: int
    end: int
    seq: int
    file: FileReport
    extraction: SpanExtraction | None = None
    shadowed: tuple[str, ...] = ()
    errors: tuple[SpanErrorInfo, ...] = ()
    reason: str | None = None
    detail: str | None = None
    logs: int = 0
    source: SourceLocation | None = None
    reference_tool_calls: str | None = None
    copies: tuple[str, ...] = ()
    log_files: tuple[str, ...] = ()
    response_id: str | None = None

    @property
    def location(self) -> SourceLocation:
        """Where the span was read from: its file and line, else at least its file."""
        return self.source or SourceLocation(self.file.path)

    @property
    def has_messages(self) -> bool:
        """Whether the extraction holds input or output messages."""
        ex = self.extraction
        return ex is not None and bool(ex.input_messages or ex.output_messages)


def read_span(
    span: SpanRecord, file: FileReport, matched: Sequence[Convention], seq: int
) -> SpanEntry:
    """Read ``span`` with the conventions that detected it into a compact entry.

    Never raises for bad span content: when every matching convention fails, the entry has no
    extraction, ``reason`` ``"invalid_span"`` (an ``InputError``) or ``"convention_error"`` (any
    other exception from a plugin) and the message in ``detail``.
    """
    entry = SpanEntry(  # positional (the fields in order): one per span, cheaper than keywords
        span.trace_id,
        span.span_id,
        span.parent_span_id or None,
        span.name,
        span.start_time_unix_nano,
        span.end_time_unix_nano,
        seq,
        file,
        None,  # extraction
        (),  # shadowed
        span_errors(span),
        None,  # reason
        None,  # detail
        0,  # logs
        span.source,
    )
    attributes = span.attributes
    reference = attributes.get(REFERENCE_TOOL_CALLS)
    if reference is not None and isinstance(reference, str):
        entry.reference_tool_calls = reference
    response_id = attributes.get(RESPONSE_ID)
    if response_id and isinstance(response_id, str):
        entry.response_id = response_id
    extractions: list[SpanExtraction] = []
    for convention in matched:
        try:
            extractions.append(convention.extract(span))
        except InputError as exc:
            entry.reason, entry.detail = "invalid_span", str(exc)
        except Exception as exc:  # a broken plugin convention must not end the run
            entry.reason = "convention_error"
            entry.detail = f"convention {convention.name!r} failed: {type(exc).__name__}: {exc}"
    if not extractions:
        entry.reason = entry.reason or unmatched_reason(span)
        return entry
    if len(extractions) == 1:
        extraction = extractions[0]  # nothing to choose between, nothing to fill from
    else:
        extraction = choose(extractions, {c.name: c.priority for c in matched})
    entry.extraction = extraction
    if extraction.is_empty:
        transport = transport_reason(span)
        if transport is not None:
            # e.g. an HTTP span carrying only a propagated gen_ai.conversation.id
            entry.extraction = replace(entry.extraction, ignored_reason=transport)
    if len(extractions) > 1:
        chosen = entry.extraction.convention
        entry.shadowed = tuple(e.convention for e in extractions if e.convention != chosen)
    tool = entry.extraction.tool
    if entry.errors and tool is not None:  # a failed tool run: which call it was
        entry.errors = tuple(
            e.model_copy(update={"tool_call_id": tool.call_id, "tool_name": tool.name})
            for e in entry.errors
        )
    return entry


def choose(extractions: Sequence[SpanExtraction], priorities: dict[str, int]) -> SpanExtraction:
    """The best extraction (non-empty, lowest priority number, richest), gaps filled."""
    if len(extractions) == 1:
        return extractions[0]  # nothing to choose between, nothing to fill from
    candidates = [e for e in extractions if not e.is_empty] or list(extractions)
    best = min(candidates, key=lambda e: (priorities.get(e.convention, 100), -richness(e)))
    fills: dict[str, Any] = {}
    for name in _FILLABLE:
        if getattr(best, name) is None:
            found = next(
                (getattr(e, name) for e in extractions if getattr(e, name) is not None), None
            )
            if found is not None:
                fills[name] = found
    return replace(best, **fills) if fills else best


def richness(extraction: SpanExtraction) -> int:
    """How much an extraction carries: messages + documents + a tool run."""
    ex = extraction
    return len(ex.input_messages) + len(ex.output_messages) + len(ex.documents) + bool(ex.tool)


def unmatched_reason(span: SpanRecord) -> str:
    """``http_span`` / ``rpc_span`` / ``db_span`` for transport spans, else ``no_genai_content``."""
    return transport_reason(span) or "no_genai_content"


def transport_reason(span: SpanRecord) -> str | None:
    """The transport reason (``http_span``, ``a2a_transport_span``...) of a transport span."""
    for reason, names in TRANSPORT_NAME_PREFIXES.items():
        if span.name.startswith(names):
            return reason
    keys = span.attributes
    if not any(map(str.startswith, keys, repeat(_ANY_TRANSPORT_PREFIX))):
        return None  # the common case, in one C-level pass over the keys
    for reason, prefixes in TRANSPORT_PREFIXES.items():
        if any(map(str.startswith, keys, repeat(prefixes))):
            return reason
    return None


def span_errors(span: SpanRecord) -> tuple[SpanErrorInfo, ...]:
    """Errors recorded on the span: status ERROR and ``exception`` events (OTel trace semconv)."""
    if not span.events and span.status_code != "ERROR":
        return ()  # the common case
    errors = [
        SpanErrorInfo(
            trace_id=span.trace_id,
            span_id=span.span_id,
            span_name=span.name,
            error_type=_str(event.attributes.get(EXCEPTION_TYPE)),
            message=str(event.attributes.get(EXCEPTION_MESSAGE, "")),
        )
        for event in span.events
        if event.name == EXCEPTION_EVENT
    ]
    if span.status_code == "ERROR" and not errors:
        errors.append(
            SpanErrorInfo(
                trace_id=span.trace_id,
                span_id=span.span_id,
                span_name=span.name,
                error_type=_str(span.attributes.get(ERROR_TYPE)),
                message=span.status_message,
            )
        )
    return tuple(errors)


def _str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
