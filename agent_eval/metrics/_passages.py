"""A turn's retrieved passages, deduplicated, with their human relevance labels.

Retrieval metrics measure the passages a turn actually received (after re-ranking): the
documents of the retrievals attached to the turn before its answer
(:attr:`Unit.contexts <agent_eval.metrics._units.Unit.contexts>` with source ``retrieval``), in
rank order. Tool results are not passages.

**Duplicates are counted once**: a passage whose id (or, without an id, whose exact text)
already appeared earlier in the turn is dropped, so retrieving the same chunk twice neither
raises precision nor counts as two hits; the first occurrence keeps its rank, and the number
dropped is reported (``duplicates``).

**Passage ids**: the document's id, else the first of :data:`METADATA_ID_KEYS` in its metadata
(``id``, ``document_id``, ``doc_id``): instrumentations that record no ``document.id``
(openinference-instrumentation-langchain 0.1.x records a LangChain ``Document``'s metadata but
not its ``id``) still give passages an id labels can name. ``source`` is deliberately not one:
many chunks share a source file.

**Labels** (:mod:`agent_eval.ingest._rag_labels`): the turn's ``relevance`` map ``{id: 1|0}`` first,
else a passage's metadata ``relevant``. A ``relevance`` id that is not among the turn's passages
is an error (:class:`LabelError`), never silently ignored. A passage left unlabelled while
others are labelled is counted as not relevant (the TREC convention for unjudged documents) and
reported (``unjudged``).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass

from pydantic import JsonValue

from agent_eval.errors import InputError
from agent_eval.ingest._rag_labels import (
    DOCUMENT_RELEVANT,
    RELEVANCE,
    RELEVANT_PASSAGES,
    parse_relevance,
)
from agent_eval.metrics._units import Context, Unit

__all__ = [
    "METADATA_ID_KEYS",
    "LabelError",
    "Passage",
    "TurnPassages",
    "average_precision",
    "passage_id",
    "passage_label",
    "turn_passages",
]

_PREVIEW = 120
METADATA_ID_KEYS = ("id", "document_id", "doc_id")
"""Metadata keys read, in order, as a passage's id when its document has none."""


def passage_id(context: Context) -> str | None:
    """The passage's id: the document id, else a :data:`METADATA_ID_KEYS` metadata value."""
    if context.id is not None:
        return context.id
    for key in METADATA_ID_KEYS:
        value = context.metadata.get(key)
        if isinstance(value, str | int) and not isinstance(value, bool):
            return str(value)
    return None


class LabelError(InputError):
    """The turn's labels do not fit its passages (an id it did not retrieve, a bad value)."""


@dataclass(frozen=True, slots=True)
class Passage:
    """One distinct retrieved passage.

    Attributes:
        rank: 0-based rank among the turn's distinct passages.
        id: The document id, when recorded.
        text: The passage text.
        relevant: The human label: ``True``/``False``, ``None`` when not labelled.

    """

    rank: int
    id: str | None
    text: str
    relevant: bool | None


@dataclass(frozen=True, slots=True)
class TurnPassages:
    """The distinct passages of one turn and what the labels say about them.

    Attributes:
        passages: Distinct passages, in rank order.
        duplicates: Passages dropped as repeats of an earlier one.
        gold: The ids of every passage the answer needed (``relevant_passages``), ``None``
            when the turn has no such label.

    """

    passages: tuple[Passage, ...]
    duplicates: int
    gold: tuple[str, ...] | None

    @property
    def labelled(self) -> bool:
        """Whether at least one passage carries a human relevance label."""
        return any(p.relevant is not None for p in self.passages)

    @property
    def unjudged(self) -> int:
        """Passages without a label."""
        return sum(p.relevant is None for p in self.passages)


def passage_label(passage: Passage) -> str:
    """A short text for a passage atom: ``#rank id: first words``."""
    text = " ".join(passage.text.split())
    preview = text if len(text) <= _PREVIEW else text[: _PREVIEW - 1] + "…"
    name = f" {passage.id}" if passage.id else ""
    return f"#{passage.rank + 1}{name}: {preview}"


_last: list[tuple[Unit, TurnPassages]] = []
"""The last unit's passages: a metric's ``skip_reason`` and ``evaluate`` ask for the same unit
one after the other (an identity check, so a different unit is never served from it)."""


def turn_passages(unit: Unit) -> TurnPassages:
    """The distinct retrieved passages of ``unit`` with their labels.

    Raises:
        LabelError: the turn's ``relevance`` is not a map of relevance values, names an id the
            turn did not retrieve, or its ``relevant_passages`` is not a list of ids.

    """
    if _last and _last[0][0] is unit:
        return _last[0][1]
    found = _turn_passages(unit)
    _last[:] = [(unit, found)]
    return found


def _turn_passages(unit: Unit) -> TurnPassages:
    relevance = _relevance(unit.labels.get(RELEVANCE))
    seen: set[str] = set()
    passages: list[Passage] = []
    duplicates = 0
    for context in unit.contexts:
        if context.source != "retrieval":
            continue
        pid = passage_id(context)
        key = f"id:{pid}" if pid is not None else f"text:{context.text}"
        if key in seen:
            duplicates += 1
            continue
        seen.add(key)
        passages.append(
            Passage(
                rank=len(passages),
                id=pid,
                text=context.text,
                relevant=_label(context, pid, relevance),
            )
        )
    if relevance:
        known = {p.id for p in passages if p.id is not None}
        unknown = sorted(set(relevance) - known)
        if unknown:
            raise LabelError(
                f"the relevance labels of {unit.id} name passage id(s) "
                f"{', '.join(map(repr, unknown))} that the turn did not retrieve (its passages: "
                f"{', '.join(map(repr, sorted(known))) or 'none'})"
            )
    return TurnPassages(tuple(passages), duplicates, _gold(unit.labels.get(RELEVANT_PASSAGES)))


def _relevance(raw: JsonValue) -> dict[str, bool]:
    if raw is None:
        return {}
    if not isinstance(raw, dict):
        raise LabelError(f"relevance must map passage ids to 1/0, got {raw!r:.80}")
    parsed = {}
    for key, value in raw.items():
        label = parse_relevance(value)
        if label is None:
            raise LabelError(f"relevance of passage {key!r} is {value!r}, not 1/0 or yes/no")
        parsed[key] = label
    return parsed


def _label(context: Context, pid: str | None, relevance: Mapping[str, bool]) -> bool | None:
    if pid is not None and pid in relevance:
        return relevance[pid]
    if DOCUMENT_RELEVANT in context.metadata:
        return parse_relevance(context.metadata[DOCUMENT_RELEVANT])
    return None


def _gold(raw: JsonValue) -> tuple[str, ...] | None:
    if raw is None:
        return None
    if not isinstance(raw, list) or not all(isinstance(g, str) for g in raw):
        raise LabelError(f"relevant_passages must be a list of passage ids, got {raw!r:.80}")
    return tuple(dict.fromkeys(g for g in raw if isinstance(g, str)))


def average_precision(relevant: Sequence[bool]) -> float:
    """Rank-aware average precision of a ranked list of relevance flags, in [0, 1].

    ``sum_k precision@k * rel_k / number of relevant`` over the retrieved list, the definition
    Ragas' context precision uses (0.0 when nothing retrieved is relevant).
    """
    hits = 0
    total = 0.0
    for k, flag in enumerate(relevant, 1):
        if flag:
            hits += 1
            total += hits / k
    return total / hits if hits else 0.0
