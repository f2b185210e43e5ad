"""IBM MTRAG full conversations: one JSON file per conversation, passages and labels per turn.

The layout is MTRAG's ``conversations.json`` entry (github.com/IBM/mt-rag-benchmark, also one
file per conversation in forks): ``{author, reviewer, domain, retriever, generator, status,
messages: [...]}`` with ``messages`` alternating user and agent. Mapped as:

- user ``text`` -> the turn's question; ``enrichments.Answerability`` -> the turn's
  ``answerability`` label (``Question Type`` and ``Multi-Turn`` -> ``question_type`` and
  ``multi_turn``);
- agent ``contexts`` -> a :class:`~agent_eval._trace.Retrieval` right after the question (the
  passages retrieved for this turn, in rank order: ``document_id``, ``text``, ``score``;
  ``title``, ``url`` and the annotators' ``judgements`` in the document metadata);
- each passage's **last** relevance judgement (``feedback.relevant``, latest timestamp; what
  MTRAG's qrels use) -> the turn's ``relevance`` label ``{document_id: 1|0}``;
- agent ``original_text`` (the generator's answer before human repair) -> the turn's answer,
  and agent ``text`` (the human-repaired answer) -> the turn's ``reference``; a turn without
  ``original_text`` was not repaired, so its ``text`` is both (noted in ``answer_source``);
- conversation id ``mtrag/<file stem>`` (the files carry no id); ``domain``, ``author``,
  ``reviewer``, ``status`` and the generator model -> ``metadata``.

No gold passage set is recorded beyond what was retrieved, so ``relevant_passages`` is not set:
judge-free recall needs one (the qrels of a retrieval task, via ``--turn-labels``).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import JsonValue

from agent_eval._trace import AgentTrace, RetrievedDocument
from agent_eval.ingest._rag_labels import ANSWERABILITY, REFERENCE, RELEVANCE
from agent_eval.ingest._sources import input_stem
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._mtrag import MtragTurn, first_label, mtrag_trace
from agent_eval.ingest.containers._records import load_json
from agent_eval.ingest.conventions._messages import to_json_value

__all__ = ["MtragContainer"]

_SETTINGS_OBJECT = re.compile(rb'"(retriever|generator)"\s*:\s*\{')
_START = re.compile(rb'\A\s*\{\s*"(author|retriever|generator|messages|domain|status)"')


class MtragContainer(builtin.Mtrag):
    """MTRAG conversations with per-turn passages, relevance and answerability labels."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An object with ``messages`` and MTRAG's ``retriever``/``generator`` objects.

        Both are objects in MTRAG (``{"collection": ...}``, ``{"id": ..., "prompt": ...}``):
        a file whose ``generator`` is a string (``fixtures/expected.json``, a tool's own
        provenance record) is not taken for a conversation.
        """
        return (
            _START.match(head) is not None
            and b'"messages"' in head
            and _SETTINGS_OBJECT.search(head) is not None
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the conversation, or a Skipped note when it does not have MTRAG's shape.

        Raises:
            DecodeError: the file is not valid JSON.

        """
        record = load_json(path, "; an MTRAG conversation is one JSON object per file")
        try:
            yield _trace(record, path)
        except ValueError as exc:
            yield Skipped(
                reason="invalid_mtrag_conversation",
                detail=f"{exc}; expected {{messages: [{{speaker, text, ...}}], ...}}",
                source=SourceLocation(path, 1),
                spans=0,
            )


def _trace(record: Any, path: str) -> AgentTrace:
    if not isinstance(record, Mapping) or not isinstance(record.get("messages"), list):
        raise ValueError("the record has no messages list")
    turns: list[MtragTurn] = []
    pending: MtragTurn | None = None
    for index, message in enumerate(record["messages"]):
        if not isinstance(message, Mapping) or not isinstance(message.get("text"), str):
            raise ValueError(f"messages[{index}] is not an object with a text")
        speaker = message.get("speaker")
        if speaker == "user":
            if pending is not None:
                turns.append(pending)
            pending = MtragTurn(question=message["text"], answer=None, labels=_user_labels(message))
        elif speaker == "agent":
            if pending is None:
                raise ValueError(f"messages[{index}] is an agent turn before any user turn")
            _agent(pending, message, index)
            turns.append(pending)
            pending = None
        else:
            raise ValueError(f"messages[{index}] has speaker {speaker!r}, not user or agent")
    if pending is not None:
        turns.append(pending)
    generator = record.get("generator")
    metadata: dict[str, JsonValue] = {
        key: record[key]
        for key in ("domain", "author", "reviewer", "editor", "status")
        if isinstance(record.get(key), str)
    }
    if isinstance(generator, Mapping) and isinstance(generator.get("name"), str):
        metadata["generator"] = generator["name"]
    return mtrag_trace(
        conversation_id=f"mtrag/{input_stem(path)}",
        history=(),
        turns=turns,
        container="mtrag",
        path=path,
        metadata=metadata,
    )


def _user_labels(message: Mapping[str, Any]) -> dict[str, JsonValue]:
    enrichments = message.get("enrichments")
    enrichments = enrichments if isinstance(enrichments, Mapping) else {}
    labels: dict[str, JsonValue] = {}
    for key, name in (
        ("Answerability", ANSWERABILITY),
        ("Question Type", "question_type"),
        ("Multi-Turn", "multi_turn"),
    ):
        value = first_label(enrichments.get(key))
        if value is not None:
            labels[name] = value
    return labels


def _agent(turn: MtragTurn, message: Mapping[str, Any], index: int) -> None:
    original = message.get("original_text")
    repaired = message["text"]
    turn.answer = original if isinstance(original, str) else repaired
    turn.labels[REFERENCE] = repaired
    turn.labels["answer_source"] = "original_text" if isinstance(original, str) else "text"
    contexts = message.get("contexts") or []
    if not isinstance(contexts, list):
        raise ValueError(f"messages[{index}].contexts is not a list")
    passages: list[RetrievedDocument] = []
    relevance: dict[str, JsonValue] = {}
    for rank, context in enumerate(contexts):
        if not isinstance(context, Mapping) or not isinstance(context.get("document_id"), str):
            raise ValueError(f"messages[{index}].contexts[{rank}] has no document_id")
        judgements = _judgements(context)
        metadata: dict[str, JsonValue] = {
            k: context[k] for k in ("title", "url") if isinstance(context.get(k), str)
        }
        if judgements:
            metadata["judgements"] = to_json_value(judgements)
            relevance[context["document_id"]] = int(judgements[-1]["value"] == "yes")
        score = context.get("score")
        passages.append(
            RetrievedDocument(
                content=str(context.get("text") or ""),
                id=context["document_id"],
                score=float(score) if isinstance(score, int | float) else None,
                metadata=metadata,
            )
        )
    turn.passages = passages
    if relevance:
        turn.labels[RELEVANCE] = relevance


def _judgements(context: Mapping[str, Any]) -> list[dict[str, Any]]:
    """The relevance judgements of a passage, oldest first (the last one counts)."""
    feedback = context.get("feedback")
    relevant = feedback.get("relevant") if isinstance(feedback, Mapping) else None
    if not isinstance(relevant, Mapping):
        return []
    found = [
        {"annotator": annotator, "value": value.get("value"), "timestamp": value.get("timestamp")}
        for annotator, value in relevant.items()
        if isinstance(value, Mapping) and value.get("value") in ("yes", "no")
    ]
    # stable: equal or missing timestamps keep the file's order (author before reviewer)
    return sorted(found, key=_timestamp)


def _timestamp(judgement: Mapping[str, Any]) -> float:
    stamp = judgement["timestamp"]
    return float(stamp) if isinstance(stamp, int | float) else 0.0
