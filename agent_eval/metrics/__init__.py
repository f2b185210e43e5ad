"""Metrics: named, versioned procedures that turn one AgentTrace into one result.

:mod:`~agent_eval.metrics._base` holds the protocol (:class:`Metric`, :class:`MetricInput`,
:class:`MetricOutcome`, :class:`CallTally`) and the ``agent_eval.metrics`` registry;
:mod:`~agent_eval.metrics._goal_accuracy` is ``goal_accuracy@1``; prompt templates are data
files under ``prompts/``.
"""

from agent_eval.metrics._base import CallTally, Metric, MetricInput, MetricOutcome, metrics

__all__ = ["CallTally", "Metric", "MetricInput", "MetricOutcome", "metrics"]
