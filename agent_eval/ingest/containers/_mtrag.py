"""Shared pieces of the IBM MTRAG containers (private): turns -> an AgentTrace with labels.

MTRAG (github.com/IBM/mt-rag-benchmark) records multi-turn RAG conversations in three shapes
(full conversations, MTRAG-UN generation tasks, the human-evaluation subset). All three become
one :class:`~agent_eval._trace.AgentTrace` per conversation whose turns carry their own passages
(a :class:`~agent_eval._trace.Retrieval` right after the turn's user message) and their labels
on ``AgentTrace.labels["turns"]["K"]`` (K = 1-based turn number, as a string), in the keys of
:mod:`agent_eval.ingest._rag_labels` (``reference``, ``answerability``, ``relevance``...).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

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

__all__ = ["MtragTurn", "first_label", "mtrag_trace", "split_task_id"]

TASK_SEPARATOR = "<::>"
"""MTRAG's separator in task ids: ``<conversation_id><::><turn>``."""


@dataclass(kw_only=True)
class MtragTurn:
    """One turn: the user's question, the passages the answer had, the answer and labels."""

    question: str
    answer: str | None
    passages: Sequence[RetrievedDocument] = ()
    labels: dict[str, JsonValue] = field(default_factory=dict)
    query: str | None = None


def first_label(value: Any) -> str | None:
    """MTRAG's list-valued enrichments (``["ANSWERABLE"]``) as one string, else ``None``."""
    if isinstance(value, list):
        value = value[0] if value else None
    return value if isinstance(value, str) and value else None


def split_task_id(task_id: str) -> tuple[str, int]:
    """``"abc<::>3"`` -> ``("abc", 3)``.

    Raises:
        ValueError: not of the form ``<conversation_id><::><turn number>``.

    """
    conversation, sep, turn = task_id.rpartition(TASK_SEPARATOR)
    if not sep or not conversation or not turn.isdigit():
        raise ValueError(f"task_id {task_id!r} is not <conversation_id><::><turn>")
    return conversation, int(turn)


def mtrag_trace(
    *,
    conversation_id: str,
    history: Sequence[Message],
    turns: Sequence[MtragTurn],
    container: str,
    path: str,
    metadata: Mapping[str, JsonValue],
    first_turn: int = 1,
) -> AgentTrace:
    """The AgentTrace of ``history`` then ``turns``; labels of turn ``first_turn + i``.

    ``history`` is earlier conversation (unlabelled, no passages) that precedes the labelled
    turns; its user messages count as turns too, so ``first_turn`` is the number of the first
    labelled turn (1 + the user messages in ``history``).
    """
    messages: list[Message] = list(history)
    retrievals: list[Retrieval] = []
    labels: dict[str, JsonValue] = {}
    for number, turn in enumerate(turns, first_turn):
        messages.append(UserMessage(content=turn.question))
        if turn.passages:
            retrievals.append(
                Retrieval(
                    after_message=len(messages), query=turn.query, documents=tuple(turn.passages)
                )
            )
        if turn.answer is not None:
            messages.append(AssistantMessage(content=turn.answer))
        if turn.labels:
            labels[str(number)] = turn.labels
    return AgentTrace(
        conversation_id=conversation_id,
        messages=tuple(messages),
        retrievals=tuple(retrievals),
        source=SourceInfo(container=container, files=(path,)),
        labels={"turns": labels} if labels else {},
        metadata=dict(metadata),
    )
