"""The evaluated span of a result: where its ``gen_ai.evaluation.result`` event is parented.

The GenAI conventions ask for the evaluation event to be parented to the GenAI operation span
that was evaluated, or to carry ``gen_ai.response.id`` when no span id is known:

- a **conversation-level** result (goal accuracy) evaluates the agent's whole run: its event is
  parented to the conversation's agent-invocation span, else the root span, of its last trace
  (:attr:`AgentTrace.root_spans`). A conversation read without root spans (an AgentTrace
  written by an older agent-eval) falls back to its last LLM span;
- a **unit-level** result (one answer) is parented to the span of that answer (the result's
  own ``span_id``), in the conversation's last trace when the conversation spans several (no
  span-to-trace map is kept; this holds for agents whose turns are traces in time order).

``gen_ai.response.id`` is the provider's id of the evaluated completion: of the answer's own LLM
call, or for a conversation of its last LLM call (:attr:`AgentTrace.response_ids`). A
conversation that never was spans (chat logs) has no target; its event is emitted without a
parent span.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from agent_eval._trace import AgentTrace
from agent_eval.metrics._units import last_llm_span

__all__ = ["SpanTarget", "conversation_target", "targets_by_conversation"]


@dataclass(frozen=True, slots=True)
class SpanTarget:
    """The span a conversation's evaluation events are parented to.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters: the span a conversation-level result evaluated.
        response_id: The ``gen_ai.response.id`` of the conversation's last LLM call, if recorded.
        response_ids: ``{span id: gen_ai.response.id}`` of the conversation's LLM calls, for the
            results of single answers (each names its answer's span).

    """

    trace_id: str
    span_id: str
    response_id: str | None = None
    response_ids: Mapping[str, str] = field(default_factory=dict, compare=False)


def conversation_target(trace: AgentTrace) -> SpanTarget | None:
    """The span a conversation-level result of ``trace`` evaluated, or ``None`` without spans.

    That is the last trace's agent-invocation or root span (:attr:`AgentTrace.root_spans`),
    else the last LLM span (:func:`agent_eval.metrics._units.last_llm_span`, the ``span_id``
    conversation-level results carry).
    """
    last_llm = last_llm_span(trace)
    response_id = trace.response_ids.get(last_llm) if last_llm else None
    if trace.root_spans:
        root = trace.root_spans[-1]
        return SpanTarget(root.trace_id, root.span_id, response_id, trace.response_ids)
    if not trace.trace_ids or last_llm is None:
        return None
    return SpanTarget(trace.trace_ids[-1], last_llm, response_id, trace.response_ids)


def targets_by_conversation(traces: Iterable[AgentTrace]) -> dict[str, SpanTarget]:
    """``{conversation_id: target}`` for every conversation that has one."""
    found: dict[str, SpanTarget] = {}
    for trace in traces:
        target = conversation_target(trace)
        if target is not None:
            found[trace.conversation_id] = target
    return found
