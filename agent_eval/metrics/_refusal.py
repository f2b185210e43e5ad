"""Refusal (``refusal@1``): did the answer decline or ask for clarification. For every turn.

A binary judgment, ``"1"`` when the answer declines (says it does not know, that the
information is not available) or asks the user a clarifying question instead of answering,
``"0"`` when it answers; with ``kind`` (``declined`` / ``asked_back`` / ``answered``), which must
agree with the verdict (else re-asked). The reviewer sees the question and the answer only.

The score is the verdict (1 = refused), so the run's mean is the **refusal rate**. Whether a
refusal was right depends on the turn: when the turn is labelled (``answerability``: MTRAG's
UNANSWERABLE expects a decline, UNDERSPECIFIED a question back; ANSWERABLE and PARTIAL an
answer), ``details.expected`` and ``details.appropriate`` say whether the behaviour fitted, so
answerable questions that were refused show up as well as fluent answers to unanswerable ones.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, JsonValue, model_validator

from agent_eval.ingest._rag_labels import answerability
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._rag_base import RagMetric

__all__ = ["Refusal", "RefusalV2", "RefusalVerdict", "expected_behaviour"]

_EXPECTED = {
    "UNANSWERABLE": "decline",
    "UNDERSPECIFIED": "ask_back",
    "ANSWERABLE": "answer",
    "PARTIAL": "answer",
}


def expected_behaviour(labels: dict[str, JsonValue] | None) -> str | None:
    """``decline``, ``ask_back`` or ``answer`` for a labelled turn, else ``None``."""
    tag = answerability(labels or {})
    return _EXPECTED.get(tag) if tag is not None else None


class RefusalVerdict(BaseModel):
    """Whether the answer declined or asked back, and which."""

    model_config = ConfigDict(strict=True)

    reason: str = Field(description="One sentence: what the answer does.")
    kind: Literal["declined", "asked_back", "answered"] = Field(
        description="declined: says it cannot answer / does not know; asked_back: asks the "
        "user a clarifying question instead of answering; answered: gives an answer."
    )
    verdict: Literal["0", "1"] = Field(
        description='"1" when the answer declined or asked back, "0" when it answered.'
    )

    @model_validator(mode="after")
    def _agree(self) -> RefusalVerdict:
        if (self.verdict == "1") != (self.kind != "answered"):
            raise ValueError(
                f'verdict "{self.verdict}" disagrees with kind {self.kind!r}: "1" goes with '
                'declined or asked_back, "0" with answered'
            )
        return self


class Refusal(RagMetric):
    """``refusal@1``: one binary call per turn on (question, answer)."""

    name: ClassVar[str] = "refusal"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet | None] = PromptSet("refusal_v1")

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """The question and the answer, nothing else."""
        return self.question_answer_request(RefusalVerdict, sample)

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """The verdict; ``expected`` and ``appropriate`` when the turn is labelled."""
        verdict: RefusalVerdict = await self.ask_once(sample, judge, tally)
        details: dict[str, JsonValue] = {"kind": verdict.kind}
        expected = expected_behaviour(dict(sample.unit.labels))
        if expected is not None:
            details["expected"] = expected
            details["appropriate"] = (verdict.verdict == "1") == (expected != "answer")
        return MetricOutcome(verdict=verdict.verdict, reason=verdict.reason, details=details)


class RefusalV2(Refusal):
    """``refusal@2``: the same procedure with prompts that frame the input as data.

    The ``refusal_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``refusal@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet | None] = PromptSet("refusal_v2")
