"""Per-turn RAG labels: their keys, and the turn-labels file that attaches them to traces.

Labels of turn K live on ``AgentTrace.labels["turns"]["K"]`` (K the 1-based turn number as a
string; see :mod:`agent_eval.metrics._units`). The RAG keys:

- :data:`REFERENCE` (``reference``): the turn's reference answer (a string);
- :data:`RELEVANCE` (``relevance``): human relevance judgements of the passages the turn
  retrieved, ``{passage_id: 1 | 0}`` (``true``/``false`` and ``"yes"``/``"no"`` accepted). Every
  id must be a passage of that turn;
- :data:`RELEVANT_PASSAGES` (``relevant_passages``): the ids of all passages the answer needed
  (a gold set, as in qrels), retrieved or not; recall is measured against it;
- :data:`ANSWERABILITY` (``answerability``): ``ANSWERABLE``, ``PARTIAL``, ``UNANSWERABLE``,
  ``UNDERSPECIFIED`` or ``CONVERSATIONAL`` (MTRAG's tags);
- :data:`HUMAN_RATINGS` (``human_ratings``): ordinal human ratings by quality
  (``{"faithfulness": 3, ...}``, MTRAG's 1-4 scale).

A passage's own metadata may instead carry :data:`DOCUMENT_RELEVANT` (``relevant``:
``true``/``false``, ``"yes"``/``"no"``); a turn's ``relevance`` map wins over it.

The **turn-labels file** (:func:`load_turn_labels`, ``score --turn-labels FILE``) is JSON
Lines, one object per turn: ``{"conversation_id": "c1", "turn": 2, "relevance": {"doc-3": 1},
"relevant_passages": ["doc-3", "doc-9"], "reference": "...", "answerability": "ANSWERABLE"}``
(``conversation_id`` and ``turn`` required, the rest optional); gzip'd (``.jsonl.gz``), it is
read decompressed. :func:`attach_turn_labels`
checks every row against the traces: an unknown conversation or turn, or a ``relevance`` id that
is not among that turn's passages, is an :class:`~agent_eval.errors.InputError` naming the
file and line.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Final

import orjson
from pydantic import JsonValue

from agent_eval.errors import InputError
from agent_eval.ingest._sources import opened_input

__all__ = [
    "ANSWERABILITY",
    "ANSWERABILITY_VALUES",
    "DECLINE_EXPECTED",
    "DOCUMENT_RELEVANT",
    "HUMAN_RATINGS",
    "NO_RETRIEVAL_NEEDED",
    "REFERENCE",
    "RELEVANCE",
    "RELEVANT_PASSAGES",
    "TurnLabels",
    "answerability",
    "load_turn_labels",
    "parse_relevance",
]

REFERENCE: Final = "reference"
RELEVANCE: Final = "relevance"
RELEVANT_PASSAGES: Final = "relevant_passages"
ANSWERABILITY: Final = "answerability"
HUMAN_RATINGS: Final = "human_ratings"
DOCUMENT_RELEVANT: Final = "relevant"

ANSWERABILITY_VALUES: Final = frozenset(
    {"ANSWERABLE", "PARTIAL", "UNANSWERABLE", "UNDERSPECIFIED", "CONVERSATIONAL"}
)
DECLINE_EXPECTED: Final = frozenset({"UNANSWERABLE", "UNDERSPECIFIED"})
"""Answerability tags whose right answer declines (UNANSWERABLE) or asks back (UNDERSPECIFIED)."""
NO_RETRIEVAL_NEEDED: Final = frozenset({"CONVERSATIONAL"})
"""Answerability tags of turns that need no passage at all (MTRAG's CONVERSATIONAL: "thanks",
small talk): retrieving nothing relevant for them is no retrieval miss."""

_YES = frozenset({"1", "yes", "true", "relevant"})
_NO = frozenset({"0", "no", "false", "not_relevant", "irrelevant"})


def parse_relevance(value: object) -> bool | None:
    """A relevance label as a bool: ``1``/``0``, ``true``/``false``, ``"yes"``/``"no"``.

    Graded labels (qrels) count as relevant when above 0. ``None`` for anything else.
    """
    if isinstance(value, bool):
        return value
    if isinstance(value, int | float):
        return value > 0
    if isinstance(value, str):
        text = value.strip().lower()
        if text in _YES:
            return True
        if text in _NO:
            return False
    return None


def answerability(labels: Mapping[str, JsonValue]) -> str | None:
    """The turn's answerability tag (upper case), or ``None`` when not labelled."""
    value = labels.get(ANSWERABILITY)
    return value.upper() if isinstance(value, str) and value else None


@dataclass(frozen=True)
class TurnLabels:
    """One row of a turn-labels file: the labels of ``conversation_id`` turn ``turn``."""

    conversation_id: str
    turn: int
    labels: dict[str, JsonValue]
    line: int


def load_turn_labels(path: str | Path) -> list[TurnLabels]:
    """Read a turn-labels JSON Lines file (see the module docs).

    Raises:
        InputError: the file is missing, a line is not JSON, lacks ``conversation_id`` or a
            positive integer ``turn``, or has a ``relevance`` that is not an object of
            relevance values (each names the file and line); or its gzip data is cut short or
            corrupt.

    """
    source = Path(path)
    if not source.is_file():
        raise InputError("turn-labels file not found", path=str(source))
    rows = []
    with opened_input(source) as handle:
        for number, raw in enumerate(handle, 1):
            if raw.strip():
                rows.append(_row(raw, str(source), number))
    return rows


def _row(raw: bytes, path: str, line: int) -> TurnLabels:
    try:
        value: Any = orjson.loads(raw)
    except orjson.JSONDecodeError as exc:
        raise InputError(f"not valid JSON: {exc}", path=path, line=line) from None
    if not isinstance(value, dict):
        raise InputError(f"expected an object, got {value!r:.60}", path=path, line=line)
    conversation_id, turn = value.pop("conversation_id", None), value.pop("turn", None)
    if not isinstance(conversation_id, str) or not conversation_id:
        raise InputError("missing conversation_id (a string)", path=path, line=line)
    if isinstance(turn, str) and turn.isdigit():
        turn = int(turn)
    if not isinstance(turn, int) or isinstance(turn, bool) or turn < 1:
        raise InputError(f"turn must be a 1-based integer, got {turn!r}", path=path, line=line)
    relevance = value.get(RELEVANCE)
    if relevance is not None and not _relevance_map(relevance):
        raise InputError(
            'relevance must map passage ids to 1/0 (or true/false, "yes"/"no"), got '
            f"{relevance!r:.80}",
            path=path,
            line=line,
        )
    gold = value.get(RELEVANT_PASSAGES)
    if gold is not None and not (isinstance(gold, list) and all(isinstance(g, str) for g in gold)):
        raise InputError(
            f"relevant_passages must be a list of passage ids, got {gold!r:.80}",
            path=path,
            line=line,
        )
    return TurnLabels(conversation_id, turn, value, line)


def _relevance_map(value: object) -> bool:
    return isinstance(value, dict) and all(parse_relevance(v) is not None for v in value.values())
