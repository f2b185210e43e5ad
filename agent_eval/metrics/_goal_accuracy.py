"""Goal accuracy (``goal_accuracy@1``): did the agent arrive at the outcome the user wanted.

Two judge calls per conversation, following the procedure of Ragas' ``AgentGoalAccuracy``
(``AgentGoalAccuracyWithoutReference`` / ``WithReference``, ragas 0.2-0.4):

1. from the formatted conversation, infer ``{user_goal, end_state}``
   (:class:`GoalAndOutcome`);
2. compare the desired outcome with the arrived outcome (the ``end_state``) and return
   ``{reason, verdict}`` (:class:`OutcomeComparison`), ``verdict`` being ``"0"`` or ``"1"``.

Without a reference the desired outcome is the inferred ``user_goal``; with one it is the
reference. The prompt wording is this project's own (folder ``prompts/goal_accuracy_v1``),
following Ragas' published instructions and its one worked example per stage.
"""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_eval._tokens import count_tokens, tokens_at_most
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, Metric, MetricInput, MetricOutcome, require_judge
from agent_eval.metrics._prompts import PromptSet

__all__ = ["GoalAccuracy", "GoalAccuracyV2", "GoalAndOutcome", "OutcomeComparison"]


class GoalAndOutcome(BaseModel):
    """Stage 1 output: what the user wanted and what stood at the end."""

    model_config = ConfigDict(strict=True)

    user_goal: str = Field(description="The outcome the user wanted, in one sentence.")
    end_state: str = Field(description="The outcome that stood at the end, in one sentence.")


class OutcomeComparison(BaseModel):
    """Stage 2 output: a reason and the binary verdict (strictly the string "0" or "1")."""

    model_config = ConfigDict(strict=True)

    reason: str = Field(description="One or two sentences: what matches and what differs.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the arrived outcome fulfils the desired outcome, else "0".'
    )


class GoalAccuracy(Metric):
    """``goal_accuracy@1``: one unit per conversation.

    Takes :class:`~agent_eval.metrics._base.Metric`'s arguments; with ``with_reference=True`` it
    compares against the sample's reference instead of the inferred goal, and samples without
    a reference are skipped (``missing_reference``).
    """

    name: ClassVar[str] = "goal_accuracy"
    version: ClassVar[int] = 1
    judge_calls: ClassVar[int] = 2
    prompts: ClassVar[PromptSet] = PromptSet("goal_accuracy_v1")

    @property
    def prompt_sha256(self) -> str:
        """sha256 of the ``goal_accuracy_v1`` templates."""
        return self.prompts.sha256

    @property
    def uses_reference(self) -> bool:
        """True for the reference variant (``with_reference=True``)."""
        return self.with_reference

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``missing_reference`` when the reference variant meets a sample without one."""
        if self.with_reference and not sample.reference:
            return "missing_reference"
        return None

    def infer_request(self, sample: MetricInput) -> JudgeRequest:
        """The stage-1 request for ``sample``."""
        return self._request(
            GoalAndOutcome,
            self.prompts.render("infer_goal_system"),
            self.prompts.render("infer_goal_user", conversation=sample.conversation),
        )

    def compare_request(self, desired: str, arrived: str) -> JudgeRequest:
        """The stage-2 request comparing ``desired`` with ``arrived``."""
        return self._request(
            OutcomeComparison,
            self.prompts.render("compare_outcome_system"),
            self.prompts.render(
                "compare_outcome_user", desired_outcome=desired, arrived_outcome=arrived
            ),
        )

    def _request(self, model: type[BaseModel], system: str, user: str) -> JudgeRequest:
        messages = ({"role": "system", "content": system}, {"role": "user", "content": user})
        return JudgeRequest(
            messages=messages,
            response_model=model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def prompt_tokens(self, sample: MetricInput) -> int:
        """o200k tokens of the stage-1 messages (the stage that carries the conversation).

        Counted as the templates' tokens (once) plus the conversation's, which may differ from
        counting the joined text by a token at the seam: an estimate, as documented.
        """
        return self._infer_overhead + count_tokens(sample.conversation)

    @cached_property
    def _infer_overhead(self) -> int:
        return _tokens(self.infer_request(MetricInput(conversation="")))

    def prompt_tokens_at_most(self, sample: MetricInput) -> int:
        """:meth:`prompt_tokens` bounded by UTF-8 bytes: the templates' plus the conversation's."""
        return self._infer_overhead_bytes + tokens_at_most(sample.conversation)

    @cached_property
    def _infer_overhead_bytes(self) -> int:
        request = self.infer_request(MetricInput(conversation=""))
        return sum(tokens_at_most(m["content"]) for m in request.messages)

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Stage-1 tokens plus stage 2 estimated with the reference (or nothing) filled in."""
        desired = sample.reference if self.with_reference and sample.reference else ""
        return self.prompt_tokens(sample) + _tokens(self.compare_request(desired, ""))

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Run both stages in order; the second only after the first validated."""
        judge = require_judge(self, judge)
        inferred: GoalAndOutcome = (await tally.ask(judge, self.infer_request(sample))).output
        tally.details.update(user_goal=inferred.user_goal, end_state=inferred.end_state)
        desired = sample.reference if self.with_reference and sample.reference else None
        request = self.compare_request(desired or inferred.user_goal, inferred.end_state)
        compared: OutcomeComparison = (await tally.ask(judge, request)).output
        return MetricOutcome(
            verdict=compared.verdict,
            reason=compared.reason,
            details=dict(tally.details),
        )


def _tokens(request: JudgeRequest) -> int:
    return sum(count_tokens(m["content"]) for m in request.messages)


class GoalAccuracyV2(GoalAccuracy):
    """``goal_accuracy@2``: the same procedure with prompts that frame the input as data.

    The ``goal_accuracy_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``goal_accuracy@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet] = PromptSet("goal_accuracy_v2")
