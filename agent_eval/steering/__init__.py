"""Judge-free steering signal: content of a conversation that tries to steer its judge.

A conversation's content is written by the agent under test, its users and its tools: it can
forge the rendering's turns, address the evaluator, ask for a verdict or hide instructions
(issue 29, part 3). :func:`detect` finds those places without any judge call;
:func:`unit_flags` keeps the ones inside one result row's unit. Result rows carry them in
:attr:`~agent_eval.result.MetricResult.steering` and the ``steering@1`` metric scores them.
"""

from agent_eval.steering.detect import detect, detect_text, unit_flags
from agent_eval.steering.flag import STEERING_KINDS, SteeringFlag, SteeringKind

__all__ = ["STEERING_KINDS", "SteeringFlag", "SteeringKind", "detect", "detect_text", "unit_flags"]
