"""Answer correctness (``answer_correctness@1``): is the answer right, against the reference.

One call per turn; the reviewer sees the question, the reference and the answer (no passages:
correctness is not faithfulness). It returns:

- the **critical facts** of the reference (dates, amounts, deadlines, quantities, names that
  the answer must get right), each marked ``correct`` / ``wrong`` / ``missing`` in the answer
  (the atoms; a ``wrong`` one is a stated error, worse than an omission, and is reported on its
  own in ``details.wrong_critical_facts``);
- the verdict, typed ``Literal[0, 1, 2]``: 0 incorrect, 1 partially correct, 2 correct;
  normalised to ``verdict / 2``. A verdict of 2 with a wrong or missing critical fact is
  inconsistent and re-asked.

The score is the verdict (the facts explain it; they never replace it). A turn without a
reference is skipped with ``missing_reference``.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from agent_eval._result import Atom
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._rag_base import RagMetric, exact_int, k_of_n

__all__ = ["AnswerCorrectness", "AnswerCorrectnessV2", "CorrectnessVerdict", "CriticalFact"]


class CriticalFact(BaseModel):
    """One critical fact of the reference and how the answer states it."""

    model_config = ConfigDict(strict=True)

    fact: str = Field(description="The fact as the reference states it (a date, amount...).")
    status: Literal["correct", "wrong", "missing"] = Field(
        description="correct: the answer states it rightly; wrong: it states something "
        "different; missing: it does not say."
    )
    rationale: str = Field(description="One sentence: what the answer says about it.")


class CorrectnessVerdict(BaseModel):
    """The critical facts, a reason and the 0/1/2 verdict."""

    model_config = ConfigDict(strict=True)

    critical_facts: list[CriticalFact] = Field(
        description="Every date, amount, deadline, quantity or name in the reference that the "
        "answer must get right; empty when the reference has none."
    )
    reason: str = Field(description="One or two sentences: what matches and what differs.")
    verdict: Literal[0, 1, 2] = Field(
        description="0 incorrect; 1 partially correct; 2 correct. An integer."
    )

    _integer = field_validator("verdict", mode="before")(exact_int)

    @model_validator(mode="after")
    def _consistent(self) -> CorrectnessVerdict:
        if self.verdict == 2 and any(f.status != "correct" for f in self.critical_facts):
            raise ValueError(
                "verdict 2 (correct) needs every critical fact correct; a wrong or missing "
                "critical fact makes the answer at most partially correct (1)"
            )
        return self


class AnswerCorrectness(RagMetric):
    """``answer_correctness@1``: 0/1/2 against the reference, critical facts judged apart."""

    name: ClassVar[str] = "answer_correctness"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet | None] = PromptSet("answer_correctness_v1")

    @property
    def uses_reference(self) -> bool:
        """Always: correctness is judged against the reference."""
        return True

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_answer``, or ``missing_reference`` when the turn has no reference."""
        skipped = super().skip_reason(sample)
        if skipped is not None:
            return skipped
        return None if sample.reference and sample.reference.strip() else "missing_reference"

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """The question, the reference and the answer."""
        assert self.prompts is not None
        return self.request(
            CorrectnessVerdict,
            self.prompts.render("system"),
            self.prompts.render(
                "user",
                question=sample.unit.question,
                reference=sample.reference or "",
                answer=sample.unit.answer,
            ),
        )

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Score ``verdict / 2``; critical facts as atoms, wrong ones also in details."""
        verdict: CorrectnessVerdict = await self.ask_once(sample, judge, tally)
        facts = verdict.critical_facts
        atoms = tuple(
            Atom(text=f.fact, label=f.status, passed=f.status == "correct", rationale=f.rationale)
            for f in facts
        )
        correct = sum(a.passed for a in atoms)
        return MetricOutcome(
            verdict=str(verdict.verdict),
            reason=verdict.reason,
            score=verdict.verdict / 2,
            atoms=atoms,
            details={
                "critical_facts": k_of_n(correct, len(atoms)) + " correct",
                "wrong_critical_facts": [f.fact for f in facts if f.status == "wrong"],
                "missing_critical_facts": [f.fact for f in facts if f.status == "missing"],
            },
        )


class AnswerCorrectnessV2(AnswerCorrectness):
    """``answer_correctness@2``: the same procedure with prompts that frame the input as data.

    The ``answer_correctness_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``answer_correctness@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet | None] = PromptSet("answer_correctness_v2")
