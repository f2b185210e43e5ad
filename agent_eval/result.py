"""One scored (or skipped, or errored) conversation: :class:`MetricResult`.

A result row exists for every (conversation, metric, formatter, judge, repeat) that a run was
asked for, whatever happened: ``ok`` rows carry a verdict and score; ``error`` rows the error
type and message (and the raw judge reply when the judge answered something invalid);
``skipped`` rows the reason in ``error_type`` (e.g. ``context_overflow``). The JSONL and SQLite
stores hold exactly these fields.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator

__all__ = ["MetricResult", "ResultStatus", "Verdict"]

ResultStatus = Literal["ok", "error", "skipped"]
Verdict = Literal["0", "1"]


class MetricResult(BaseModel):
    """One result row.

    Attributes:
        run_id: The run that produced it.
        conversation_id: The AgentTrace's conversation id.
        trace_ids: The trace ids (32 hex) the conversation came from.
        metric: ``name@version``, e.g. ``"goal_accuracy@1"``.
        formatter: ``name@version`` with canonical parameters, e.g. ``"transcript@1[x=1]"``.
        formatter_fingerprint: sha256 hex of the formatter's probe-set renderings.
        prompt_sha256: sha256 hex of the metric's prompt templates.
        judge_model: The judge model name as sent to the endpoint.
        repeat: 0 for a normal run; 0..K-1 for stability repeats.
        status: ``ok``, ``error`` or ``skipped``.
        verdict: ``"0"`` or ``"1"``; set only when ``status == "ok"``.
        score: ``0.0`` or ``1.0``; set only when ``status == "ok"``.
        reason: The judge's reason for the verdict.
        user_goal / end_state: Stage-1 outputs of goal accuracy.
        reference: The reference goal used, when the metric ran with one.
        input_tokens / output_tokens: Judge tokens over all calls for this row, retries included.
        latency_ms: Wall time of the judge calls for this row, milliseconds.
        attempts: Judge requests made for this row, retries included.
        error_type / error_message: Why the row is not ``ok``.
        raw_reply: The judge's last raw reply when its output was invalid.
        started_at: ISO-8601 UTC time the row's work started.
        revision: 0 for a conversation's first result in a run; n for its n-th re-score
            (``agent-eval serve`` re-scores a conversation whose spans kept arriving after it
            was scored, as a new row; the earlier rows stay).
        note: Why the row exists besides the plain run (e.g. what a re-score added).

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    run_id: str
    conversation_id: str
    trace_ids: tuple[str, ...] = ()
    metric: str
    formatter: str
    formatter_fingerprint: str
    prompt_sha256: str
    judge_model: str
    repeat: int = 0
    status: ResultStatus
    verdict: Verdict | None = None
    score: float | None = None
    reason: str | None = None
    user_goal: str | None = None
    end_state: str | None = None
    reference: str | None = None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    error_type: str | None = None
    error_message: str | None = None
    raw_reply: str | None = None
    started_at: str = Field(description="ISO-8601 UTC")
    revision: int = Field(default=0, ge=0)
    note: str | None = None

    @model_validator(mode="after")
    def _verdict_matches_status(self) -> MetricResult:
        if self.status == "ok":
            if self.verdict is None or self.score != float(self.verdict):
                raise ValueError("an ok result needs verdict '0' or '1' and the matching score")
        elif self.verdict is not None or self.score is not None:
            raise ValueError(f"a {self.status} result carries no verdict or score")
        if self.status != "ok" and not self.error_type:
            raise ValueError(f"a {self.status} result needs error_type (the reason)")
        return self
