"""Results as Phoenix annotations (sessions, root spans, answer spans), through Phoenix's client.

Phoenix shows a verdict where it is annotated, so each result goes where its users look
(``arize-phoenix-client``, extra ``phoenix``):

- a **conversation-level** result (goal accuracy) becomes a **session annotation** of its
  conversation (``client.sessions.log_session_annotations``; Phoenix groups spans into sessions
  by ``session.id``, which ingest reads as the conversation id), and a **span annotation on the
  conversation's root span of each trace** (its agent-invocation span when it has one:
  ``AgentTrace.root_spans``, read from the run's ``conversations.jsonl``), which is what the
  trace list shows. A conversation with no id of its own (grouped by its trace id) has no
  session and gets the span annotations only; a run without root spans (written by an older
  agent-eval) annotates the span the result names, its last LLM span, as before;
- a **unit-level** result (one answer: faithfulness, a RAG reviewer) becomes a span annotation
  on the span of the answer it judged (its ``span_id``).

Every annotation has:

- ``name``: the metric name without its version (``goal_accuracy``);
- ``annotator_kind``: ``"LLM"`` (an LLM judge);
- ``result``: ``score`` (0.0/1.0), ``label`` (``pass``/``fail``, as the OTel evaluation event)
  and ``explanation`` (the judge's reason); an ``error`` row gets label ``error`` and its error
  type and message as the explanation;
- ``metadata``: run id, conversation and unit id, ``metric@version``, formatter and
  fingerprint, prompt sha256, judge model, status, revision and note;
- ``identifier``: ``agent-eval:<run id>:<revision>``, which Phoenix uses to update rather than
  duplicate, so an export can be repeated (a retry after a failure writes each annotation once).

``skipped`` rows and rows with nowhere to go (no session, no span) are not written and are
counted with the reason. Annotations go in batches per kind; a batch Phoenix does not accept
(down, 4xx/5xx, a server too old for session annotations) is counted as not written with the
error, and the export carries on with the next batch. Phoenix refuses a whole batch of session
annotations (404) when one conversation id is not one of its sessions (its spans carried no
``session.id``, e.g. a conversation grouped by ``gen_ai.conversation.id`` only): that batch is
sent again one annotation at a time, and each unknown session is counted as skipped
(``no_phoenix_session``; the verdict is still on the conversation's root spans).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_eval._result import CONVERSATION_UNIT, MetricResult
from agent_eval._trace import SpanRef
from agent_eval.errors import MissingDependencyError
from agent_eval.otel import _semconv as sc

__all__ = [
    "ANNOTATOR_KIND",
    "BATCH_SIZE",
    "ExportReport",
    "annotation",
    "export_annotations",
    "session_annotation",
]

ANNOTATOR_KIND = "LLM"
BATCH_SIZE = 100
"""Annotations per request."""


@dataclass
class ExportReport:
    """What an export did.

    Attributes:
        written: Annotations Phoenix accepted.
        written_by_kind: The same, by kind (``session``, ``span``).
        not_written: Annotations whose request failed, by conversation id (one entry per
            annotation: a conversation appears once per metric and unit).
        not_written_annotations: The same annotations, each named by its conversation id,
            unit id, metric and target (``{"conversation_id", "unit_id", "metric", "target"}``,
            target ``session`` or ``span <span id>``).
        skipped: Rows not exported, by reason (``skipped_row``, ``no_span``).
        errors: The distinct request errors.

    """

    written: int = 0
    written_by_kind: Counter[str] = field(default_factory=Counter)
    not_written: list[str] = field(default_factory=list)
    not_written_annotations: list[dict[str, str]] = field(default_factory=list)
    skipped: Counter[str] = field(default_factory=Counter)
    errors: list[str] = field(default_factory=list)

    @property
    def ok(self) -> bool:
        """Whether every exportable annotation was written."""
        return not self.not_written

    def not_written_line(self, shown: int = 10) -> str:
        """``c1 goal_accuracy@1 (session), c1/turn:2 faithfulness@1 (span ab12...), ...``."""
        texts = [
            a["conversation_id"]
            + ("" if a["unit_id"] == CONVERSATION_UNIT else f"/{a['unit_id']}")
            + f" {a['metric']} ({a['target']})"
            for a in self.not_written_annotations
        ]
        more = f", ... ({len(texts)} in all)" if len(texts) > shown else ""
        return ", ".join(texts[:shown]) + more

    def line(self) -> str:
        """``written 4 (session: 1, span: 3), not written 1, skipped 2 (skipped_row: 2)``."""
        skipped = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items()))
        kinds = ", ".join(f"{k}: {v}" for k, v in sorted(self.written_by_kind.items()))
        text = f"written {self.written}" + (f" ({kinds})" if kinds else "")
        text += f", not written {len(self.not_written)}"
        text += f", skipped {sum(self.skipped.values())}" + (f" ({skipped})" if skipped else "")
        return text


def annotation(result: MetricResult, span_id: str) -> dict[str, Any]:
    """The ``SpanAnnotationData`` of ``result`` on ``span_id`` (see the module docstring)."""
    return {**_annotation_body(result), "span_id": span_id}


def session_annotation(result: MetricResult) -> dict[str, Any]:
    """The ``SessionAnnotationData`` of a conversation-level ``result`` on its conversation."""
    return {**_annotation_body(result), "session_id": result.conversation_id}


def _annotation_body(result: MetricResult) -> dict[str, Any]:
    """What every annotation of ``result`` holds, whatever it is attached to."""
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
        "result": outcome,
        "metadata": metadata,
        "identifier": f"agent-eval:{result.run_id}:{result.revision}",
    }


def _placed(
    result: MetricResult, roots: Mapping[str, Sequence[SpanRef]]
) -> list[tuple[str, dict[str, Any]]]:
    """``(kind, annotation)`` for each place ``result`` goes (see the module docstring)."""
    if result.unit_id != CONVERSATION_UNIT:
        return [("span", annotation(result, result.span_id))] if result.span_id else []
    placed = []
    if result.conversation_id not in result.trace_ids:  # its own id: a Phoenix session
        placed.append(("session", session_annotation(result)))
    spans = [root.span_id for root in roots.get(result.conversation_id, ())]
    if not spans and result.span_id:
        spans = [result.span_id]
    placed += [("span", annotation(result, span_id)) for span_id in spans]
    return placed


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
    roots: Mapping[str, Sequence[SpanRef]] | None = None,
) -> ExportReport:
    """Write ``results`` as Phoenix annotations at ``endpoint`` (see the module docstring).

    Args:
        results: The rows (one run's, typically).
        endpoint: Phoenix's base URL, e.g. ``http://127.0.0.1:6006``.
        api_key: Sent as the bearer token when Phoenix has authentication on.
        timeout: Seconds per request.
        batch_size: Annotations per request.
        roots: ``{conversation_id: AgentTrace.root_spans}``, where conversation-level results
            are annotated on the trace list; a conversation not in it is annotated on the
            span its results name.

    Raises:
        MissingDependencyError: ``arize-phoenix-client`` is not installed.

    """
    report = ExportReport()
    pending: dict[str, list[tuple[str, dict[str, Any]]]] = {"session": [], "span": []}
    for result in results:
        if result.status == "skipped":
            report.skipped["skipped_row"] += 1
            continue
        placed = _placed(result, roots or {})
        if not placed:
            report.skipped["no_span"] += 1
        for kind, item in placed:
            pending[kind].append((result.conversation_id, item))
    if not any(pending.values()):
        return report
    client = _client(endpoint, api_key, timeout)
    for kind, items in pending.items():
        for start in range(0, len(items), batch_size):
            _send(client, kind, items[start : start + batch_size], report)
    return report


def _send(
    client: Any, kind: str, batch: Sequence[tuple[str, dict[str, Any]]], report: ExportReport
) -> None:
    try:
        _log(client, kind, [a for _, a in batch])
    except Exception as exc:  # httpx errors, HTTP status errors: counted, the export goes on
        if kind == "session" and len(batch) > 1 and _status(exc) == 404:
            for one in batch:  # find the unknown session(s); write the others
                _send(client, kind, [one], report)
        elif kind == "session" and _status(exc) == 404:
            report.skipped["no_phoenix_session"] += 1
        else:
            _not_written(report, kind, batch, exc)
        return
    report.written += len(batch)
    report.written_by_kind[kind] += len(batch)


def _not_written(
    report: ExportReport, kind: str, batch: Sequence[tuple[str, dict[str, Any]]], exc: Exception
) -> None:
    """Count ``batch`` as not written, with the request's error once."""
    message = f"{kind} annotations: {type(exc).__name__}: {exc}"
    if message not in report.errors:
        report.errors.append(message)
    report.not_written += [conversation for conversation, _ in batch]
    report.not_written_annotations += [_named(a) for _, a in batch]


def _log(client: Any, kind: str, annotations: list[dict[str, Any]]) -> None:
    """One request of ``annotations`` of ``kind`` (``session`` or ``span``), synchronously."""
    if kind == "session":
        client.sessions.log_session_annotations(session_annotations=annotations, sync=True)
    else:
        client.spans.log_span_annotations(span_annotations=annotations, sync=True)


def _status(exc: Exception) -> int | None:
    """The HTTP status of an ``httpx.HTTPStatusError`` (``None`` for any other error)."""
    response = getattr(exc, "response", None)
    status = getattr(response, "status_code", None)
    return status if isinstance(status, int) else None


def _named(annotation: Mapping[str, Any]) -> dict[str, str]:
    """The conversation id, unit id and metric an annotation is about, and where it goes.

    ``target`` is ``session`` or ``span <span id>``.
    """
    metadata = annotation["metadata"]
    named = {k: str(metadata[k]) for k in ("conversation_id", "unit_id", "metric")}
    span_id = annotation.get("span_id")
    named["target"] = f"span {span_id}" if span_id else "session"
    return named
