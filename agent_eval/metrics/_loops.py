"""Loops (``loops@1``): identical tool calls repeated beyond a threshold.

Judge-free and reference-free. Two calls are identical when they have the same tool name and
equal arguments as JSON values (:func:`~agent_eval.metrics._arguments.calls_equal`: nested objects
key by key, arrays in order with duplicates, ``1`` equal to ``1.0``), wherever they occur in the
conversation. The first ``max_identical`` calls of each kind pass; every further one is an atom
labelled ``repeat`` that fails. The score is the share of calls that are not such repeats; the
repeated calls are listed in ``details["loops"]`` with how often and where (0-based call
positions). A conversation without tool calls is skipped (``no_tool_calls``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import Field, JsonValue

from agent_eval._result import Atom
from agent_eval._trace import ToolCall
from agent_eval.judges._base import Judge
from agent_eval.metrics._arguments import call_text, calls_equal
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, MetricParams
from agent_eval.metrics._tool_calls import JudgeFreeMetric, agent_calls
from agent_eval.metrics._tool_errors import NO_TOOL_CALLS

__all__ = ["Loops", "LoopsParams"]


class LoopsParams(MetricParams):
    """Identity parameters of ``loops@1``."""

    max_identical: int = Field(default=2, ge=1)
    """How many identical calls are allowed before the next one counts as a loop."""


class Loops(JudgeFreeMetric):
    """``loops@1[max_identical=N]``: share of calls that are not loops; see the module."""

    name: ClassVar[str] = "loops"
    version: ClassVar[int] = 1
    Params = LoopsParams
    skip_messages: ClassVar[dict[str, str]] = {"no_tool_calls": NO_TOOL_CALLS}

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_tool_calls`` when the agent made no tool call."""
        if sample.trace is None or not agent_calls(sample.trace):
            return "no_tool_calls"
        return None

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Count identical calls; the ones beyond ``max_identical`` fail."""
        assert sample.trace is not None
        limit: int = self.params.max_identical  # type: ignore[attr-defined]
        kinds: dict[str, list[tuple[ToolCall, list[int]]]] = {}  # by name: (call, positions)
        atoms: list[Atom] = []
        for call in agent_calls(sample.trace):
            same_name = kinds.setdefault(call.call.name, [])
            positions = next((p for c, p in same_name if calls_equal(c, call.call)), None)
            if positions is None:
                positions = []
                same_name.append((call.call, positions))
            positions.append(call.index)
            looping = len(positions) > limit
            atoms.append(
                Atom(
                    text=call_text(call.call),
                    label="repeat" if looping else "ok",
                    passed=not looping,
                    rationale=(
                        f"identical call number {len(positions)} (first: call {positions[0]})"
                        if looping
                        else None
                    ),
                )
            )
        repeated = sorted(
            (positions for same in kinds.values() for _, positions in same),
            key=lambda positions: positions[0],
        )
        loops: list[JsonValue] = [
            {"call": atoms[positions[0]].text, "count": len(positions), "calls": list(positions)}
            for positions in repeated
            if len(positions) > limit
        ]
        repeats = sum(not atom.passed for atom in atoms)
        return MetricOutcome(
            reason=(
                f"{repeats} of {len(atoms)} tool call(s) repeat an identical call more than "
                f"{limit} time(s)"
            ),
            atoms=tuple(atoms),
            details={"repeats": repeats, "calls": len(atoms), "loops": loops},
        )
