"""Stored units (``units.jsonl``): now in :mod:`agent_eval.run.artifacts`.

Kept so that imports of this module keep working; new code imports from there.
"""

from agent_eval.run.artifacts import (
    UNITS_NAME,
    read_units,
    write_units,
)

__all__ = [
    "UNITS_NAME",
    "read_units",
    "write_units",
]
