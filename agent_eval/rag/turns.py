"""Moved (layers point down): this path re-exports the module it moved to."""

from agent_eval.run.turns import (
    CLAIM_SUPPORT,
    FAILURE_CLASSES,
    NOISY_BELOW,
    STAGE_METRICS,
    TURNS_NAME,
    PassageRecord,
    TurnRecord,
    TurnRow,
    failure_counts,
    measured_stages,
    read_turns,
    turn_records,
    turn_rows,
    write_turns,
)

__all__ = [
    "CLAIM_SUPPORT",
    "FAILURE_CLASSES",
    "NOISY_BELOW",
    "STAGE_METRICS",
    "TURNS_NAME",
    "PassageRecord",
    "TurnRecord",
    "TurnRow",
    "failure_counts",
    "measured_stages",
    "read_turns",
    "turn_records",
    "turn_rows",
    "write_turns",
]
