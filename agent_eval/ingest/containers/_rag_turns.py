"""RAG turns to an :class:`~agent_eval._trace.AgentTrace`: the shape every RAG container builds.

A RAG conversation is a list of turns, each a question, the passages the system retrieved for
it, the answer it gave, and optionally a reference answer and labels. :func:`rag_trace` lays it
out as the conversation model reads it, so that :func:`agent_eval.metrics._units.answer_units`
gives one unit per turn with exactly these passages as its context:

- per turn: a user message (the question), a :class:`~agent_eval._trace.Retrieval` right after
  it (``after_message`` = index of the question + 1) holding the passages in the given order
  (each a :class:`~agent_eval._trace.RetrievedDocument` with its ``id``, ``text`` and any other
  keys of the passage, e.g. relevance labels, verbatim in ``metadata``), then an assistant
  message (the answer; none when the answer is absent);
- per-turn labels on ``AgentTrace.labels["turns"]["K"]`` (K 1-based), the reference under
  ``"reference"`` (what :class:`~agent_eval.metrics._units.Unit` reads), conversation-level
  labels on ``AgentTrace.labels`` beside them.

Used by the ``rag-jsonl``, ``expertqa``, ``begin`` and ``faithdial-audit`` containers, and
meant for other RAG containers (MTRAG) too.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field

from pydantic import JsonValue

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    Retrieval,
    RetrievedDocument,
    SourceInfo,
    UserMessage,
)

__all__ = ["Passage", "RagTurn", "rag_trace"]


@dataclass(frozen=True, kw_only=True)
class Passage:
    """One retrieved passage.

    Attributes:
        text: The passage text, as the system received it.
        id: Its id (document id, URL, chunk id), when known.
        score: The retriever's score, when known.
        metadata: Anything else about it (relevance labels, title, URL), verbatim.

    """

    text: str
    id: str | None = None
    score: float | None = None
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class RagTurn:
    """One question-answer turn of a RAG conversation.

    Attributes:
        question: The user's message.
        passages: What was retrieved for it (the answer's context), in rank order.
        answer: The system's answer; ``None`` when the record has none (the turn's unit is then
            skipped ``no_answer``).
        reference: A reference answer, when labelled.
        labels: The turn's labels (human judgements), JSON values.

    """

    question: str
    passages: Sequence[Passage] = ()
    answer: str | None = None
    reference: str | None = None
    labels: Mapping[str, JsonValue] = field(default_factory=dict)


def rag_trace(
    *,
    conversation_id: str,
    turns: Sequence[RagTurn],
    container: str,
    path: str,
    labels: Mapping[str, JsonValue] | None = None,
    metadata: Mapping[str, JsonValue] | None = None,
) -> AgentTrace:
    """The AgentTrace of a RAG conversation (see the module docstring for the layout).

    Args:
        conversation_id: The conversation's id.
        turns: Its turns, in order (at least one).
        container: The container name, recorded in ``AgentTrace.source``.
        path: The file it came from.
        labels: Conversation-level labels (``"turns"`` is reserved for the per-turn ones).
        metadata: Conversation metadata, verbatim.

    Raises:
        ValueError: no turns, or conversation labels that use the reserved ``"turns"`` key.

    """
    if not turns:
        raise ValueError("a RAG conversation needs at least one turn")
    if labels and "turns" in labels:
        raise ValueError('conversation labels may not use the key "turns" (it holds per-turn ones)')
    messages: list[Message] = []
    retrievals: list[Retrieval] = []
    turn_labels: dict[str, JsonValue] = {}
    for number, turn in enumerate(turns, 1):
        messages.append(UserMessage(content=turn.question))
        if turn.passages:
            documents = tuple(
                RetrievedDocument(content=p.text, id=p.id, score=p.score, metadata=dict(p.metadata))
                for p in turn.passages
            )
            retrievals.append(
                Retrieval(after_message=len(messages), query=turn.question, documents=documents)
            )
        if turn.answer is not None:
            messages.append(AssistantMessage(content=turn.answer))
        own: dict[str, JsonValue] = dict(turn.labels)
        if turn.reference is not None:
            own["reference"] = turn.reference
        if own:
            turn_labels[str(number)] = own
    all_labels: dict[str, JsonValue] = dict(labels or {})
    if turn_labels:
        all_labels["turns"] = turn_labels
    single = turns[0].reference if len(turns) == 1 else None
    return AgentTrace(
        conversation_id=conversation_id,
        messages=tuple(messages),
        retrievals=tuple(retrievals),
        source=SourceInfo(container=container, files=(path,)),
        reference=single,
        labels=all_labels,
        metadata=dict(metadata or {}),
    )
