"""Trajectory match (``trajectory_match@1``): the sequence of tool names against a reference.

Judge-free; arguments are not compared (``tool_call_accuracy@1`` does that). The ``order``
parameter follows Google ADK's ``tool_trajectory_avg_score`` match types (EXACT, IN_ORDER,
ANY_ORDER; Vertex AI's trajectory exact / in-order / any-order match):

- ``strict``: the agent called exactly the reference's tools, in its order, nothing else;
- ``in_order``: the reference's tools appear in the agent's calls in that order, with other
  calls allowed between and around them (a subsequence);
- ``any``: every reference call appears among the agent's calls, in any order, extras allowed
  (as a multiset: a tool the reference calls twice must be called at least twice).

The verdict is ``"1"`` on a match, else ``"0"`` with the **first point of divergence** in
``details["divergence"]``: ``{"step", "expected", "actual"}``, ``step`` being the 0-based
reference step (``strict``: the position where the sequences first differ; ``expected`` or
``actual`` is ``null`` when that sequence has ended). Each reference step is an atom (``match``
or ``missing``), and in ``strict`` order so is each agent call beyond the reference (``extra``).
A conversation without a reference is skipped (``missing_reference``).
"""

from __future__ import annotations

from collections import Counter
from typing import ClassVar, Literal

from pydantic import JsonValue

from agent_eval._result import Atom
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, MetricParams
from agent_eval.metrics._tool_call_accuracy import MISSING_REFERENCE, reference_text
from agent_eval.metrics._tool_calls import JudgeFreeMetric, agent_calls

__all__ = ["TrajectoryMatch", "TrajectoryMatchParams", "match_trajectory"]

TrajectoryOrder = Literal["strict", "in_order", "any"]


class TrajectoryMatchParams(MetricParams):
    """Identity parameters of ``trajectory_match@1``."""

    order: TrajectoryOrder = "strict"


def match_trajectory(
    reference: list[str], agent: list[str], order: TrajectoryOrder
) -> tuple[dict[int, int], dict[str, JsonValue] | None]:
    """``({reference step: agent call}, divergence)``; divergence ``None`` on a match."""
    if order == "strict":
        return _strict(reference, agent)
    if order == "in_order":
        return _in_order(reference, agent)
    return _any(reference, agent)


def _strict(
    reference: list[str], agent: list[str]
) -> tuple[dict[int, int], dict[str, JsonValue] | None]:
    pairs: dict[int, int] = {}
    for step in range(max(len(reference), len(agent))):
        expected = reference[step] if step < len(reference) else None
        actual = agent[step] if step < len(agent) else None
        if expected != actual:
            return pairs, {"step": step, "expected": expected, "actual": actual}
        pairs[step] = step
    return pairs, None


def _in_order(
    reference: list[str], agent: list[str]
) -> tuple[dict[int, int], dict[str, JsonValue] | None]:
    pairs: dict[int, int] = {}
    position = 0
    for step, name in enumerate(reference):
        while position < len(agent) and agent[position] != name:
            position += 1
        if position == len(agent):
            after = agent[pairs[step - 1] + 1 :] if step else agent
            return pairs, {"step": step, "expected": name, "actual": after[0] if after else None}
        pairs[step] = position
        position += 1
    return pairs, None


def _any(
    reference: list[str], agent: list[str]
) -> tuple[dict[int, int], dict[str, JsonValue] | None]:
    available: dict[str, list[int]] = {}
    for index, name in enumerate(agent):
        available.setdefault(name, []).append(index)
    pairs: dict[int, int] = {}
    divergence: dict[str, JsonValue] | None = None
    for step, name in enumerate(reference):
        free = available.get(name)
        if free:
            pairs[step] = free.pop(0)
        elif divergence is None:
            divergence = {"step": step, "expected": name, "actual": None}
    return pairs, divergence


class TrajectoryMatch(JudgeFreeMetric):
    """``trajectory_match@1[order=strict|in_order|any]``; see the module docstring."""

    name: ClassVar[str] = "trajectory_match"
    version: ClassVar[int] = 1
    Params = TrajectoryMatchParams
    skip_messages: ClassVar[dict[str, str]] = {"missing_reference": MISSING_REFERENCE}

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``missing_reference`` when the conversation has no reference calls."""
        if sample.trace is None or sample.trace.reference_tool_calls is None:
            return "missing_reference"
        return None

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Compare the tool names in order; see the module docstring."""
        assert sample.trace is not None and sample.trace.reference_tool_calls is not None
        order: TrajectoryOrder = self.params.order  # type: ignore[attr-defined]
        reference = [c.name for c in sample.trace.reference_tool_calls]
        agent = [c.call.name for c in agent_calls(sample.trace)]
        pairs, divergence = match_trajectory(reference, agent, order)
        atoms = [
            Atom(
                text=name,
                label="match" if step in pairs else "missing",
                passed=step in pairs,
                rationale=f"agent call {pairs[step] + 1}" if step in pairs else None,
            )
            for step, name in enumerate(reference)
        ]
        if order == "strict":
            atoms += [
                Atom(text=name, label="extra", passed=False, rationale=f"agent call {i + 1}")
                for i, name in enumerate(agent)
                if i >= len(reference)
            ]
        details: dict[str, JsonValue] = {
            "reference": reference_text(sample.trace.reference_tool_calls),
            "reference_tools": list(reference),
            "agent_tools": list(agent),
            "divergence": divergence,
        }
        if divergence is None:
            reason = f"the agent's {len(agent)} tool call(s) match the reference ({order})"
        else:
            reason = _diverged(divergence, Counter(agent), order)
        return MetricOutcome(
            verdict="0" if divergence else "1",
            reason=reason,
            score=0.0 if divergence else 1.0,
            atoms=tuple(atoms),
            details=details,
        )


def _diverged(divergence: dict[str, JsonValue], counts: Counter[str], order: str) -> str:
    step, expected, actual = divergence["step"], divergence["expected"], divergence["actual"]
    where = f"diverges at reference step {step} ({order})"
    if expected is None:
        return f"{where}: the reference has ended, the agent called {actual}"
    if order == "any":
        return (
            f"{where}: {expected} is missing (the agent called it {counts[str(expected)]} time(s))"
        )
    if actual is None:
        return f"{where}: expected {expected}, the agent made no further call"
    return f"{where}: expected {expected}, the agent called {actual}"
