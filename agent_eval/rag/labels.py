"""Moved (layers point down): this path re-exports the module it moved to."""

from agent_eval.ingest.rag_labels import (
    ANSWERABILITY,
    ANSWERABILITY_VALUES,
    DECLINE_EXPECTED,
    DOCUMENT_RELEVANT,
    HUMAN_RATINGS,
    NO_RETRIEVAL_NEEDED,
    REFERENCE,
    RELEVANCE,
    RELEVANT_PASSAGES,
    TurnLabels,
    answerability,
    load_turn_labels,
    parse_relevance,
)
from agent_eval.run.turn_labels import attach_turn_labels

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
    "attach_turn_labels",
    "load_turn_labels",
    "parse_relevance",
]
