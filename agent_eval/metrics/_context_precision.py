"""Context precision: how much of what a turn retrieved was relevant to its question.

Two metrics, both on the distinct passages the turn actually received
(:func:`agent_eval.metrics._passages.turn_passages`: after re-ranking, duplicates counted once):

- ``context_precision@1`` (**judge-free**): from human relevance labels (the turn's
  ``relevance`` map or the passages' ``relevant`` metadata). Runs with no judge and no key.
- ``llm_context_precision@1``: without labels, an LLM reviewer judges each passage relevant
  (``"1"``) or not (``"0"``) for the question, one typed verdict per passage in one call (the
  verdict list must have exactly one entry per passage, in order, else it is re-asked).

Both score the **share of passages that are relevant** (``relevant / passages``, each passage
an atom) and report beside it the rank-aware **average precision**
(:func:`~agent_eval.metrics._passages.average_precision`, the figure Ragas calls context
precision) in ``details.average_precision``. A turn with no passages is skipped
(``no_passages``), never scored 0; with passages but no label, ``context_precision@1`` skips it
(``no_relevance_labels``).
"""

from __future__ import annotations

from functools import lru_cache
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field, create_model, model_validator

from agent_eval._result import Atom
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, require_judge
from agent_eval.metrics._passages import (
    LabelError,
    Passage,
    TurnPassages,
    average_precision,
    passage_label,
    turn_passages,
)
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._rag_base import RagMetric, k_of_n, render_passages

__all__ = [
    "ContextPrecision",
    "LLMContextPrecision",
    "LLMContextPrecisionV2",
    "PassageVerdict",
    "passage_verdicts_model",
]


def retrieval_skip(sample: MetricInput) -> str | None:
    """``no_passages`` when the turn retrieved nothing (labels errors surface in evaluate)."""
    try:
        found = turn_passages(sample.unit)
    except LabelError:
        return None
    return None if found.passages else "no_passages"


def _precision_outcome(
    found: TurnPassages, flags: list[bool], atoms: list[Atom], source: str
) -> MetricOutcome:
    relevant = sum(flags)
    return MetricOutcome(
        atoms=tuple(atoms),
        reason=f"{k_of_n(relevant, len(flags))} passages relevant",
        details={
            "precision": relevant / len(flags),
            "average_precision": average_precision(flags),
            "relevant": relevant,
            "passages": len(flags),
            "duplicates": found.duplicates,
            "unjudged": found.unjudged,
            "relevance_source": source,
            "k_of_n": k_of_n(relevant, len(flags)),
        },
    )


class ContextPrecision(RagMetric):
    """``context_precision@1``: share of retrieved passages labelled relevant (no judge)."""

    name: ClassVar[str] = "context_precision"
    version: ClassVar[int] = 1
    requires_judge: ClassVar[bool] = False
    judge_calls: ClassVar[int] = 0

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_passages``; ``no_relevance_labels`` when no passage carries a human label."""
        try:
            found = turn_passages(sample.unit)
        except LabelError:
            return None  # evaluate raises it: an error row naming the ids
        if not found.passages:
            return "no_passages"
        return None if found.labelled else "no_relevance_labels"

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Atoms: one per passage, ``relevant`` / ``not_relevant`` / ``unjudged``.

        Raises:
            LabelError: the turn's labels name a passage it did not retrieve.

        """
        found = turn_passages(sample.unit)
        flags = [bool(p.relevant) for p in found.passages]
        atoms = [  # built from our own typed values: no re-validation (Atom.model_construct)
            Atom.model_construct(
                text=passage_label(p),
                label=_label_name(p.relevant),
                passed=bool(p.relevant),
            )
            for p in found.passages
        ]
        return _precision_outcome(found, flags, atoms, "labels")


class PassageVerdict(BaseModel):
    """The reviewer's verdict on one passage."""

    model_config = ConfigDict(strict=True)

    passage: int = Field(description="The passage number, as given ([1], [2], ...).")
    reason: str = Field(description="One sentence: what in the passage bears on the question.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the passage is relevant to answering the question, else "0".'
    )


class _NumberedVerdicts(BaseModel):
    """Checks that the verdicts are numbered 1..n in order (a misaligned reply is re-asked)."""

    model_config = ConfigDict(strict=True)

    @model_validator(mode="after")
    def _in_order(self) -> _NumberedVerdicts:
        numbers = [v.passage for v in getattr(self, "verdicts", [])]
        if numbers != list(range(1, len(numbers) + 1)):
            raise ValueError(
                f"verdicts must be numbered 1..{len(numbers)} in passage order, got {numbers}"
            )
        return self


@lru_cache(maxsize=128)
def passage_verdicts_model(count: int) -> type[BaseModel]:
    """The reply schema for ``count`` passages: ``verdicts``, exactly ``count`` entries.

    Built once per count (cached), so the judge's schema handling is reused.
    """
    model: type[BaseModel] = create_model(
        f"PassageVerdicts{count}",
        __base__=_NumberedVerdicts,
        verdicts=(
            list[PassageVerdict],
            Field(
                min_length=count,
                max_length=count,
                description=f"One verdict per passage, in order: exactly {count}.",
            ),
        ),
    )
    return model


class LLMContextPrecision(RagMetric):
    """``llm_context_precision@1``: share of passages an LLM reviewer judges relevant."""

    name: ClassVar[str] = "llm_context_precision"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet | None] = PromptSet("context_precision_v1")

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_passages`` when the turn retrieved nothing."""
        return retrieval_skip(sample)

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """One call: the question and the numbered passages."""
        assert self.prompts is not None
        passages = turn_passages(sample.unit).passages
        return self.request(
            passage_verdicts_model(max(len(passages), 1)),
            self.prompts.render("system"),
            self.prompts.render(
                "user", question=sample.unit.question, passages=render_passages(passages)
            ),
        )

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Judge every passage; atoms carry the verdict and the reviewer's reason.

        Human labels on the turn, when present, are kept beside (``details.human_labels``,
        aligned with the atoms) for ``calibrate``; they never change the score.
        """
        judge = require_judge(self, judge)
        found = turn_passages(sample.unit)
        request = self.judge_request(sample)
        assert request is not None
        reply = await tally.ask(judge, request)
        verdicts = reply.output.verdicts
        flags = [v.verdict == "1" for v in verdicts]
        atoms = [
            Atom(
                text=passage_label(p), label=v.verdict, passed=v.verdict == "1", rationale=v.reason
            )
            for p, v in zip(found.passages, verdicts, strict=True)
        ]
        outcome = _precision_outcome(found, flags, atoms, "judge")
        if found.labelled:
            outcome.details["human_labels"] = [_flag(p) for p in found.passages]
        return outcome


def _label_name(relevant: bool | None) -> str:
    if relevant is None:
        return "unjudged"
    return "relevant" if relevant else "not_relevant"


def _flag(passage: Passage) -> int | None:
    return None if passage.relevant is None else int(passage.relevant)


class LLMContextPrecisionV2(LLMContextPrecision):
    """``llm_context_precision@2``: the same procedure with prompts that frame the input as data.

    The ``context_precision_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``llm_context_precision@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet | None] = PromptSet("context_precision_v2")
