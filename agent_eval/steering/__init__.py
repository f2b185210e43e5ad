"""Judge-free steering signal: content of a conversation that tries to steer its judge.

A conversation's content is written by the agent under test, its users and its tools: it can
forge the rendering's turns, address the evaluator, ask for a verdict or hide instructions
(issue 29, part 3). :func:`detect` finds those places without any judge call;
:func:`unit_flags` keeps the ones inside one result row's unit. Result rows carry them in
:attr:`~agent_eval._result.MetricResult.steering` and the ``steering@1`` metric scores them.

The detector's modules (and their compiled patterns) are imported on first use: the result
row, imported by nearly every command, needs only :class:`SteeringFlag`.
"""

from __future__ import annotations

import importlib
from typing import TYPE_CHECKING, Any

from agent_eval.steering._flag import STEERING_KINDS, SteeringFlag, SteeringKind

if TYPE_CHECKING:
    from agent_eval.steering._detector import detect, detect_text, unit_flags

__all__ = ["STEERING_KINDS", "SteeringFlag", "SteeringKind", "detect", "detect_text", "unit_flags"]

_LAZY = {"detect", "detect_text", "unit_flags"}


def __getattr__(name: str) -> Any:
    if name in _LAZY:  # the detector's patterns are compiled on first use, not with the row
        return getattr(importlib.import_module("agent_eval.steering._detector"), name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
