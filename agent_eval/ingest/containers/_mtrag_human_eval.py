"""IBM MTRAG human-evaluation subset (InspectorRAGet "analytics" JSON): rated responses per turn.

The layout is MTRAG's ``evaluations/reference_subset_with_human_evaluations.json``
(github.com/IBM/mt-rag-benchmark; Katsis et al., TACL 2025): ``{name, filters, models,
metrics, documents, tasks, evaluations}``. A task is one turn (``task_id`` =
``<conversation_id><::><turn>``); an evaluation is one model's response to it with human 1-4
ratings. Mapped as **one AgentTrace per (conversation, model)**, conversation id
``mtrag-human-eval/<conversation_id>/<model_id>``, its turns in ``Turn`` order:

- the task's current question (last ``input`` item) -> the turn's question; its ``contexts``
  (ids into ``documents``) -> a retrieval on that turn, in order;
- the model's ``model_response`` -> the turn's answer; ``targets[0].text`` -> ``reference``;
- ``annotations.context_relevance.system`` (indices of the relevant contexts) -> ``relevance``
  ``{document_id: 1|0}`` (a context not listed is 0);
- each human quality (``faithfulness``, ``completeness``, ``appropriateness``,
  ``naturalness``; 1 No .. 4 Yes) -> ``human_ratings`` as the median of the annotators (the
  lower median on ties, as the file's ``metrics[].aggregator`` and its PROVENANCE say), every
  annotator's value under ``human_ratings_all``; ``conditional_idk`` (the authors' automatic
  "I don't know" check, not human) -> ``conditional_idk``; ``Answerability``, ``Question Type``,
  ``Multi-Turn`` -> ``answerability``, ``question_type``, ``multi_turn``.

Every response was generated with the **reference** conversation as its history, while the
trace shows the same model's earlier answers before it (``metadata.history`` says so); metrics
that score one turn at a time (question, passages, answer) are unaffected.
A task or evaluation that does not have this shape is skipped with a reason naming it. Each
evaluation used, and each task or evaluation skipped, is one record of the ingest accounting
(``records: used + skipped = read``).
"""

from __future__ import annotations

import re
import statistics
from collections import defaultdict
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import JsonValue

from agent_eval._trace import RetrievedDocument
from agent_eval.ingest._rag_labels import ANSWERABILITY, HUMAN_RATINGS, REFERENCE, RELEVANCE
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, RecordsUsed, Skipped
from agent_eval.ingest.containers._mtrag import MtragTurn, first_label, mtrag_trace, split_task_id
from agent_eval.ingest.containers._records import load_json

__all__ = ["HUMAN_QUALITIES", "MtragHumanEvalContainer", "median_low"]

HUMAN_QUALITIES = ("faithfulness", "completeness", "appropriateness", "naturalness")
"""The human-rated qualities, each on MTRAG's 4-point scale (1 No, 2 Mostly No, 3 Mostly Yes,
4 Yes)."""

_START = re.compile(rb'\A\s*\{\s*"(name|filters|models|metrics|documents|tasks|evaluations)"')


class MtragHumanEvalContainer(builtin.MtragHumanEval):
    """MTRAG human evaluations: model responses per turn with human 1-4 ratings."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An InspectorRAGet object: ``models`` with ``model_id`` and ``metrics`` near the top."""
        return (
            _START.match(head) is not None
            and b'"models"' in head
            and b'"model_id"' in head
            and b'"metrics"' in head
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per (conversation, model), and a Skipped note per bad item.

        Raises:
            DecodeError: the file is not valid JSON.

        """
        record = load_json(path, "; expected an InspectorRAGet analytics object")
        if not isinstance(record, Mapping):
            yield _skip(path, "the file is not a JSON object")
            return
        documents = {
            d["document_id"]: d
            for d in record.get("documents") or []
            if isinstance(d, Mapping) and isinstance(d.get("document_id"), str)
        }
        tasks: dict[str, Mapping[str, Any]] = {}
        for index, task in enumerate(record.get("tasks") or []):
            if not isinstance(task, Mapping) or not isinstance(task.get("task_id"), str):
                yield _skip(path, f"tasks[{index}] has no task_id")
                continue
            tasks[task["task_id"]] = task
        by_trace: dict[tuple[str, str], list[tuple[int, MtragTurn]]] = defaultdict(list)
        for index, evaluation in enumerate(record.get("evaluations") or []):
            try:
                key, turn = _turn(evaluation, tasks, documents)
            except ValueError as exc:
                yield _skip(path, f"evaluations[{index}]: {exc}")
                continue
            by_trace[key[:2]].append((key[2], turn))
        yield RecordsUsed(sum(len(numbered) for numbered in by_trace.values()))
        for (conversation, model), numbered in by_trace.items():
            numbered.sort(key=lambda item: item[0])
            yield mtrag_trace(
                conversation_id=f"mtrag-human-eval/{conversation}/{model}",
                history=(),
                turns=[turn for _, turn in numbered],
                container="mtrag-human-eval",
                path=path,
                metadata={
                    "conversation_id": conversation,
                    "model_id": model,
                    "turns": [number for number, _ in numbered],
                    "history": "each response was generated after the reference conversation",
                },
            )


def _skip(path: str, detail: str) -> Skipped:
    return Skipped(
        reason="invalid_mtrag_human_eval", detail=detail, source=SourceLocation(path), spans=0
    )


def median_low(values: list[int]) -> int:
    """The median, the lower middle value on ties (``statistics.median_low``)."""
    return int(statistics.median_low(values))


def _turn(
    evaluation: Any,
    tasks: Mapping[str, Mapping[str, Any]],
    documents: Mapping[str, Mapping[str, Any]],
) -> tuple[tuple[str, str, int], MtragTurn]:
    if not isinstance(evaluation, Mapping):
        raise ValueError("not an object")
    task_id, model = evaluation.get("task_id"), evaluation.get("model_id")
    response = evaluation.get("model_response")
    if not isinstance(task_id, str) or not isinstance(model, str) or not isinstance(response, str):
        raise ValueError("needs task_id, model_id and model_response strings")
    task = tasks.get(task_id)
    if task is None:
        raise ValueError(f"task {task_id!r} is not in tasks")
    conversation, number = split_task_id(task_id)
    inputs = task.get("input")
    question = inputs[-1] if isinstance(inputs, list) and inputs else None
    if not isinstance(question, Mapping) or not isinstance(question.get("text"), str):
        raise ValueError(f"task {task_id!r} has no current question (input[-1].text)")
    passages, relevance = _passages(task, documents, task_id)
    labels: dict[str, JsonValue] = {}
    targets = task.get("targets")
    target = targets[0] if isinstance(targets, list) and targets else None
    if isinstance(target, Mapping) and isinstance(target.get("text"), str):
        labels[REFERENCE] = target["text"]
    for key, name in (
        ("Answerability", ANSWERABILITY),
        ("Question Type", "question_type"),
        ("Multi-Turn", "multi_turn"),
    ):
        value = first_label(task.get(key))
        if value is not None:
            labels[name] = value
    labels[RELEVANCE] = relevance
    labels.update(_ratings(evaluation.get("annotations")))
    return (conversation, model, number), MtragTurn(
        question=question["text"], answer=response, passages=passages, labels=labels
    )


def _passages(
    task: Mapping[str, Any], documents: Mapping[str, Mapping[str, Any]], task_id: str
) -> tuple[list[RetrievedDocument], dict[str, JsonValue]]:
    contexts = task.get("contexts") or []
    if not isinstance(contexts, list):
        raise ValueError(f"task {task_id!r}: contexts is not a list")
    passages = []
    for rank, context in enumerate(contexts):
        doc_id = context.get("document_id") if isinstance(context, Mapping) else None
        document = documents.get(doc_id) if isinstance(doc_id, str) else None
        if document is None:
            raise ValueError(f"task {task_id!r}: contexts[{rank}] names no known document")
        metadata: dict[str, JsonValue] = (
            {"title": document["title"]} if isinstance(document.get("title"), str) else {}
        )
        passages.append(
            RetrievedDocument(content=str(document.get("text") or ""), id=doc_id, metadata=metadata)
        )
    annotations = task.get("annotations")
    relevant = annotations.get("context_relevance") if isinstance(annotations, Mapping) else None
    indices = relevant.get("system") if isinstance(relevant, Mapping) else []
    if not isinstance(indices, list) or not all(isinstance(i, int) for i in indices):
        raise ValueError(f"task {task_id!r}: context_relevance.system is not a list of indices")
    outside = [i for i in indices if not 0 <= i < len(passages)]
    if outside:
        raise ValueError(
            f"task {task_id!r}: context_relevance names context index(es) {outside}, but the "
            f"task has {len(passages)} context(s)"
        )
    chosen = set(indices)
    relevance: dict[str, JsonValue] = {
        p.id or "": int(rank in chosen) for rank, p in enumerate(passages)
    }
    return passages, relevance


def _ratings(annotations: Any) -> dict[str, JsonValue]:
    if not isinstance(annotations, Mapping):
        return {}
    medians: dict[str, JsonValue] = {}
    every: dict[str, JsonValue] = {}
    for quality in HUMAN_QUALITIES:
        raters = annotations.get(quality)
        if not isinstance(raters, Mapping):
            continue
        values = [
            int(v["value"])
            for v in raters.values()
            if isinstance(v, Mapping) and str(v.get("value", "")).isdigit()
        ]
        if values:
            medians[quality] = median_low(values)
            every[quality] = list(values)
    labels: dict[str, JsonValue] = {}
    if medians:
        labels[HUMAN_RATINGS] = medians
        labels["human_ratings_all"] = every
    idk = annotations.get("conditional_idk")
    value = next(iter(idk.values()), None) if isinstance(idk, Mapping) else None
    if isinstance(value, Mapping) and isinstance(value.get("value"), int | float):
        labels["conditional_idk"] = value["value"]
    return labels
