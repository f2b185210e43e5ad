"""From a conversation to the fields of its result rows: samples, skips, and outcomes.

Pure functions the engine (and the dry-run plan) share: what a metric is given for each unit of
a trace (:func:`build_samples`, rendering the trace once), whether a unit must be skipped without
calling the judge (:func:`skip_fields`: ``missing_reference``, ``no_answer``,
``final_reply_missing``,
``context_overflow``...), and the result fields of an ``ok`` outcome or an ``error`` (:func:`ok`,
:func:`judge_failure`, :func:`failure`).
"""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence
from typing import Any

from agent_eval._redaction import redact_text
from agent_eval._result import CONVERSATION_UNIT, MetricResult
from agent_eval._trace import AgentTrace, UserMessage
from agent_eval.errors import JudgeError
from agent_eval.formatting._base import Formatter
from agent_eval.metrics._base import Metric, MetricInput, MetricOutcome
from agent_eval.metrics._units import Unit

__all__ = [
    "INTERRUPTED_SKIP",
    "NO_FORMATTER",
    "budget_skip",
    "build_sample",
    "build_samples",
    "failure",
    "interrupted_skip",
    "judge_failure",
    "ok",
    "reference_key",
    "skip_fields",
]

NO_FORMATTER = "none"
"""``formatter`` (and ``judge_model``) of rows whose metric reads no rendering (uses no judge)."""

_SKIP_MESSAGES = {
    "missing_reference": "no reference for this unit: give one in the trace or in "
    "--references FILE, or score without --with-reference",
    "no_answer": "this turn has no assistant answer (or the conversation has no user turn)",
    "no_passages": "this turn retrieved no passages: there is no retrieval to measure",
    "no_relevance_labels": "no passage of this turn carries a human relevance label: give "
    "them (--turn-labels FILE, or the data's own), or use llm_context_precision",
    "no_gold_passages": "this turn has no gold passage set (relevant_passages): relevance "
    "judgements of the retrieved passages alone cannot measure recall; give one "
    "(--turn-labels FILE) or use llm_context_recall with a reference",
    "no_relevant_passages": "this turn's gold passage set is empty (nothing needed retrieving)",
    "final_reply_missing": "the conversation's last LLM call recorded output tokens but no "
    "output content, so the transcript stops before the model's final reply (see the "
    "conversation's notes for the span and the cause): judging it would judge a conversation "
    "known to be cut short",
}

_RESULT_FIELDS = frozenset(MetricResult.model_fields)


def ok(outcome: MetricOutcome) -> dict[str, Any]:
    """Fields of an ``ok`` row: score, verdict, reason, atoms, and the details.

    Details named like a result field (``user_goal``, ``end_state``) fill that field; the others
    go to ``details``.
    """
    named = {k: v for k, v in outcome.details.items() if k in _RESULT_FIELDS}
    rest = {k: v for k, v in outcome.details.items() if k not in _RESULT_FIELDS}
    fields: dict[str, Any] = {
        "status": "ok",
        "verdict": outcome.verdict,
        "score": outcome.score,
        "reason": outcome.reason,
        **named,
    }
    if outcome.atoms is not None:
        fields["atoms"] = outcome.atoms
    if rest:
        fields["details"] = rest
    return fields


def budget_skip(message: str) -> dict[str, Any]:
    """Fields of a row skipped because the run's budget would be crossed (reason ``budget``)."""
    return {
        "status": "skipped",
        "error_type": "budget",
        "error_message": f"{message}; not judged: raise the budget and continue the run",
    }


INTERRUPTED_SKIP = "interrupted"
"""``error_type`` of rows skipped because the run was interrupted (Ctrl-C, SIGTERM) while the
unit's judge calls were in flight: they carry what those calls had sent, and ``--resume``
scores the unit again (the row then counts among the replaced rows, its spend kept)."""


def interrupted_skip(requests: int, unanswered: int) -> dict[str, Any]:
    """Fields of a row whose judge calls were cut short by an interrupt (``interrupted``).

    ``requests`` were sent; of them ``unanswered`` had no reply read (tokens estimated).
    """
    unknown = (
        f", {unanswered} of them cut off before the reply was read (their tokens are unknown: "
        "estimated)"
        if unanswered
        else ""
    )
    return {
        "status": "skipped",
        "error_type": INTERRUPTED_SKIP,
        "error_message": f"the run was interrupted (Ctrl-C or SIGTERM) while this unit's judge "
        f"calls were in flight: {requests} request(s) sent{unknown}; --resume scores it again",
        "details": {INTERRUPTED_SKIP: {"requests": requests, "unanswered": unanswered}},
    }


def reference_key(conversation_id: str, unit_id: str) -> str:
    """The key of a unit in a references mapping: the conversation id, or ``id/unit``."""
    return conversation_id if unit_id == CONVERSATION_UNIT else f"{conversation_id}/{unit_id}"


def judge_failure(exc: JudgeError) -> dict[str, Any]:
    """Fields of an ``error`` row for a failed judge call (type, message, raw reply)."""
    return {
        "status": "error",
        "error_type": exc.error_type,
        "error_message": redact_text(str(exc)),
        "raw_reply": exc.raw_reply,
    }


def failure(error_type: str, exc: Exception) -> dict[str, Any]:
    """Fields of an ``error`` row of type ``error_type`` for any other exception.

    The traceback goes to the debug log (the row keeps type and message).
    """
    logging.getLogger(__name__).debug("%s", error_type, exc_info=exc)
    return {
        "status": "error",
        "error_type": error_type,
        "error_message": redact_text(f"{type(exc).__name__}: {exc}"),
    }


def build_sample(
    trace: AgentTrace, metric: Metric, formatter: Formatter[Any], references: Mapping[str, str]
) -> MetricInput:
    """The sample of ``trace``'s first unit (for conversation metrics: the only one)."""
    return build_samples(trace, metric, formatter, references)[0]


def build_samples(
    trace: AgentTrace,
    metric: Metric,
    formatter: Formatter[Any],
    references: Mapping[str, str],
    units: Sequence[Unit] | None = None,
    *,
    conversation: str | None = None,
) -> list[MetricInput]:
    """What ``metric`` scores for each unit of ``trace`` (at least one unit).

    The trace is rendered once, and only when the metric reads renderings. The reference (when
    the metric uses one) comes from ``references`` (a file, keyed by :func:`reference_key`)
    first, then from the unit (a turn's labelled reference) or the trace.

    Args:
        trace: The conversation.
        metric: The metric that will score the samples.
        formatter: The run's formatter (not called when the metric reads no rendering).
        references: References by :func:`reference_key` (from a file).
        units: The units to build, when the caller already has them (default: all of them).
        conversation: ``trace`` already rendered by ``formatter``, when the caller has it
            (:class:`~agent_eval.run._rendering.RenderCache`); rendered here when ``None``.

    Raises:
        Exception: whatever the formatter raises (the engine records ``formatter_error``).

    """
    if not metric.uses_formatter:
        conversation = ""
    elif conversation is None:
        conversation = formatter.render(trace)
    return [
        MetricInput(
            conversation=conversation,
            reference=_reference(trace, unit, metric, references),
            unit=unit,
            trace=trace,
        )
        for unit in (metric.units(trace) if units is None else units)
    ]


def _reference(
    trace: AgentTrace, unit: Unit, metric: Metric, references: Mapping[str, str]
) -> str | None:
    if not metric.uses_reference:
        return None
    found = references.get(reference_key(trace.conversation_id, unit.id))
    return found if found is not None else metric.unit_reference(unit, trace)


def _final_reply_missing(metric: Metric, sample: MetricInput) -> str | None:
    """``final_reply_missing`` for a judge metric's unit that the missing final reply belongs to.

    That is the conversation unit and the last turn of a trace whose
    :attr:`~agent_eval._trace.AgentTrace.final_reply_missing` is set; earlier turns are whole
    (a later call replayed them) and judge-free metrics read only the structure.
    """
    trace = sample.trace
    if not metric.requires_judge or trace is None or trace.final_reply_missing is None:
        return None
    turn = sample.unit.turn
    if turn is not None and turn < sum(isinstance(m, UserMessage) for m in trace.messages):
        return None
    return "final_reply_missing"


def skip_fields(
    metric: Metric, sample: MetricInput, max_context_tokens: int | None
) -> dict[str, Any] | None:
    """Result fields of a ``skipped`` row when ``sample`` must not be sent, else ``None``.

    The prompt is counted only when its byte bound
    (:meth:`~agent_eval.metrics._base.Metric.prompt_tokens_at_most`) does not already fit.
    """
    reason = _final_reply_missing(metric, sample) or metric.skip_reason(sample)
    if reason is not None:
        message = metric.skip_messages.get(reason) or _SKIP_MESSAGES.get(reason, reason)
        return {"status": "skipped", "error_type": reason, "error_message": message}
    if max_context_tokens is None or not metric.requires_judge:
        return None
    bound = metric.prompt_tokens_at_most(sample)
    if bound is not None and bound <= max_context_tokens:  # fits: no need to count exactly
        return None
    tokens = metric.prompt_tokens(sample)
    if tokens <= max_context_tokens:
        return None
    message = (
        f"prompt is {tokens} tokens (o200k estimate), over max_context_tokens "
        f"{max_context_tokens}; raise --max-context-tokens if the judge takes more"
    )
    return {"status": "skipped", "error_type": "context_overflow", "error_message": message}
