"""IBM MTRAG-UN generation tasks: one JSON line per task (the last turn of a conversation).

The layout is MTRAG-UN's ``generation_tasks/reference.jsonl`` (github.com/IBM/mt-rag-benchmark,
Rosenthal et al., Findings of ACL 2026): ``{conversation_id, task_id, turn, Collection, input,
contexts, targets, answerability, "Question Type", "Multi-Turn"}``. Mapped as:

- ``input[]`` (user and agent turns) -> the conversation so far; its last user turn is the
  task's turn, numbered by its position (its labels go to that turn);
- ``contexts[]`` -> a retrieval on that turn (the passages given for it; none for
  UNANSWERABLE tasks);
- ``targets[0].text`` -> the turn's **answer**: the file holds no other response, and this one
  is a reviewed response (a refusal for UNANSWERABLE, a human clarifying question for
  UNDERSPECIFIED). It is not also set as the reference (scoring an answer against itself says
  nothing), so reference-based metrics skip these turns with ``missing_reference``;
- ``answerability``, ``Question Type``, ``Multi-Turn`` -> the turn's labels
  (``answerability``, ``question_type``, ``multi_turn``), with ``target_author_type``;
- conversation id ``mtrag-un/<task_id>``; ``Collection``, ``task_id`` -> metadata.

A line that does not have this shape, or is not valid JSON, is skipped with a reason naming its
line; the other lines are still read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from pydantic import JsonValue

from agent_eval._trace import AgentTrace, AssistantMessage, Message, RetrievedDocument, UserMessage
from agent_eval.ingest._rag_labels import ANSWERABILITY
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._json_stream import BadValue, JsonStream
from agent_eval.ingest.containers._mtrag import MtragTurn, first_label, mtrag_trace

__all__ = ["MtragUnContainer"]

_START = re.compile(rb'\A\s*\{\s*"(conversation_id|task_id)"')


class MtragUnContainer(builtin.MtragUn):
    """MTRAG-UN generation tasks (answerable, unanswerable, underspecified, partial)."""

    def sniff(self, path: str, head: bytes) -> bool:
        """JSON Lines opening with a task id of MTRAG's ``<id><::><turn>`` form and ``input``."""
        return (
            _START.match(head) is not None
            and b"<::>" in head
            and b'"input"' in head
            and b'"targets"' in head
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per task (or a Skipped note for a line of another shape).

        Raises:
            DecodeError: the file is not JSON Lines (names the line).

        """
        with open_input(path) as stream:
            for item in JsonStream(stream, path).records():
                if isinstance(item, BadValue):  # a bad JSON Lines line: the rest is read
                    yield item.skipped()
                    continue
                line, record = item
                try:
                    yield _trace(record, path)
                except ValueError as exc:
                    yield Skipped(
                        reason="invalid_mtrag_un_task",
                        detail=f"{exc}; expected {{task_id, input: [{{speaker, text}}], "
                        "contexts, targets: [{text}], answerability}",
                        source=SourceLocation(path, line),
                        spans=0,
                    )


def _trace(record: Any, path: str) -> AgentTrace:
    if not isinstance(record, Mapping) or not isinstance(record.get("task_id"), str):
        raise ValueError("the record has no task_id")
    history = _history(record.get("input"))
    if not history or not isinstance(history[-1], UserMessage):
        raise ValueError("input does not end with a user turn")
    question = history.pop()
    targets = record.get("targets")
    target = targets[0] if isinstance(targets, list) and targets else None
    if not isinstance(target, Mapping) or not isinstance(target.get("text"), str):
        raise ValueError("targets[0] has no text")
    labels: dict[str, JsonValue] = {}
    for key, name in (
        ("answerability", ANSWERABILITY),
        ("Question Type", "question_type"),
        ("Multi-Turn", "multi_turn"),
    ):
        value = first_label(record.get(key))
        if value is not None:
            labels[name] = value
    author = target.get("metadata")
    if isinstance(author, Mapping) and isinstance(author.get("author_type"), str):
        labels["target_author_type"] = author["author_type"]
    turn = MtragTurn(
        question=question.content,
        answer=target["text"],
        passages=_passages(record.get("contexts")),
        labels=labels,
    )
    metadata: dict[str, JsonValue] = {"task_id": record["task_id"]}
    for key in ("Collection", "dataset", "conversation_id"):
        if isinstance(record.get(key), str):
            metadata[key.lower()] = record[key]
    return mtrag_trace(
        conversation_id=f"mtrag-un/{record['task_id']}",
        history=history,
        turns=[turn],
        container="mtrag-un",
        path=path,
        metadata=metadata,
        first_turn=1 + sum(isinstance(m, UserMessage) for m in history),
    )


def _history(raw: Any) -> list[Message]:
    if not isinstance(raw, list):
        raise ValueError("input is not a list")
    messages: list[Message] = []
    for index, item in enumerate(raw):
        if not isinstance(item, Mapping) or not isinstance(item.get("text"), str):
            raise ValueError(f"input[{index}] is not an object with a text")
        speaker = item.get("speaker")
        if speaker == "user":
            messages.append(UserMessage(content=item["text"]))
        elif speaker == "agent":
            messages.append(AssistantMessage(content=item["text"]))
        else:
            raise ValueError(f"input[{index}] has speaker {speaker!r}, not user or agent")
    return messages


def _passages(raw: Any) -> list[RetrievedDocument]:
    if raw is None:
        return []
    if not isinstance(raw, list):
        raise ValueError("contexts is not a list")
    passages = []
    for rank, context in enumerate(raw):
        if not isinstance(context, Mapping) or not isinstance(context.get("document_id"), str):
            raise ValueError(f"contexts[{rank}] has no document_id")
        metadata: dict[str, JsonValue] = {
            k: context[k] for k in ("title", "url") if isinstance(context.get(k), str)
        }
        passages.append(
            RetrievedDocument(
                content=str(context.get("text") or ""), id=context["document_id"], metadata=metadata
            )
        )
    return passages
