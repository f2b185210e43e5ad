"""Metrics: named, versioned procedures that turn one AgentTrace into one result.

The protocol: :class:`Metric` (judged: ``evaluate(sample, judge, tally)``) and
:class:`JudgeFreeMetric` (computed from the trace alone), their :class:`MetricInput`,
:class:`MetricOutcome`, :class:`MetricParams` and :class:`CallTally`; ``metrics`` is the
``agent_eval.metrics`` entry-point registry, :func:`build_metric` builds one from a
``name[@version][param=value,...]`` spec and :func:`metric_versions` lists the versions of a
name. The built-in metrics are reached by name (``build_metric("groundedness")``);
:class:`Groundedness` is here for building one with its own parameters. Prompt templates are
data files in the private ``_prompts`` package.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agent_eval.metrics._base import (
    CallTally,
    JudgeFreeMetric,
    Metric,
    MetricInput,
    MetricOutcome,
    MetricParams,
    metrics,
)

if TYPE_CHECKING:
    from agent_eval.metrics._groundedness import Groundedness
    from agent_eval.metrics._spec import build_metric, metric_versions

__all__ = [
    "CallTally",
    "Groundedness",
    "JudgeFreeMetric",
    "Metric",
    "MetricInput",
    "MetricOutcome",
    "MetricParams",
    "build_metric",
    "metric_versions",
    "metrics",
]

_LAZY = {
    "Groundedness": "agent_eval.metrics._groundedness",
    "build_metric": "agent_eval.metrics._spec",
    "metric_versions": "agent_eval.metrics._spec",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)
