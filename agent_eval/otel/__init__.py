"""agent-eval in the OTel loop: results as GenAI evaluation events on the span they judged.

:class:`EvaluationEvents` emits a run's results as ``gen_ai.evaluation.result`` log records
(semantic conventions v1.38.0) through the OTel SDK, to :func:`otlp_exporter` (OTLP/HTTP) or
an :class:`OtlpJsonFileExporter` (an OTLP JSON file), and reports what it sent
(:class:`EventReport`); :func:`conversation_target` finds the span a conversation's result
is attached to (:class:`SpanTarget`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.otel._events import (
        EvaluationEvents,
        EventReport,
        OtlpJsonFileExporter,
        otlp_exporter,
    )
    from agent_eval.otel._targets import SpanTarget, conversation_target

__all__ = [
    "EvaluationEvents",
    "EventReport",
    "OtlpJsonFileExporter",
    "SpanTarget",
    "conversation_target",
    "otlp_exporter",
]

_HOME = {
    "EvaluationEvents": "agent_eval.otel._events",
    "EventReport": "agent_eval.otel._events",
    "OtlpJsonFileExporter": "agent_eval.otel._events",
    "otlp_exporter": "agent_eval.otel._events",
    "SpanTarget": "agent_eval.otel._targets",
    "conversation_target": "agent_eval.otel._targets",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
