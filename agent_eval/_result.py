"""One scored (or skipped, or errored) unit: :class:`MetricResult`, and its :class:`Atom` s.

A result row exists for every (conversation, unit, metric, formatter, judge, repeat) that a run
was asked for, whatever happened: ``ok`` rows carry a score in [0, 1] (and, for metrics with a
typed verdict, the verdict); ``error`` rows the error type and message (and the raw judge reply
when the judge answered something invalid); ``skipped`` rows the reason in ``error_type`` (e.g.
``context_overflow``). The JSONL and SQLite stores hold exactly these fields.

A **unit** is what one row scores: the whole conversation (``unit_id == "conversation"``, goal
accuracy) or one assistant answer with the context it had (``unit_id == "turn:3"``: claim-level
and RAG metrics). Claim-level metrics keep every **atom** (statement, claim, matched tool call)
with its typed label; their score is computed from the atoms by :func:`score_from_atoms`, never
read from the model.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

from agent_eval.steering._flag import SteeringFlag

__all__ = [
    "CONVERSATION_UNIT",
    "Atom",
    "MetricResult",
    "ResultStatus",
    "Verdict",
    "score_from_atoms",
]

ResultStatus = Literal["ok", "error", "skipped"]
Verdict = Literal["0", "1"]
"""A binary verdict, exactly the string ``"0"`` or ``"1"``."""

CONVERSATION_UNIT = "conversation"
"""``unit_id`` of a row that scores the whole conversation."""


class Atom(BaseModel):
    """One judged piece of a unit: a statement, a claim, a tool call, a passage.

    Attributes:
        text: The atom itself (a standalone statement, a claim, ``name(arguments)``...).
        label: Its typed label as text: ``"0"``/``"1"``, ``SUPPORTED`` / ``CONTRADICTED`` /
            ``UNSUPPORTED``, ``match`` / ``missing``..., as the metric declares.
        passed: Whether it counts for the unit (supported, matched); the score is the share of
            atoms that passed.
        evidence: The quoted span of the context used as evidence, when the metric asks for one
            (``None`` when none was given).
        evidence_verified: Whether ``evidence`` was found in the context (after the metric's
            documented normalization); ``None`` when the atom needs no evidence.
        rationale: The judge's one-sentence reason, when given.
        judge_label: The label the judge gave, when the metric recorded another (a SUPPORTED
            claim whose quote is not in the context is ``UNVERIFIED``); ``None`` otherwise.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    text: str
    label: str
    passed: bool
    evidence: str | None = None
    evidence_verified: bool | None = None
    rationale: str | None = None
    judge_label: str | None = None


def score_from_atoms(atoms: Sequence[Atom]) -> float | None:
    """The share of ``atoms`` that passed, in [0, 1]; ``None`` for no atoms (never 0 or 1)."""
    if not atoms:
        return None
    return sum(atom.passed for atom in atoms) / len(atoms)


class MetricResult(BaseModel):
    """One result row.

    Attributes:
        run_id: The run that produced it.
        conversation_id: The AgentTrace's conversation id.
        unit_id: Which unit of the conversation: :data:`CONVERSATION_UNIT` or ``turn:K`` (the
            answer of the K-th user turn, 1-based).
        span_id: The evaluated span (16 hex): for a conversation its last LLM span, for a turn
            that answer's span; ``None`` when the input had no spans.
        trace_ids: The trace ids (32 hex) the conversation came from.
        metric: ``name@version[params]``, e.g. ``"goal_accuracy@1"``.
        formatter: ``name@version`` with canonical parameters, e.g. ``"transcript@1[x=1]"``;
            ``"none"`` for metrics that read no rendering.
        formatter_fingerprint: sha256 hex of the formatter's probe-set renderings (``""`` with
            no formatter).
        prompt_sha256: sha256 hex of the metric's prompt templates (``""`` with no prompts).
        judge_model: The judge model name as sent to the endpoint; ``"none"`` for judge-free
            metrics.
        repeat: 0 for a normal run; 0..K-1 for stability repeats.
        status: ``ok``, ``error`` or ``skipped``.
        verdict: The typed verdict as text (``"0"``/``"1"`` for binary metrics, ``"1"``..``"5"``
            for a 1-5 rubric...); only on ``ok`` rows, ``None`` for metrics scored from atoms.
        score: In [0, 1]; set exactly when ``status == "ok"``. For a binary verdict it is the
            verdict as 0.0/1.0.
        reason: The judge's reason for the verdict.
        user_goal / end_state: Stage-1 outputs of goal accuracy.
        reference: The reference used, when the metric ran with one.
        atoms: The unit's atoms, for metrics scored from atoms (``None`` for others).
        details: Further metric outputs by name (counts, precision/recall, notes), JSON values.
        input_tokens / output_tokens: Judge tokens over all calls for this row, retries included,
            as the endpoint reported them (0 for calls answered from the judge-call cache).
        usage_known: False when some judge call of this row got no usage report from the
            endpoint (local servers may send none): ``input_tokens``/``output_tokens`` then
            count only what was reported, and the ``estimated_*`` fields hold the estimate.
        estimated_input_tokens / estimated_output_tokens: Only when ``usage_known`` is False:
            the reported tokens plus, for each call without a report, the ``o200k_base`` count
            of its request's messages (prompt) and of its reply (completion), times its
            attempts. ``None`` when the usage is known.
        judge_calls: Judge calls this row asked for (one per question put to the judge,
            whether answered by the model or the judge-call cache; re-asks are ``attempts``).
        cached_calls: Of ``judge_calls``, those answered from the judge-call cache: they cost
            nothing in this run (0 tokens, 0 requests).
        latency_ms: Wall time of the judge calls for this row, milliseconds.
        attempts: Judge requests made for this row, retries included.
        error_type / error_message: Why the row is not ``ok``.
        raw_reply: The judge's last raw reply when its output was invalid.
        started_at: ISO-8601 UTC time the row's work started.
        revision: 0 for a conversation's first result in a run; n for its n-th re-score
            (``agent-eval serve`` re-scores a conversation whose spans kept arriving after it
            was scored, as a new row; the earlier rows stay).
        note: Why the row exists besides the plain run (e.g. what a re-score added).
        steering: What the judge-free steering detector found in the unit's messages
            (:mod:`agent_eval.steering`): content that forges turns, addresses the evaluator,
            asks for a verdict or hides instructions; on every row of the unit, whatever its
            status. Empty, and left out of the JSON form, when nothing was found.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    conversation_id: str
    unit_id: str = CONVERSATION_UNIT
    span_id: str | None = None
    trace_ids: tuple[str, ...] = ()
    metric: str
    formatter: str
    formatter_fingerprint: str
    prompt_sha256: str
    judge_model: str
    repeat: int = 0
    status: ResultStatus
    verdict: str | None = None
    score: float | None = None
    reason: str | None = None
    user_goal: str | None = None
    end_state: str | None = None
    reference: str | None = None
    atoms: tuple[Atom, ...] | None = None
    details: dict[str, JsonValue] = Field(default_factory=dict)
    input_tokens: int = 0
    output_tokens: int = 0
    usage_known: bool = True
    estimated_input_tokens: int | None = None
    estimated_output_tokens: int | None = None
    judge_calls: int = 0
    cached_calls: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    error_type: str | None = None
    error_message: str | None = None
    raw_reply: str | None = None
    started_at: str = Field(description="ISO-8601 UTC")
    revision: int = Field(default=0, ge=0)
    note: str | None = None
    steering: tuple[SteeringFlag, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_no_steering(self, handler: SerializerFunctionWrapHandler) -> Any:
        data = handler(self)
        if isinstance(data, dict) and not data.get("steering", True):
            del data["steering"]  # rows without flags read as they did before the field
        return data

    @property
    def is_cached(self) -> bool:
        """Whether every judge call of the row was answered from the judge-call cache."""
        return self.judge_calls > 0 and self.cached_calls == self.judge_calls

    @property
    def best_tokens(self) -> tuple[int, int]:
        """``(input, output)`` judge tokens: reported, or the estimate when usage is unknown."""
        if self.usage_known:
            return self.input_tokens, self.output_tokens
        return (
            max(self.input_tokens, self.estimated_input_tokens or 0),
            max(self.output_tokens, self.estimated_output_tokens or 0),
        )

    @property
    def subject(self) -> str:
        """What the row is about: the conversation id, or ``conversation_id/unit_id``."""
        if self.unit_id == CONVERSATION_UNIT:
            return self.conversation_id
        return f"{self.conversation_id}/{self.unit_id}"

    @model_validator(mode="after")
    def _verdict_matches_status(self) -> MetricResult:
        if self.status == "ok":
            if self.score is None or not 0.0 <= self.score <= 1.0:
                raise ValueError("an ok result needs a score in [0, 1]")
        elif self.verdict is not None or self.score is not None:
            raise ValueError(f"a {self.status} result carries no verdict or score")
        if self.status != "ok" and not self.error_type:
            raise ValueError(f"a {self.status} result needs error_type (the reason)")
        return self
