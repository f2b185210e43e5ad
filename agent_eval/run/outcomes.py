"""From a conversation to the fields of its result row: the sample, skips, and outcomes.

Pure functions the engine (and the dry-run plan) share: what a metric is given for a trace
(:func:`build_sample`), whether it must be skipped without calling the judge
(:func:`skip_fields`: ``missing_reference``, ``context_overflow``), and the result fields of an
``ok`` outcome or an ``error`` (:func:`ok`, :func:`judge_failure`, :func:`failure`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_eval.errors import JudgeError
from agent_eval.formatting.base import Formatter
from agent_eval.metrics.base import Metric, MetricInput, MetricOutcome
from agent_eval.trace import AgentTrace

__all__ = ["build_sample", "failure", "judge_failure", "ok", "skip_fields"]

_SKIP_MESSAGES = {
    "missing_reference": "no reference for this conversation: give one in the trace or in "
    "--references FILE, or score without --with-reference",
}


def ok(outcome: MetricOutcome) -> dict[str, Any]:
    """Fields of an ``ok`` row: verdict, score (the verdict as 0.0/1.0), reason, details."""
    return {
        "status": "ok",
        "verdict": outcome.verdict,
        "score": float(outcome.verdict),
        "reason": outcome.reason,
        **outcome.details,
    }


def judge_failure(exc: JudgeError) -> dict[str, Any]:
    """Fields of an ``error`` row for a failed judge call (type, message, raw reply)."""
    return {
        "status": "error",
        "error_type": exc.error_type,
        "error_message": str(exc),
        "raw_reply": exc.raw_reply,
    }


def failure(error_type: str, exc: Exception) -> dict[str, Any]:
    """Fields of an ``error`` row of type ``error_type`` for any other exception."""
    return {
        "status": "error",
        "error_type": error_type,
        "error_message": f"{type(exc).__name__}: {exc}",
    }


def build_sample(
    trace: AgentTrace, metric: Metric, formatter: Formatter[Any], references: Mapping[str, str]
) -> MetricInput:
    """What ``metric`` scores for ``trace``: the rendering, and the reference when it uses one.

    A reference from ``references`` (a file) wins over ``trace.reference``.
    """
    reference = None
    if metric.uses_reference:
        reference = references.get(trace.conversation_id, trace.reference)
    return MetricInput(conversation=formatter.render(trace), reference=reference)


def skip_fields(
    metric: Metric, sample: MetricInput, max_context_tokens: int | None
) -> dict[str, Any] | None:
    """Result fields of a ``skipped`` row when ``sample`` must not be sent, else ``None``."""
    reason = metric.skip_reason(sample)
    if reason is not None:
        message = _SKIP_MESSAGES.get(reason, reason)
        return {"status": "skipped", "error_type": reason, "error_message": message}
    if max_context_tokens is None:
        return None
    tokens = metric.prompt_tokens(sample)
    if tokens <= max_context_tokens:
        return None
    message = (
        f"prompt is {tokens} tokens (o200k estimate), over max_context_tokens "
        f"{max_context_tokens}; raise --max-context-tokens if the judge takes more"
    )
    return {"status": "skipped", "error_type": "context_overflow", "error_message": message}
