"""RAG JSON Lines (``rag-jsonl``): questions, retrieved passages, answers, references, labels.

One JSON object per line, one conversation each. Single-turn form::

    {"id": "returns-1",
     "question": "Can I return it?",
     "contexts": [{"id": "policy", "text": "Returns are accepted within 14 calendar days."}],
     "answer": "You can return it within 14 days.",
     "reference": "Yes, within 14 calendar days of receipt, unused.",
     "labels": {"faithful": 1}}

Multi-turn form: the per-turn keys move into ``turns`` (each turn has its own passages)::

    {"id": "chat-7", "labels": {...}, "metadata": {...},
     "turns": [{"question": "...", "contexts": [...], "answer": "...", "reference": "...",
                "labels": {...}}, ...]}

Keys (``question`` is required per turn; the rest are optional):

- ``id`` (or ``conversation_id``): the conversation id; default ``<file stem>/<line>``
  (the stem of the name without ``.gz``: ``x/3`` for ``x.jsonl`` and ``x.jsonl.gz``);
- ``question``: the user message (a string);
- ``contexts``: the passages retrieved for the question, in rank order; each an object with
  ``text`` (required), ``id`` and ``score`` (optional) and any other keys (relevance labels such
  as ``"relevant": true``, ``title``, ``url``) kept verbatim as the passage's metadata; a plain
  string is a passage without id;
- ``answer``: the system's answer (absent or ``null``: the turn has none, skipped ``no_answer``);
- ``reference``: a reference answer;
- ``labels``: the turn's labels (single-turn form: the record's labels are the turn's), any JSON
  object: e.g. ``{"faithful": 1}``, an ordinal ``{"faithfulness": 3}``, or claim-level
  ``{"claims": [{"text": "...", "label": 1}]}`` (see ``agent-eval calibrate --kind claims``);
- ``metadata``: the conversation's metadata, verbatim.

A turn ``K`` (1-based) becomes unit ``turn:K``: its context is exactly its passages. A line
that is not valid JSON, or not of this shape, is skipped with a reason naming the line and the
field to fix; the other lines are still read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, JsonValue, ValidationError

from agent_eval._trace import AgentTrace
from agent_eval.ingest._sources import input_stem
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace
from agent_eval.ingest.containers._records import read_records

__all__ = ["RagJsonlContainer"]

_RECORD = re.compile(rb'\A\s*\{\s*"(id|conversation_id|question|contexts|answer|turns|reference)"')


class _Context(BaseModel):
    model_config = ConfigDict(extra="allow", strict=True)

    text: str
    id: str | int | None = None
    score: float | None = None


class _Turn(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    question: str
    contexts: list[_Context | str] = Field(default_factory=list)
    answer: str | None = None
    reference: str | None = None
    labels: dict[str, JsonValue] = Field(default_factory=dict)


class _Record(BaseModel):
    model_config = ConfigDict(extra="forbid", strict=True)

    id: str | int | None = None
    conversation_id: str | int | None = None
    question: str | None = None
    contexts: list[_Context | str] | None = None
    answer: str | None = None
    reference: str | None = None
    labels: dict[str, JsonValue] = Field(default_factory=dict)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    turns: list[_Turn] | None = None


class RagJsonlContainer(builtin.RagJsonl):
    """RAG records: question, contexts [{id, text}], answer, reference, labels; or ``turns``."""

    def sniff(self, path: str, head: bytes) -> bool:
        """An object opening with a RAG key, with ``question`` or ``turns`` in the first line."""
        first = head.split(b"\n", 1)[0]
        return _RECORD.match(first) is not None and (
            b'"turns"' in first or (b'"question"' in first and b'"messages"' not in first)
        )

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per line (or a Skipped note naming the line and the fix).

        Raises:
            DecodeError: the first line is not JSON (the file is not JSON Lines).

        """
        stem = input_stem(path)  # x for x.jsonl and x.jsonl.gz
        for item in read_records(path, list_keys=(), spans_per_record=0):
            if isinstance(item, Skipped):
                yield item
                continue
            line, record = item
            yield _trace(record, path, line or 1, stem)


def _trace(record: Any, path: str, line: int, stem: str) -> AgentTrace | Skipped:
    try:
        parsed = _Record.model_validate(record)
        turns = _turns(parsed)
        cid = parsed.id if parsed.id is not None else parsed.conversation_id
        return rag_trace(
            conversation_id=str(cid) if cid is not None else f"{stem}/{line}",
            turns=turns,
            container=RagJsonlContainer.name,
            path=path,
            labels=parsed.labels if parsed.turns is not None else None,
            metadata=parsed.metadata,
        )
    except ValidationError as exc:
        problems = "; ".join(
            f"{'.'.join(map(str, e['loc'])) or 'record'}: {e['msg']}" for e in exc.errors()[:4]
        )
        return _skipped(problems, path, line)
    except ValueError as exc:
        return _skipped(str(exc), path, line)


def _turns(record: _Record) -> list[RagTurn]:
    single = (record.question, record.contexts, record.answer, record.reference)
    if record.turns is not None:
        if any(value is not None for value in single):
            raise ValueError(
                "a record has either turns or question/contexts/answer/reference, not both"
            )
        return [
            _turn(t.question, t.contexts, t.answer, t.reference, t.labels) for t in record.turns
        ]
    if record.question is None:
        raise ValueError("the record has no question (and no turns)")
    return [
        _turn(
            record.question, record.contexts or [], record.answer, record.reference, record.labels
        )
    ]


def _turn(
    question: str,
    contexts: list[_Context | str],
    answer: str | None,
    reference: str | None,
    labels: dict[str, JsonValue],
) -> RagTurn:
    return RagTurn(
        question=question,
        passages=[_passage(c) for c in contexts],
        answer=answer,
        reference=reference,
        labels=labels,
    )


def _passage(context: _Context | str) -> Passage:
    if isinstance(context, str):
        return Passage(text=context)
    extra: dict[str, JsonValue] = dict(context.model_extra or {})
    return Passage(
        text=context.text,
        id=None if context.id is None else str(context.id),
        score=context.score,
        metadata=extra,
    )


def _skipped(reason: str, path: str, line: int) -> Skipped:
    return Skipped(
        reason="invalid_rag_record",
        detail=f"line {line}: {reason}; expected {{question, contexts: [{{id, text}}], answer, "
        "reference, labels}} or {turns: [...]} (see docs/rag-jsonl.md)",
        source=SourceLocation(path, line),
        spans=0,
    )
