"""Tool errors (``tool_errors@1``): the agent's tool calls whose results were errors.

Judge-free and reference-free. Each tool call is an atom: ``ok`` (passes) or ``error`` with
where the error was recorded (:func:`~agent_eval.metrics._tool_calls.error_of`: the result's
``is_error`` flag, set by tau2-bench's ``error``, an ``is_error`` key and tau-bench's
``"Error: ..."`` observations; OTel span status ``ERROR`` or an ``exception`` event on the tool
span that ran the call). The score is the share of calls without an error; the erroring calls
are listed in ``details["error_calls"]``. A conversation without tool calls is skipped
(``no_tool_calls``).
"""

from __future__ import annotations

from typing import ClassVar

from pydantic import JsonValue

from agent_eval._result import Atom
from agent_eval.judges._base import Judge
from agent_eval.metrics._arguments import call_text
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome
from agent_eval.metrics._tool_calls import JudgeFreeMetric, agent_calls, error_of

__all__ = ["NO_TOOL_CALLS", "ToolErrors"]

NO_TOOL_CALLS = "the conversation has no tool call"


class ToolErrors(JudgeFreeMetric):
    """``tool_errors@1``: share of tool calls that did not fail; see the module docstring."""

    name: ClassVar[str] = "tool_errors"
    version: ClassVar[int] = 1
    skip_messages: ClassVar[dict[str, str]] = {"no_tool_calls": NO_TOOL_CALLS}

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_tool_calls`` when the agent made no tool call."""
        if sample.trace is None or not agent_calls(sample.trace):
            return "no_tool_calls"
        return None

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """One atom per tool call: ``error`` (with its source) or ``ok``."""
        assert sample.trace is not None
        atoms: list[Atom] = []
        failed: list[JsonValue] = []
        for call in agent_calls(sample.trace):
            why = error_of(call, sample.trace.errors)
            atoms.append(
                Atom(
                    text=call_text(call.call),
                    label="ok" if why is None else "error",
                    passed=why is None,
                    rationale=why,
                )
            )
            if why is not None:
                failed.append(
                    {"call": call.index, "name": call.call.name, "id": call.call.id, "error": why}
                )
        return MetricOutcome(
            reason=f"{len(failed)} of {len(atoms)} tool call(s) returned an error",
            atoms=tuple(atoms),
            details={"errors": len(failed), "calls": len(atoms), "error_calls": failed},
        )
