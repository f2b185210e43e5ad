"""Moved (layers point down): this path re-exports the module it moved to."""

from agent_eval.metrics.passages import (
    METADATA_ID_KEYS,
    LabelError,
    Passage,
    TurnPassages,
    average_precision,
    passage_id,
    passage_label,
    turn_passages,
)

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
