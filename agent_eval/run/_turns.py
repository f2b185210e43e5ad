"""The per-turn view of a RAG run: what each turn asked, retrieved, answered, and how it failed.

``score`` writes ``DIR/turns.jsonl`` beside the results when a metric scores turns (like
``renderings.jsonl`` for conversations): one :class:`TurnRecord` per turn, with the question,
the distinct passages (id, text, human relevance label), the answer, the reference and the
turn's labels. :func:`turn_rows` joins it with the run's results into one :class:`TurnRow` per
turn (every metric's score, verdict and details side by side) and classifies its failures,
**retrieval apart from generation** (:data:`FAILURE_CLASSES`):

- ``retrieval_miss`` (retrieval): nothing relevant was retrieved for an answerable turn
  (``context_precision`` found no relevant passage, or the turn's retriever ran and returned
  nothing) or a needed passage is missing (``context_recall`` below 1); a turn labelled
  UNANSWERABLE / UNDERSPECIFIED, or CONVERSATIONAL (it needs no passage), is never one;
- ``noisy_context`` (retrieval): relevant passages were retrieved but fewer than half of the
  passages are relevant (precision below :data:`NOISY_BELOW`);
- ``hallucination`` (generation): the answer is unfaithful to its passages (``faithfulness`` or
  ``groundedness`` below the policy's filter threshold, 1.0 without a policy), or it answered a
  turn labelled UNANSWERABLE / UNDERSPECIFIED instead of declining or asking back
  (``refusal`` 0);
- ``unanswered`` (generation): an answerable turn was refused (``refusal`` 1) or not answered
  at all (``answer_relevance`` rubric 1).

Metrics compared by name, any version: ``context_precision`` (or ``llm_context_precision``),
``context_recall`` (or ``llm_context_recall``), ``faithfulness``, ``groundedness``, ``refusal``,
``answer_relevance``, ``answer_correctness``.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Final

import orjson
from pydantic import BaseModel, ConfigDict, JsonValue

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.errors import StoreError
from agent_eval.ingest._rag_labels import DECLINE_EXPECTED, NO_RETRIEVAL_NEEDED, answerability
from agent_eval.metrics._passages import LabelError, turn_passages
from agent_eval.metrics._units import answer_units

__all__ = [
    "CLAIM_SUPPORT",
    "FAILURE_CLASSES",
    "NOISY_BELOW",
    "STAGE_METRICS",
    "TURNS_NAME",
    "PassageRecord",
    "TurnRecord",
    "TurnRow",
    "failure_counts",
    "measured_stages",
    "read_turns",
    "turn_records",
    "turn_rows",
    "write_turns",
]

TURNS_NAME: Final = "turns.jsonl"
NOISY_BELOW: Final = 0.5
"""Precision below which a turn with some relevant passages has a noisy context."""
FAILURE_CLASSES: Final = {
    "retrieval_miss": "retrieval",
    "noisy_context": "retrieval",
    "hallucination": "generation",
    "unanswered": "generation",
}
"""Each failure class and the stage it points at."""
CLAIM_SUPPORT: Final = ("faithfulness", "groundedness")
"""The claim-level metrics whose score is the share of the answer its passages support."""
STAGE_METRICS: Final = {
    "retrieval": (
        "context_precision",
        "llm_context_precision",
        "context_recall",
        "llm_context_recall",
    ),
    "generation": (*CLAIM_SUPPORT, "refusal", "answer_relevance"),
}
"""The metrics whose results classify each stage's failures (:func:`measured_stages`)."""


class PassageRecord(BaseModel):
    """One distinct passage of a turn (``relevant``: the human label, ``None`` unlabelled)."""

    model_config = ConfigDict(frozen=True)

    rank: int
    id: str | None = None
    text: str
    relevant: bool | None = None


class TurnRecord(BaseModel):
    """One turn as the reviewers saw it (a line of ``turns.jsonl``)."""

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    unit_id: str
    span_id: str | None = None
    question: str
    answer: str
    reference: str | None = None
    passages: tuple[PassageRecord, ...] = ()
    retrievals: int | None = None
    """The turn's retriever calls, one that returned nothing included (``None``: a run written
    before they were counted)."""
    duplicates: int = 0
    labels: dict[str, JsonValue] = {}
    label_error: str | None = None

    @property
    def subject(self) -> str:
        """``conversation_id/unit_id``, as result rows name it."""
        return f"{self.conversation_id}/{self.unit_id}"


def turn_records(traces: Iterable[AgentTrace]) -> list[TurnRecord]:
    """One record per user turn of every trace (labels problems kept as ``label_error``)."""
    records = []
    for trace in traces:
        for unit in answer_units(trace):
            try:
                found = turn_passages(unit)
                passages = tuple(
                    PassageRecord(rank=p.rank, id=p.id, text=p.text, relevant=p.relevant)
                    for p in found.passages
                )
                duplicates, error = found.duplicates, None
            except LabelError as exc:
                passages, duplicates, error = (), 0, str(exc)
            records.append(
                TurnRecord(
                    conversation_id=trace.conversation_id,
                    unit_id=unit.id,
                    span_id=unit.span_id,
                    question=unit.question,
                    answer=unit.answer,
                    reference=unit.reference,
                    passages=passages,
                    retrievals=unit.retrievals,
                    duplicates=duplicates,
                    labels=dict(unit.labels),
                    label_error=error,
                )
            )
    return records


def write_turns(
    directory: str | Path, traces: Iterable[AgentTrace], *, append: bool = False
) -> Path:
    """Write ``DIR/turns.jsonl`` for ``traces``; returns its path.

    With ``append`` the records are added to the file (``agent-eval serve``, once per
    revision); :func:`turn_rows` keeps the last record of each turn.
    """
    path = Path(directory) / TURNS_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab" if append else "wb") as handle:
        for trace in traces:  # one trace's records at a time (a streamed run holds no more)
            for record in turn_records((trace,)):
                handle.write(orjson.dumps(record.model_dump(mode="json")) + b"\n")
    return path


def read_turns(directory: str | Path) -> list[TurnRecord]:
    """The run's ``turns.jsonl`` (empty when the run scored no turns).

    Raises:
        StoreError: a line is not a turn record (names the file and line).

    """
    path = Path(directory) / TURNS_NAME
    if not path.is_file():
        return []
    records = []
    with path.open("rb") as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    records.append(TurnRecord.model_validate_json(line))
                except ValueError as exc:
                    raise StoreError(f"{path}:{number}: not a turn record: {exc}") from None
    return records


@dataclass
class TurnRow:
    """One turn with every metric's result and its failure classes.

    Attributes:
        turn: The turn as recorded (question, passages, answer, labels).
        results: The run's rows for this turn by metric name (``context_precision``...).
        failures: Failure classes (:data:`FAILURE_CLASSES`), in that order.

    """

    turn: TurnRecord
    results: dict[str, MetricResult] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def score(self, *names: str) -> float | None:
        """The score of the first of ``names`` with an ``ok`` row, else ``None``."""
        for name in names:
            row = self.results.get(name)
            if row is not None and row.status == "ok":
                return row.score
        return None

    def detail(self, name: str, key: str) -> Any:
        """``details[key]`` of metric ``name``'s ok row, else ``None``."""
        row = self.results.get(name)
        return row.details.get(key) if row is not None and row.status == "ok" else None

    def failing_statements(self) -> list[dict[str, Any]]:
        """The answer's statements that did not pass, per claim metric (:data:`CLAIM_SUPPORT`).

        Returns:
            One ``{"metric", "text", "label", "judge_label", "evidence", "evidence_verified",
            "rationale"}`` per failing atom of each ``ok`` row, in the row's order (the
            metrics in :data:`CLAIM_SUPPORT` order): ``label`` is the metric's (``"0"`` for
            faithfulness; ``UNSUPPORTED`` / ``CONTRADICTED`` / ``UNVERIFIED`` for
            groundedness), ``judge_label`` the judge's own when the metric recorded another (a
            SUPPORTED claim whose quote is not in the passages), ``evidence`` the quote and
            ``evidence_verified`` whether it was found in the passages (``None``: no quote).

        """
        found: list[dict[str, Any]] = []
        for name in CLAIM_SUPPORT:
            row = self.results.get(name)
            if row is None or row.status != "ok" or not row.atoms:
                continue
            found += [
                {"metric": name, **atom.model_dump(mode="json", exclude={"passed"})}
                for atom in row.atoms
                if not atom.passed
            ]
        return found


def metric_name(metric_id: str) -> str:
    """``faithfulness@1[per_statement=true]`` -> ``faithfulness``."""
    return metric_id.split("@", 1)[0]


def turn_rows(
    records: Sequence[TurnRecord],
    results: Iterable[MetricResult],
    *,
    faithfulness_threshold: float = 1.0,
) -> list[TurnRow]:
    """Join turns with their results (by ``conversation_id/unit_id``) and classify failures.

    Args:
        records: The run's turns (:func:`read_turns`).
        results: The run's result rows (any metrics; conversation rows are ignored).
        faithfulness_threshold: Faithfulness or groundedness (:data:`CLAIM_SUPPORT`) below this
            is a hallucination (the policy's filter threshold).

    """
    rows = {record.subject: TurnRow(turn=record) for record in records}
    for result in results:
        row = rows.get(result.subject)
        if row is not None:
            row.results[metric_name(result.metric)] = result
    for row in rows.values():
        row.failures = _failures(row, faithfulness_threshold)
    return list(rows.values())


def _failures(row: TurnRow, faithfulness_threshold: float) -> list[str]:
    tag = answerability(row.turn.labels)
    decline_expected = tag in DECLINE_EXPECTED
    found: list[str] = []
    precision = row.score("context_precision", "llm_context_precision")
    recall = row.score("context_recall", "llm_context_recall")
    needs_passages = not decline_expected and tag not in NO_RETRIEVAL_NEEDED
    returned_nothing = bool(row.turn.retrievals) and not row.turn.passages
    if needs_passages and (
        precision == 0.0 or (recall is not None and recall < 1.0) or returned_nothing
    ):
        found.append("retrieval_miss")
    elif precision is not None and 0.0 < precision < NOISY_BELOW:
        found.append("noisy_context")
    supported = [row.score(name) for name in CLAIM_SUPPORT]
    refused = row.results.get("refusal")
    refused_verdict = refused.verdict if refused is not None and refused.status == "ok" else None
    if any(s is not None and s < faithfulness_threshold for s in supported) or (
        decline_expected and refused_verdict == "0"
    ):
        found.append("hallucination")
    rubric = row.detail("answer_relevance", "rubric")
    if not decline_expected and (refused_verdict == "1" or rubric == 1):
        found.append("unanswered")
    return found


def failure_counts(rows: Iterable[TurnRow]) -> dict[str, Counter[str]]:
    """``{"retrieval": Counter(class: turns), "generation": ...}`` over ``rows``."""
    counts: dict[str, Counter[str]] = {"retrieval": Counter(), "generation": Counter()}
    for row in rows:
        for failure in row.failures:
            counts[FAILURE_CLASSES[failure]][failure] += 1
    return counts


def measured_stages(rows: Iterable[TurnRow]) -> set[str]:
    """The stages (``"retrieval"``, ``"generation"``) the run measured on some turn.

    A stage is measured when a turn has an ``ok`` result of one of its :data:`STAGE_METRICS`,
    or a failure of it (a retrieval that returned nothing needs no metric). A stage not
    measured has no failures because nothing looked, which is not "none".
    """
    found: set[str] = set()
    for row in rows:
        found.update(FAILURE_CLASSES[failure] for failure in row.failures)
        for stage, names in STAGE_METRICS.items():
            if any(r.status == "ok" for n in names if (r := row.results.get(n)) is not None):
                found.add(stage)
    return found


def passages_shown(record: TurnRecord) -> list[Mapping[str, Any]]:
    """The passages with a mark: ``+`` relevant, ``-`` not, ``?`` unlabelled."""
    return [
        {
            "mark": "?" if p.relevant is None else "+" if p.relevant else "-",
            "id": p.id,
            "text": p.text,
        }
        for p in record.passages
    ]
