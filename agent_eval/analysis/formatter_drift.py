"""Moved (layers point down): this path re-exports the module it moved to."""

from agent_eval.run.formatter_drift import (
    FingerprintDrift,
    formatter_drift,
)

__all__ = [
    "FingerprintDrift",
    "formatter_drift",
]
