"""The evaluated span of a result: where its ``gen_ai.evaluation.result`` event is parented.

The GenAI conventions ask for the evaluation event to be parented to the GenAI operation span
that was evaluated. For a conversation (goal accuracy) that is its **last LLM span**: the span
whose output was the conversation's last assistant message. An
:class:`~agent_eval.trace.AgentTrace` keeps, for each message, the ids of the spans it was read
from, first sighting first, so the producing span of an assistant message is the first of its
``span_ids``.

A conversation assembled from several traces records no span-to-trace map; its evaluated span
is taken to lie in its last trace (``trace_ids[-1]``), which holds for agents whose turns are
traces in time order. A conversation that never was spans (chat logs) has no target; its event
is emitted without a parent span.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from agent_eval.trace import AgentTrace, AssistantMessage

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
    """The last LLM span of ``trace`` (see the module docstring), or ``None`` without spans."""
    if not trace.trace_ids:
        return None
    for message in reversed(trace.messages):
        if isinstance(message, AssistantMessage) and message.span_ids:
            return SpanTarget(trace_id=trace.trace_ids[-1], span_id=message.span_ids[0])
    return None


def targets_by_conversation(traces: Iterable[AgentTrace]) -> dict[str, SpanTarget]:
    """``{conversation_id: target}`` for every conversation that has one."""
    found: dict[str, SpanTarget] = {}
    for trace in traces:
        target = conversation_target(trace)
        if target is not None:
            found[trace.conversation_id] = target
    return found
