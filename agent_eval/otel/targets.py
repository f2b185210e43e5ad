"""The evaluated span of a result: where its ``gen_ai.evaluation.result`` event is parented.

The GenAI conventions ask for the evaluation event to be parented to the GenAI operation span
that was evaluated. For a conversation (goal accuracy) that is its **last LLM span**: the span
that recorded the conversation's last assistant message (its ``span_ids``, as assembled).

A conversation assembled from several traces records no span-to-trace map; its evaluated span
is taken to lie in its last trace (``trace_ids[-1]``), which holds for agents whose turns are
traces in time order. A conversation that never was spans (chat logs) has no target; its event
is emitted without a parent span.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_eval.metrics.units import last_llm_span
from agent_eval.trace import AgentTrace

__all__ = ["SpanTarget", "conversation_target", "targets_by_conversation"]


@dataclass(frozen=True, slots=True)
class SpanTarget:
    """The span an evaluation event is parented to.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters.

    """

    trace_id: str
    span_id: str


def conversation_target(trace: AgentTrace) -> SpanTarget | None:
    """The last LLM span of ``trace`` (see the module docstring), or ``None`` without spans.

    The span is the one results carry as ``span_id``
    (:func:`agent_eval.metrics.units.last_llm_span`); this adds the trace it lies in.
    """
    span_id = last_llm_span(trace)
    if not trace.trace_ids or span_id is None:
        return None
    return SpanTarget(trace_id=trace.trace_ids[-1], span_id=span_id)


def targets_by_conversation(traces: Iterable[AgentTrace]) -> dict[str, SpanTarget]:
    """``{conversation_id: target}`` for every conversation that has one."""
    found: dict[str, SpanTarget] = {}
    for trace in traces:
        target = conversation_target(trace)
        if target is not None:
            found[trace.conversation_id] = target
    return found
