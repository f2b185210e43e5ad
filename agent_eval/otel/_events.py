"""Results as OTel GenAI ``gen_ai.evaluation.result`` events, emitted through the OTel SDK.

Each :class:`~agent_eval._result.MetricResult` becomes one event (a log record with
``event_name = "gen_ai.evaluation.result"``) parented to the evaluated span (the log record's
trace id and span id; see :mod:`agent_eval.otel._targets`), with the attributes of the GenAI
semantic conventions (keys and version in :mod:`agent_eval.otel._semconv`):

- ``gen_ai.evaluation.name``: the metric name without its version (``goal_accuracy``);
- ``gen_ai.evaluation.score.value``: the score (``0.0``/``1.0`` for a binary verdict), on ``ok``
  rows only;
- ``gen_ai.evaluation.score.label``: ``"pass"`` for verdict ``"1"``, ``"fail"`` for ``"0"``,
  any other typed verdict (an ordinal ``"4"``) as itself;
- ``gen_ai.evaluation.explanation``: the judge's reason;
- ``error.type``: on ``error`` rows only, the row's ``error_type`` (e.g.
  ``invalid_judge_output``, ``judge_unavailable``): the evaluation ended in an error. A
  ``skipped`` row (nothing to judge: ``no_context``, ``final_reply_missing``) is no error and
  carries none; its status and reason are in ``agent_eval.status`` / ``agent_eval.skip_reason``;
- ``gen_ai.response.id``: the provider's id of the evaluated completion, when its span
  recorded one (see :mod:`agent_eval.otel._targets`);
- ``gen_ai.conversation.id``: the conversation's id (the standard GenAI registry key);
- ``agent_eval.*``: the run id, status, unit id, ``metric@version``, formatter and its
  fingerprint, prompt sha256, judge model, verdict, and a note (a re-score);
- ``agent_eval.steering.*``: on a row whose unit has steering flags (:mod:`agent_eval.steering`),
  how many, their distinct classes and where each was found.

A conversation-level result (goal accuracy) is parented to the conversation's agent-invocation
(else root) span, a unit-level one to the span of the answer it judged
(:mod:`agent_eval.otel._targets`).

Events go through the SDK's own ``LoggerProvider`` (a private one: the application's global
providers are not touched), one ``BatchLogRecordProcessor`` per exporter: the OTLP/HTTP
exporter (``opentelemetry-exporter-otlp-proto-http``; endpoint, headers, timeout, compression
and certificates from the standard ``OTEL_EXPORTER_OTLP_*`` / ``OTEL_EXPORTER_OTLP_LOGS_*``
variables unless given) and/or :class:`OtlpJsonFileExporter`, which writes OTLP JSON next to
the results. The exporter contract holds: a failed export is logged and counted (see
:class:`EventReport`), never raised into the run. The Python SDK ships its logs signal under
``opentelemetry.sdk._logs`` and the exporter under ``..._log_exporter``: those are the
documented import paths of the (still experimental) logs API, not internals.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import orjson
from opentelemetry import trace
from opentelemetry._logs import LogRecord, SeverityNumber
from opentelemetry.sdk._logs import LoggerProvider
from opentelemetry.sdk._logs.export import BatchLogRecordProcessor, LogRecordExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.trace import NonRecordingSpan, SpanContext, TraceFlags

from agent_eval._result import CONVERSATION_UNIT, MetricResult
from agent_eval.otel import _semconv as sc
from agent_eval.otel._targets import SpanTarget

try:  # the names since opentelemetry-sdk 1.39
    from opentelemetry.sdk._logs.export import LogRecordExportResult
except ImportError:  # pragma: no cover  (older SDKs)
    from opentelemetry.sdk._logs.export import LogExportResult as LogRecordExportResult  # type: ignore[assignment]

__all__ = [
    "EVENTS_FILE_NAME",
    "CountingExporter",
    "EvaluationEvents",
    "EventReport",
    "OtlpJsonFileExporter",
    "evaluation_attributes",
    "logs_endpoint",
    "otlp_exporter",
]

EVENTS_FILE_NAME = "evaluation-events.otlp.jsonl"
"""The OTLP JSON file written next to the results: one ``ExportLogsServiceRequest`` a line."""
_log = logging.getLogger(__name__)
_VERSION = "0.1.0"


_LABELS = {"1": sc.LABEL_PASS, "0": sc.LABEL_FAIL}
"""Binary verdicts as labels; any other typed verdict (an ordinal ``"4"``) is its own label."""


def _metric_name(metric: str) -> str:
    return metric.split("@", 1)[0]


def _steering_attributes(result: MetricResult) -> dict[str, Any]:
    """The ``agent_eval.steering.*`` attributes of a row with steering flags, else ``{}``."""
    if not result.steering:
        return {}
    return {
        sc.AGENT_EVAL_STEERING_FLAGS: len(result.steering),
        sc.AGENT_EVAL_STEERING_KINDS: list(dict.fromkeys(flag.kind for flag in result.steering)),
        sc.AGENT_EVAL_STEERING_LOCATIONS: [flag.where for flag in result.steering],
    }


def evaluation_attributes(
    result: MetricResult, note: str | None = None, response_id: str | None = None
) -> dict[str, Any]:
    """The event attributes of ``result`` (see the module docstring); ``None`` values left out.

    Args:
        result: The row.
        note: Why it was scored again (``agent_eval.note``), if it was.
        response_id: The ``gen_ai.response.id`` of the evaluated completion, when known.

    """
    label = _LABELS.get(result.verdict or "", result.verdict)
    values: dict[str, Any] = {
        sc.GEN_AI_EVALUATION_NAME: _metric_name(result.metric),
        sc.GEN_AI_EVALUATION_SCORE_VALUE: result.score,
        sc.GEN_AI_EVALUATION_SCORE_LABEL: label,
        sc.GEN_AI_EVALUATION_EXPLANATION: result.reason,
        sc.ERROR_TYPE: result.error_type if result.status == "error" else None,
        sc.GEN_AI_RESPONSE_ID: response_id,
        sc.GEN_AI_CONVERSATION_ID: result.conversation_id,
        sc.AGENT_EVAL_RUN_ID: result.run_id,
        sc.AGENT_EVAL_STATUS: result.status,
        sc.AGENT_EVAL_SKIP_REASON: result.error_type if result.status == "skipped" else None,
        sc.AGENT_EVAL_UNIT_ID: result.unit_id,
        sc.AGENT_EVAL_METRIC: result.metric,
        sc.AGENT_EVAL_FORMATTER: result.formatter,
        sc.AGENT_EVAL_FORMATTER_FINGERPRINT: result.formatter_fingerprint,
        sc.AGENT_EVAL_PROMPT_SHA256: result.prompt_sha256,
        sc.AGENT_EVAL_JUDGE_MODEL: result.judge_model,
        sc.AGENT_EVAL_VERDICT: result.verdict,
        sc.AGENT_EVAL_NOTE: note,
        **_steering_attributes(result),
    }
    return {key: value for key, value in values.items() if value is not None}


@dataclass
class EventReport:
    """What became of the events of one :class:`EvaluationEvents`.

    Attributes:
        emitted: Events handed to the SDK.
        exported: Per exporter (by its description), log records exported successfully.
        failed: Per exporter, log records whose export failed (logged; never fatal).

    """

    emitted: int = 0
    exported: dict[str, int] = field(default_factory=dict)
    failed: dict[str, int] = field(default_factory=dict)

    @property
    def failures(self) -> int:
        """All failed log records, over every exporter."""
        return sum(self.failed.values())

    def line(self) -> str:
        """One line for the terminal, e.g. ``evaluation events: 3 emitted; otlp ...: 3 ok``."""
        parts = [
            f"{name}: {self.exported.get(name, 0)} exported, {self.failed.get(name, 0)} failed"
            for name in self.exported
        ]
        return f"evaluation events: {self.emitted} emitted; " + "; ".join(parts)


class CountingExporter(LogRecordExporter):
    """Wraps an exporter and counts what it exported and what failed; never raises.

    Args:
        inner: The exporter that does the work.
        name: How it is named in :class:`EventReport` (e.g. ``"otlp http://host:4318/v1/logs"``).

    """

    def __init__(self, inner: LogRecordExporter, name: str) -> None:
        self.inner, self.name = inner, name
        self.exported = self.failed = 0
        self._lock = threading.Lock()

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        """Delegate; count the batch as exported or failed (an exception is a failure)."""
        try:
            result = self.inner.export(batch)
        except Exception as exc:  # the exporter contract: never raise into the run
            _log.warning("evaluation events: %s failed: %s: %s", self.name, type(exc).__name__, exc)
            result = LogRecordExportResult.FAILURE
        with self._lock:
            if result == LogRecordExportResult.SUCCESS:
                self.exported += len(batch)
            else:
                self.failed += len(batch)
        if result != LogRecordExportResult.SUCCESS:
            _log.warning("evaluation events: %d not exported to %s", len(batch), self.name)
        return result

    def shutdown(self) -> None:
        """Shut the inner exporter down."""
        self.inner.shutdown()  # type: ignore[no-untyped-call]

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Flush the inner exporter."""
        return self.inner.force_flush(timeout_millis)


def _any_value(value: Any) -> dict[str, Any]:
    if isinstance(value, bool):
        return {"boolValue": value}
    if isinstance(value, int):
        return {"intValue": str(value)}
    if isinstance(value, float):
        return {"doubleValue": value}
    if isinstance(value, list | tuple):
        return {"arrayValue": {"values": [_any_value(v) for v in value]}}
    if isinstance(value, Mapping):
        return {"kvlistValue": {"values": _key_values(value)}}
    return {"stringValue": str(value)}


def _key_values(attributes: Mapping[str, Any] | None) -> list[dict[str, Any]]:
    return [{"key": str(k), "value": _any_value(v)} for k, v in (attributes or {}).items()]


def _log_record_json(data: Any) -> tuple[dict[str, Any], Any, Any]:
    """One SDK log record as OTLP JSON, with its resource and scope."""
    record = data.log_record
    resource = getattr(data, "resource", None) or getattr(record, "resource", None)
    scope = getattr(data, "instrumentation_scope", None)
    entry: dict[str, Any] = {
        "timeUnixNano": str(record.timestamp or record.observed_timestamp or 0),
        "observedTimeUnixNano": str(record.observed_timestamp or 0),
        "attributes": _key_values(record.attributes),
    }
    if record.severity_number is not None:
        entry["severityNumber"] = record.severity_number.value
    if record.severity_text:
        entry["severityText"] = record.severity_text
    if record.body is not None:
        entry["body"] = _any_value(record.body)
    if getattr(record, "event_name", None):
        entry["eventName"] = record.event_name
    if record.trace_id:
        entry["traceId"] = format(record.trace_id, "032x")
        entry["spanId"] = format(record.span_id, "016x")
        entry["flags"] = int(record.trace_flags or 0)
    return entry, resource, scope


class OtlpJsonFileExporter(LogRecordExporter):
    """Appends each batch to a file as one OTLP/JSON ``ExportLogsServiceRequest`` line.

    The file is the OTel Collector file exporter's JSON Lines layout (ids in hex, as the
    OTLP/JSON encoding requires), which ``agent-eval ingest`` and the Collector read back.

    Args:
        path: The file; created (with its directory) on the first export, appended after.

    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self._lock = threading.Lock()

    def export(self, batch: Sequence[Any]) -> LogRecordExportResult:
        """Write the batch as one line; ``FAILURE`` (logged) when the file cannot be written."""
        groups: dict[tuple[int, int], tuple[Any, Any, list[dict[str, Any]]]] = {}
        for data in batch:
            entry, resource, scope = _log_record_json(data)
            key = (id(resource), id(scope))
            groups.setdefault(key, (resource, scope, []))[2].append(entry)
        request = {"resourceLogs": [_resource_logs(r, s, e) for r, s, e in groups.values()]}
        try:
            with self._lock:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                with self.path.open("ab") as handle:
                    handle.write(orjson.dumps(request) + b"\n")
        except OSError as exc:
            _log.warning("evaluation events: cannot write %s: %s", self.path, exc)
            return LogRecordExportResult.FAILURE
        return LogRecordExportResult.SUCCESS

    def shutdown(self) -> None:
        """Nothing to release: each export opens and closes the file."""

    def force_flush(self, timeout_millis: int = 30000) -> bool:
        """Exports are written synchronously."""
        return True


def _resource_logs(resource: Any, scope: Any, entries: list[dict[str, Any]]) -> dict[str, Any]:
    scope_json: dict[str, Any] = {}
    if scope is not None:
        scope_json = {"name": scope.name, "version": scope.version or ""}
    scoped: dict[str, Any] = {"scope": scope_json, "logRecords": entries}
    if scope is not None and scope.schema_url:
        scoped["schemaUrl"] = scope.schema_url
    attributes = dict(resource.attributes) if resource is not None else {}
    return {"resource": {"attributes": _key_values(attributes)}, "scopeLogs": [scoped]}


def logs_endpoint(url: str) -> str:
    """``url`` as the OTLP/HTTP logs endpoint: ``/v1/logs`` appended unless already there.

    Like ``OTEL_EXPORTER_OTLP_ENDPOINT`` (OTLP exporter spec), a base URL gets the signal path;
    a URL ending in ``/v1/logs`` is used as is.

    Raises:
        ValueError: not an ``http(s)://host...`` URL.

    """
    parts = urlsplit(url)
    if parts.scheme not in ("http", "https") or not parts.netloc:
        raise ValueError(f"--otlp-endpoint must be an http(s)://host:port URL, got {url!r}")
    if parts.path.rstrip("/").endswith("/v1/logs"):
        return url
    return url.rstrip("/") + "/v1/logs"


def otlp_exporter(endpoint: str | None = None) -> CountingExporter:
    """The OTLP/HTTP (protobuf) log exporter, counted.

    Args:
        endpoint: A base or ``/v1/logs`` URL (see :func:`logs_endpoint`); ``None``: the
            exporter's own configuration from ``OTEL_EXPORTER_OTLP_LOGS_ENDPOINT`` /
            ``OTEL_EXPORTER_OTLP_ENDPOINT`` (default ``http://localhost:4318/v1/logs``).

    Raises:
        ValueError: ``endpoint`` is not an http(s) URL.

    """
    from opentelemetry.exporter.otlp.proto.http._log_exporter import OTLPLogExporter

    if endpoint is None:
        exporter = OTLPLogExporter()
        return CountingExporter(exporter, "otlp (OTEL_EXPORTER_OTLP_* configuration)")
    url = logs_endpoint(endpoint)
    return CountingExporter(OTLPLogExporter(endpoint=url), f"otlp {_without_credentials(url)}")


def _without_credentials(url: str) -> str:
    parts = urlsplit(url)
    host = parts.hostname or ""
    port = f":{parts.port}" if parts.port else ""
    return f"{parts.scheme}://{host}{port}{parts.path}"


class EvaluationEvents:
    """Emits one ``gen_ai.evaluation.result`` event per result through the OTel SDK.

    Args:
        exporters: Where the events go (e.g. :func:`otlp_exporter`, or an
            :class:`OtlpJsonFileExporter` wrapped in :class:`CountingExporter`).
        targets: The evaluated span per conversation id, for results that carry none.
        resource: The SDK resource; default ``service.name=agent-eval`` merged with
            ``OTEL_SERVICE_NAME`` / ``OTEL_RESOURCE_ATTRIBUTES``.

    Use :meth:`emit` (or pass it as an engine ``on_result`` callback), then :meth:`close`,
    which flushes and returns the :class:`EventReport`. Nothing here raises for an export
    failure.
    """

    def __init__(
        self,
        exporters: Iterable[CountingExporter],
        *,
        targets: Mapping[str, SpanTarget] | None = None,
        resource: Resource | None = None,
    ) -> None:
        self.exporters = list(exporters)
        self.targets = dict(targets or {})
        self._provider = LoggerProvider(
            resource=resource or Resource.create({"service.name": "agent-eval"})
        )
        for exporter in self.exporters:
            self._provider.add_log_record_processor(BatchLogRecordProcessor(exporter))
        self._logger = self._provider.get_logger(sc.SCOPE_NAME, _VERSION, sc.SCHEMA_URL)
        self._emitted = 0
        self._closed = False

    def target_of(self, result: MetricResult) -> SpanTarget | None:
        """The span ``result`` evaluated (see :mod:`agent_eval.otel._targets`).

        A conversation-level result: its conversation's target (agent-invocation or root
        span). A unit-level one: its own span id, in the conversation's last trace. A result
        whose conversation has no known target falls back to its own span id, if any.
        """
        span_id = result.span_id
        known = self.targets.get(result.conversation_id)
        if known is not None and (result.unit_id == CONVERSATION_UNIT or not span_id):
            return known
        if span_id:
            trace_id = known.trace_id if known else (result.trace_ids or ("",))[-1]
            response_id = known.response_ids.get(span_id) if known else None
            return SpanTarget(trace_id, span_id, response_id) if trace_id else None
        return None

    def emit(self, result: MetricResult, note: str | None = None) -> None:
        """Emit the event of ``result`` (after :meth:`close`: ignored, with a debug log)."""
        if self._closed:
            _log.debug("evaluation events: emit after close ignored")
            return
        target = self.target_of(result)
        context = None
        if target is not None:
            span_context = SpanContext(
                trace_id=int(target.trace_id, 16),
                span_id=int(target.span_id, 16),
                is_remote=True,
                trace_flags=TraceFlags(TraceFlags.SAMPLED),
            )
            context = trace.set_span_in_context(NonRecordingSpan(span_context))
        record = LogRecord(
            timestamp=time.time_ns(),
            context=context,
            severity_number=SeverityNumber.INFO,
            attributes=evaluation_attributes(
                result, note, target.response_id if target is not None else None
            ),
            event_name=sc.EVENT_GEN_AI_EVALUATION_RESULT,
        )
        self._logger.emit(record)
        self._emitted += 1

    def report(self) -> EventReport:
        """The counts so far."""
        return EventReport(
            emitted=self._emitted,
            exported={e.name: e.exported for e in self.exporters},
            failed={e.name: e.failed for e in self.exporters},
        )

    def flush(self, timeout_millis: int = 30000) -> bool:
        """Export what is buffered now; ``False`` when it did not finish in time."""
        return self._provider.force_flush(timeout_millis)

    def close(self) -> EventReport:
        """Flush, shut the SDK pipeline down and return the counts (idempotent)."""
        if not self._closed:
            self._closed = True
            self._provider.force_flush()
            self._provider.shutdown()
        return self.report()
