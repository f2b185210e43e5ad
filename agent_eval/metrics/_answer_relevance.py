"""Answer relevance (``answer_relevance@1``): does the answer answer what was asked.

A 1-5 rubric, the verdict typed ``Literal[1, 2, 3, 4, 5]`` (integers; anything else is
re-asked, then an ``invalid_judge_output`` row): 1 = does not answer the question; 3 = answers
it in part, or with much padding; 5 = answers exactly what was asked. Normalised to
``(x - 1) / 4`` in [0, 1]; the row's ``verdict`` is the rubric value as text (``"4"``).

The reviewer sees **the question and the answer only**: no passages (that is faithfulness'
question) and no reference (that is correctness'), so the three qualities stay independent.
A refusal is judged like any answer (it does not answer: 1), which is why relevance is never
read alone on unanswerable turns (see ``refusal@1``).
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator

from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._rag_base import RagMetric, exact_int

__all__ = ["AnswerRelevance", "AnswerRelevanceV2", "RelevanceVerdict", "normalise_rubric"]


def normalise_rubric(value: int) -> float:
    """A 1-5 rubric value as ``(value - 1) / 4`` in [0, 1]."""
    return (value - 1) / 4


class RelevanceVerdict(BaseModel):
    """The reviewer's reason and 1-5 verdict."""

    model_config = ConfigDict(strict=True)

    reason: str = Field(description="One or two sentences: what was asked, what was answered.")
    verdict: Literal[1, 2, 3, 4, 5] = Field(
        description="1 does not answer; 3 answers in part or with much padding; 5 answers "
        "exactly what was asked. An integer from 1 to 5."
    )

    _integer = field_validator("verdict", mode="before")(exact_int)


class AnswerRelevance(RagMetric):
    """``answer_relevance@1``: one call per turn on (question, answer)."""

    name: ClassVar[str] = "answer_relevance"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet | None] = PromptSet("answer_relevance_v1")

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """The question and the answer, nothing else."""
        return self.question_answer_request(RelevanceVerdict, sample)

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Score ``(verdict - 1) / 4``; the verdict kept as text."""
        verdict: RelevanceVerdict = await self.ask_once(sample, judge, tally)
        return MetricOutcome(
            verdict=str(verdict.verdict),
            reason=verdict.reason,
            score=normalise_rubric(verdict.verdict),
            details={"rubric": verdict.verdict},
        )


class AnswerRelevanceV2(AnswerRelevance):
    """``answer_relevance@2``: the same procedure with prompts that frame the input as data.

    The ``answer_relevance_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``answer_relevance@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet | None] = PromptSet("answer_relevance_v2")
