"""In-process collection: OpenTelemetry SDK exporters that turn finished spans into AgentTraces.

``collector = install()`` adds a ``SimpleSpanProcessor`` (and, for GenAI events emitted as log
records, semconv v1.28-1.36, a ``SimpleLogRecordProcessor``) to the SDK providers; after the
agent ran, ``collector.traces()`` yields its conversations like :func:`~agent_eval.ingest.ingest`
does. The exporters follow the SDK exporter contract (opentelemetry-sdk ``SpanExporter`` /
``LogRecordExporter``): ``export()`` returns a result and never raises into the application,
state is guarded by a lock, and after ``shutdown()`` every export returns ``FAILURE``.
``ReadableSpan`` and SDK log records are converted to :class:`SpanRecord` / :class:`LogRecord`
here, at the edge; nothing past this module sees an SDK type.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

from opentelemetry import trace
from opentelemetry._logs import get_logger_provider
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import SimpleLogRecordProcessor
from opentelemetry.sdk.trace import ReadableSpan, TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter, SpanExportResult

from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._pipeline import IngestRun, feed_items
from agent_eval.ingest._spans import LogRecord, SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest.containers._base import ContainerItem, Skipped

try:  # the names since opentelemetry-sdk 1.39 (open-telemetry/opentelemetry-python#4647)
    from opentelemetry.sdk._logs.export import LogRecordExporter, LogRecordExportResult
except ImportError:  # pragma: no cover  (older SDKs)
    from opentelemetry.sdk._logs.export import LogExporter as LogRecordExporter
    from opentelemetry.sdk._logs.export import LogExportResult as LogRecordExportResult  # type: ignore[assignment]

__all__ = [
    "SDK_CONTAINER",
    "AgentTraceLogExporter",
    "AgentTraceSpanExporter",
    "Collector",
    "install",
    "log_record_from_sdk",
    "span_record_from_sdk",
]

SDK_CONTAINER = "otel-sdk"
"""The container name in reports and ``AgentTrace.source`` for spans collected in process."""
_SOURCE = SourceLocation("<otel-sdk>")
_log = logging.getLogger(__name__)


def _plain(value: Any) -> Any:
    """SDK attribute values (tuples, bounded mappings) as plain lists and dicts."""
    if isinstance(value, tuple | list):
        return [_plain(v) for v in value]
    if isinstance(value, Mapping):
        return {str(k): _plain(v) for k, v in value.items()}
    return value


def span_record_from_sdk(span: ReadableSpan) -> SpanRecord:
    """Convert one finished SDK span to our :class:`SpanRecord`.

    Raises:
        ValueError: the span has no span context.

    """
    context = span.context
    if context is None:
        raise ValueError(f"span {span.name!r} has no span context")
    scope = span.instrumentation_scope
    return SpanRecord(
        trace_id=format(context.trace_id, "032x"),
        span_id=format(context.span_id, "016x"),
        parent_span_id=format(span.parent.span_id, "016x") if span.parent else None,
        name=span.name,
        kind=span.kind.name,
        start_time_unix_nano=span.start_time or 0,
        end_time_unix_nano=span.end_time or 0,
        attributes=_plain(span.attributes or {}),
        events=tuple(
            SpanEvent(e.name, e.timestamp or 0, _plain(e.attributes or {})) for e in span.events
        ),
        status_code=span.status.status_code.name,
        status_message=span.status.description or "",
        resource=_plain(span.resource.attributes),
        scope_name=scope.name if scope else "",
        scope_version=(scope.version or "") if scope else "",
        source=_SOURCE,
    )


def log_record_from_sdk(data: Any) -> LogRecord:
    """Convert one SDK log record (``ReadableLogRecord``, or ``LogData`` of older SDKs)."""
    record = data.log_record
    resource = getattr(data, "resource", None) or getattr(record, "resource", None)
    attributes = _plain(record.attributes or {})
    return LogRecord(
        event_name=getattr(record, "event_name", None) or attributes.get("event.name") or "",
        trace_id=format(record.trace_id, "032x") if record.trace_id else None,
        span_id=format(record.span_id, "016x") if record.span_id else None,
        time_unix_nano=record.timestamp or record.observed_timestamp or 0,
        body=_plain(record.body),
        attributes=attributes,
        resource=_plain(resource.attributes) if resource is not None else {},
        source=_SOURCE,
    )


class Collector:
    """Finished spans and log records collected in process, assembled into AgentTraces on demand.

    Attributes:
        span_exporter: Register with a ``SpanProcessor`` (``install`` does).
        log_exporter: Register with a ``LogRecordProcessor`` for GenAI events.

    """

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._items: list[ContainerItem] = []
        self.span_exporter = AgentTraceSpanExporter(self)
        self.log_exporter = AgentTraceLogExporter(self)

    def add(self, items: Sequence[ContainerItem]) -> None:
        """Store converted items (thread-safe)."""
        with self._lock:
            self._items.extend(items)

    def clear(self) -> None:
        """Forget everything collected so far."""
        with self._lock:
            self._items.clear()

    def traces(self) -> IngestRun:
        """The conversations of everything collected so far (a snapshot), with the report."""
        with self._lock:
            items = list(self._items)
        return IngestRun(lambda report: _assemble(items, report))


def _assemble(items: list[ContainerItem], report: IngestReport) -> Iterator[AgentTrace]:
    from agent_eval.ingest._assemble import Assembler

    assembler = Assembler(report)
    file = FileReport(path=_SOURCE.path, container=SDK_CONTAINER)
    report.files.append(file)
    yield from feed_items(iter(items), file, report, assembler)
    yield from assembler.finish()


def _convert(item: Any, convert: Any, log: bool) -> ContainerItem:
    try:
        converted: ContainerItem = convert(item)
    except Exception as exc:  # a span we cannot read is counted, not raised into the app
        return Skipped(
            reason="unreadable_sdk_record",
            detail=f"{type(exc).__name__}: {exc}",
            source=_SOURCE,
            spans=0 if log else 1,
            logs=1 if log else 0,
        )
    return converted


class AgentTraceSpanExporter(SpanExporter):
    """A ``SpanExporter`` that keeps finished spans (as SpanRecords) in a :class:`Collector`."""

    def __init__(self, collector: Collector) -> None:
        self._collector = collector
        self._shutdown = threading.Event()

    def export(self, spans: Sequence[ReadableSpan]) -> SpanExportResult:
        """Convert and keep the spans; ``FAILURE`` after shutdown or on an internal error."""
        if self._shutdown.is_set():
            return SpanExportResult.FAILURE
        try:
            self._collector.add([_convert(s, span_record_from_sdk, False) for s in spans])
        except Exception:  # the exporter contract: never raise into the application
            _log.exception("agent-eval span exporter failed")
            return SpanExportResult.FAILURE
        return SpanExportResult.SUCCESS

    def shutdown(self) -> None:
        """Refuse further exports; what was collected stays readable."""
        self._shutdown.set()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: exports are stored synchronously."""
        return True


class AgentTraceLogExporter(LogRecordExporter):
    """A ``LogRecordExporter`` that keeps GenAI event log records in a :class:`Collector`."""

    def __init__(self, collector: Collector) -> None:
        self._collector = collector
        self._shutdown = threading.Event()

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        """Convert and keep the log records; ``FAILURE`` after shutdown or on an internal error."""
        if self._shutdown.is_set():
            return LogRecordExportResult.FAILURE
        try:
            self._collector.add([_convert(r, log_record_from_sdk, True) for r in batch])
        except Exception:  # the exporter contract: never raise into the application
            _log.exception("agent-eval log exporter failed")
            return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        """Refuse further exports; what was collected stays readable."""
        self._shutdown.set()

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Nothing is buffered: exports are stored synchronously."""
        return True


def install(
    tracer_provider: TracerProvider | None = None, logger_provider: LoggerProvider | None = None
) -> Collector:
    """Collect spans (and GenAI event log records) from SDK providers into a new Collector.

    Args:
        tracer_provider: The SDK provider; default: the global one.
        logger_provider: The SDK logger provider; default: the global one when it is an SDK
            ``LoggerProvider`` (otherwise only spans are collected).

    Raises:
        ConfigError: the tracer provider (given or global) is not an SDK ``TracerProvider``,
            or ``logger_provider`` was given but is not an SDK ``LoggerProvider``.

    """
    provider = tracer_provider or trace.get_tracer_provider()
    if not isinstance(provider, TracerProvider):
        raise ConfigError(
            f"install() needs an opentelemetry-sdk TracerProvider, got {type(provider).__name__}; "
            "call trace.set_tracer_provider(TracerProvider()) first or pass one"
        )
    logs = logger_provider or get_logger_provider()
    if logger_provider is not None and not isinstance(logs, LoggerProvider):
        raise ConfigError(
            f"logger_provider must be an SDK LoggerProvider, got {type(logs).__name__}"
        )
    collector = Collector()
    provider.add_span_processor(SimpleSpanProcessor(collector.span_exporter))
    if isinstance(logs, LoggerProvider):
        logs.add_log_record_processor(SimpleLogRecordProcessor(collector.log_exporter))
    return collector
