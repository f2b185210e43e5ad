"""Units: what one result row scores, cut out of an :class:`~agent_eval._trace.AgentTrace`.

Two kinds exist:

- the **conversation** (:func:`conversation_unit`): the whole trace; its span is the last LLM
  span (the span that produced the last assistant message);
- the **answer** of each user turn (:func:`answer_units`): a turn starts at a user message and
  runs to the next one; its answer is the turn's last assistant message with text content and
  no tool calls. The answer's **context** is what the agent had for it inside the turn: the
  documents of the retrievals attached before the answer (``Retrieval.after_message``) and the
  tool results before it, in conversation order. Its id is ``turn:K`` (K = 1-based turn number),
  stable for the same trace.

Per-turn ground truth travels on ``AgentTrace.labels["turns"]``: a mapping from the turn number
(as a string, ``"1"``) to a dict of labels; its ``reference`` key (a string) is the turn's
reference answer, the rest stays on :attr:`Unit.labels`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

from pydantic import JsonValue

from agent_eval._result import CONVERSATION_UNIT
from agent_eval._trace import AgentTrace, AssistantMessage, ToolMessage, UserMessage

__all__ = [
    "Context",
    "Unit",
    "UnitKind",
    "answer_units",
    "conversation_unit",
    "last_llm_span",
    "turn_unit_id",
]

UnitKind = Literal["conversation", "answer"]
"""What a metric scores: the whole conversation, or each turn's answer."""


@dataclass(frozen=True, kw_only=True)
class Context:
    """One piece of context an answer had: a retrieved document or a tool result.

    Attributes:
        text: Its text, as the agent received it.
        source: ``retrieval`` or ``tool``.
        id: The document id or the tool call id, when recorded.
        rank: 0-based rank within its retrieval (``None`` for tool results).
        metadata: The document's metadata (relevance labels may live here), verbatim.

    """

    text: str
    source: Literal["retrieval", "tool"]
    id: str | None = None
    rank: int | None = None
    metadata: Mapping[str, JsonValue] = field(default_factory=dict)


@dataclass(frozen=True, kw_only=True)
class Unit:
    """One unit of a trace.

    Attributes:
        id: :data:`~agent_eval._result.CONVERSATION_UNIT` or ``turn:K``.
        span_id: The evaluated span (16 hex), when known.
        turn: The 1-based turn number (``None`` for the conversation).
        message_index: Index in ``AgentTrace.messages`` of the answer (``None`` for the
            conversation, or a turn without an answer).
        question: The turn's user message text (several joined by a blank line).
        answer: The answer text (``""`` when the turn has none).
        contexts: The answer's context, in conversation order.
        retrievals: The retriever calls of the turn before its answer, counting one that
            returned nothing (a :class:`~agent_eval._trace.Retrieval` with no documents): a
            turn with retrievals but no retrieved context had its retriever return nothing.
        reference: The turn's reference answer, when labelled.
        labels: The turn's other labels (from ``AgentTrace.labels["turns"]``).

    """

    id: str
    span_id: str | None = None
    turn: int | None = None
    message_index: int | None = None
    question: str = ""
    answer: str = ""
    contexts: tuple[Context, ...] = ()
    retrievals: int = 0
    reference: str | None = None
    labels: Mapping[str, JsonValue] = field(default_factory=dict)


def turn_unit_id(turn: int) -> str:
    """``turn:K`` for the 1-based turn ``turn``."""
    return f"turn:{turn}"


def last_llm_span(trace: AgentTrace) -> str | None:
    """The span that produced the last assistant message (the conversation's last LLM span).

    A message's first span id is the LLM span whose output it was; later ones only replayed it
    as history.
    """
    for message in reversed(trace.messages):
        if isinstance(message, AssistantMessage) and message.span_ids:
            return message.span_ids[0]
    return None


def conversation_unit(trace: AgentTrace) -> Unit:
    """The whole conversation as one unit."""
    return Unit(id=CONVERSATION_UNIT, span_id=last_llm_span(trace))


def answer_units(trace: AgentTrace) -> list[Unit]:
    """One unit per user turn, in order (a turn without an answer has ``answer == ""``).

    Messages before the first user message belong to no turn. A trace without user messages
    has no units.
    """
    starts = [i for i, m in enumerate(trace.messages) if isinstance(m, UserMessage)]
    turns = _turn_labels(trace)
    units = []
    for number, start in enumerate(starts, 1):
        end = starts[number] if number < len(starts) else len(trace.messages)
        units.append(_answer_unit(trace, number, start, end, turns.get(str(number), {})))
    return units


def _answer_unit(
    trace: AgentTrace, number: int, start: int, end: int, labels: Mapping[str, JsonValue]
) -> Unit:
    messages = trace.messages
    questions = []
    for message in messages[start:end]:
        if not isinstance(message, UserMessage):
            break
        questions.append(message.content)
    answer_at = next(
        (
            i
            for i in range(end - 1, start, -1)
            if isinstance(messages[i], AssistantMessage)
            and messages[i].content.strip()
            and not getattr(messages[i], "tool_calls", None)
        ),
        None,
    )
    stop = end if answer_at is None else answer_at
    answer = messages[answer_at] if answer_at is not None else None
    reference = labels.get("reference")
    return Unit(
        id=turn_unit_id(number),
        span_id=answer.span_ids[0] if answer is not None and answer.span_ids else None,
        turn=number,
        message_index=answer_at,
        question="\n\n".join(questions),
        answer=answer.content if answer is not None else "",
        contexts=_contexts(trace, start, stop),
        retrievals=sum(1 for r in trace.retrievals if start < r.after_message <= stop),
        reference=reference if isinstance(reference, str) else None,
        labels={k: v for k, v in labels.items() if k != "reference"},
    )


def _contexts(trace: AgentTrace, start: int, stop: int) -> tuple[Context, ...]:
    """Retrieved documents and tool results between message ``start`` and ``stop``, in order."""
    found: list[tuple[int, int, Context]] = []
    for retrieval in trace.retrievals:
        if start < retrieval.after_message <= stop:
            found.extend(
                (
                    retrieval.after_message,
                    0,
                    Context(
                        text=doc.content,
                        source="retrieval",
                        id=doc.id,
                        rank=rank,
                        metadata=doc.metadata,
                    ),
                )
                for rank, doc in enumerate(retrieval.documents)
            )
    for index in range(start, stop):
        message = trace.messages[index]
        if isinstance(message, ToolMessage):
            context = Context(text=message.content, source="tool", id=message.tool_call_id)
            found.append((index, 1, context))
    found.sort(key=lambda item: (item[0], item[1]))
    return tuple(context for _, _, context in found)


def _turn_labels(trace: AgentTrace) -> Mapping[str, Mapping[str, JsonValue]]:
    turns = trace.labels.get("turns")
    if not isinstance(turns, dict):
        return {}
    return {k: v for k, v in turns.items() if isinstance(v, dict)}
