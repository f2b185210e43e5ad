"""The units of a run whose content tried to steer the judge, one entry per unit.

Every result row of a unit carries the same steering flags
(:attr:`~agent_eval._result.MetricResult.steering`), whatever the metric; :func:`steered_units`
folds a run's rows to one :class:`SteeredUnit` per (conversation, unit), for ``agent-eval
errors``, ``agent-eval runs show`` and the HTML report.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from agent_eval._result import MetricResult
from agent_eval.steering import SteeringFlag

__all__ = ["SteeredUnit", "steered_units"]


@dataclass(frozen=True)
class SteeredUnit:
    """One unit with steering flags.

    Attributes:
        conversation_id: The conversation.
        unit_id: ``conversation`` or ``turn:K``.
        flags: Its flags, in the order the detector found them.

    """

    conversation_id: str
    unit_id: str
    flags: tuple[SteeringFlag, ...]

    @property
    def kinds(self) -> list[str]:
        """The distinct classes of its flags, in order of appearance."""
        return list(dict.fromkeys(flag.kind for flag in self.flags))

    def to_json(self) -> dict[str, Any]:
        """The unit as JSON: its ids and its flags (each flag's fields)."""
        return {
            "conversation_id": self.conversation_id,
            "unit_id": self.unit_id,
            "flags": [flag.model_dump(mode="json") for flag in self.flags],
        }


def steered_units(rows: Iterable[MetricResult]) -> list[SteeredUnit]:
    """One :class:`SteeredUnit` per (conversation, unit) of ``rows`` that has flags.

    In first-seen order; rows without flags are left out.
    """
    found: dict[tuple[str, str], SteeredUnit] = {}
    for row in rows:
        if row.steering:
            key = (row.conversation_id, row.unit_id)
            found.setdefault(key, SteeredUnit(row.conversation_id, row.unit_id, row.steering))
    return list(found.values())
