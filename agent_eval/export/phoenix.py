"""Results as Phoenix span annotations, written through Phoenix's own client.

Each result of a run becomes one annotation on the span it evaluated (its ``span_id``: for a
conversation its last LLM span, for a turn that turn's span), written
with ``phoenix.client.Client().spans.log_span_annotations`` (the ``arize-phoenix-client``
package, extra ``phoenix``):

- ``name``: the metric name without its version (``goal_accuracy``);
- ``annotator_kind``: ``"LLM"`` (an LLM judge);
- ``result``: ``score`` (0.0/1.0), ``label`` (``pass``/``fail``, as the OTel evaluation event)
  and ``explanation`` (the judge's reason); an ``error`` row gets label ``error`` and its error
  type and message as the explanation;
- ``metadata``: run id, ``metric@version``, formatter and fingerprint, prompt sha256, judge
  model, status, revision and note;
- ``identifier``: ``agent-eval:<run id>:<revision>``, which Phoenix uses to update rather than
  duplicate, so an export can be repeated (a retry after a failure writes each annotation once).

``skipped`` rows and rows whose conversation has no known span are not written and are counted
with the reason. Annotations go in batches; a batch Phoenix does not accept (down, 4xx/5xx) is
counted as not written with the error, and the export carries on with the next batch.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_eval.errors import MissingDependencyError
from agent_eval.otel import semconv as sc
from agent_eval.result import CONVERSATION_UNIT, MetricResult

__all__ = ["ANNOTATOR_KIND", "BATCH_SIZE", "ExportReport", "annotation", "export_annotations"]

ANNOTATOR_KIND = "LLM"
BATCH_SIZE = 100
"""Annotations per request."""


@dataclass
class ExportReport:
    """What an export did.

    Attributes:
        written: Annotations Phoenix accepted.
        not_written: Annotations whose request failed, by conversation id (one entry per
            annotation: a conversation appears once per metric and unit).
        not_written_annotations: The same annotations, each named by its conversation id,
            unit id and metric (``{"conversation_id", "unit_id", "metric"}``).
        skipped: Rows not exported, by reason (``skipped_row``, ``no_span``).
        errors: The distinct request errors.

    """

    written: int = 0
    not_written: list[str] = field(default_factory=list)
    not_written_annotations: list[dict[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every exportable annotation was written."""
        return not self.not_written

    def not_written_line(self, shown: int = 10) -> str:
        """``c1 goal_accuracy@1, c1/turn:2 faithfulness@1, ... (12 in all)``."""
        texts = [
            a["conversation_id"]
            + ("" if a["unit_id"] == CONVERSATION_UNIT else f"/{a['unit_id']}")
            + f" {a['metric']}"
            for a in self.not_written_annotations
        ]
        more = f", ... ({len(texts)} in all)" if len(texts) > shown else ""
        return ", ".join(texts[:shown]) + more

    def line(self) -> str:
        """``written 4, not written 1, skipped 2 (skipped_row: 2)``."""
        skipped = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items()))
        text = f"written {self.written}, not written {len(self.not_written)}"
        text += f", skipped {sum(self.skipped.values())}" + (f" ({skipped})" if skipped else "")
        return text


def annotation(result: MetricResult, span_id: str) -> dict[str, Any]:
    """The ``SpanAnnotationData`` of ``result`` on ``span_id`` (see the module docstring)."""
    if result.status == "ok":
        outcome: dict[str, Any] = {
            "score": result.score,
            "label": {"1": sc.LABEL_PASS, "0": sc.LABEL_FAIL}.get(
                result.verdict or "", result.verdict
            ),
        }
        if result.reason:
            outcome["explanation"] = result.reason
    else:
        outcome = {
            "label": "error",
            "explanation": f"{result.error_type}: {result.error_message or ''}".strip(),
        }
    metadata = {
        "run_id": result.run_id,
        "conversation_id": result.conversation_id,
        "unit_id": result.unit_id,
        "metric": result.metric,
        "formatter": result.formatter,
        "formatter_fingerprint": result.formatter_fingerprint,
        "prompt_sha256": result.prompt_sha256,
        "judge_model": result.judge_model,
        "status": result.status,
        "revision": result.revision,
    }
    if result.note:
        metadata["note"] = result.note
    return {
        "name": result.metric.split("@", 1)[0],
        "annotator_kind": ANNOTATOR_KIND,
        "span_id": span_id,
        "result": outcome,
        "metadata": metadata,
        "identifier": f"agent-eval:{result.run_id}:{result.revision}",
    }


def _client(endpoint: str, api_key: str | None, timeout: float) -> Any:
    try:
        from phoenix.client import Client
    except ImportError:
        raise MissingDependencyError("agent-eval export phoenix", "phoenix") from None
    import httpx

    headers = {"Authorization": f"Bearer {api_key}"} if api_key else {}
    transport = httpx.Client(base_url=endpoint, timeout=timeout, headers=headers)
    return Client(http_client=transport)


def export_annotations(
    results: Iterable[MetricResult],
    *,
    endpoint: str,
    api_key: str | None = None,
    timeout: float = 30.0,
    batch_size: int = BATCH_SIZE,
) -> ExportReport:
    """Write ``results`` as span annotations to the Phoenix at ``endpoint``.

    Args:
        results: The rows (one run's, typically).
        endpoint: Phoenix's base URL, e.g. ``http://127.0.0.1:6006``.
        api_key: Sent as the bearer token when Phoenix has authentication on.
        timeout: Seconds per request.
        batch_size: Annotations per request.

    Raises:
        MissingDependencyError: ``arize-phoenix-client`` is not installed.

    """
    report = ExportReport()
    pending: list[tuple[str, dict[str, Any]]] = []
    for result in results:
        if result.status == "skipped":
            report.skipped["skipped_row"] += 1
            continue
        span_id = result.span_id
        if span_id is None:
            report.skipped["no_span"] += 1
            continue
        pending.append((result.conversation_id, annotation(result, span_id)))
    if not pending:
        return report
    client = _client(endpoint, api_key, timeout)
    for start in range(0, len(pending), batch_size):
        _send(client, pending[start : start + batch_size], report)
    return report


def _send(client: Any, batch: Sequence[tuple[str, dict[str, Any]]], report: ExportReport) -> None:
    try:
        client.spans.log_span_annotations(span_annotations=[a for _, a in batch], sync=True)
    except Exception as exc:  # httpx errors, HTTP status errors: counted, the export goes on
        message = f"{type(exc).__name__}: {exc}"
        if message not in report.errors:
            report.errors.append(message)
        report.not_written += [conversation for conversation, _ in batch]
        report.not_written_annotations += [_named(a) for _, a in batch]
        return
    report.written += len(batch)


def _named(annotation: Mapping[str, Any]) -> dict[str, str]:
    """The conversation id, unit id and metric an annotation is about."""
    metadata = annotation["metadata"]
    return {k: str(metadata[k]) for k in ("conversation_id", "unit_id", "metric")}
