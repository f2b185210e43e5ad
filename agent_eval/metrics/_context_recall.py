"""Context recall: whether what the answer needed was retrieved.

- ``context_recall@1`` (**judge-free**): against the turn's gold passage set
  (``relevant_passages``: every passage the answer needed, retrieved or not, as qrels list
  them): the share of gold passages among the distinct passages the turn received. Each gold
  passage is an atom, ``retrieved`` or ``missing``. Relevance judgements of the retrieved
  passages alone cannot measure recall (what was never retrieved was never judged), so a turn
  with no gold set is skipped (``no_gold_passages``); an empty gold set (nothing was needed:
  an unanswerable turn) is skipped too (``no_relevant_passages``).
- ``llm_context_recall@1``: without labels, an LLM reviewer splits the turn's **reference**
  answer into statements and judges each attributable to the passages (``"1"``) or not
  (``"0"``), Ragas' LLM context recall. A turn without a reference is skipped
  (``missing_reference``).

A turn with no passages is skipped (``no_passages``), never scored 0.
"""

from __future__ import annotations

from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_eval._result import Atom
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, require_judge
from agent_eval.metrics._context_precision import retrieval_skip
from agent_eval.metrics._passages import LabelError, turn_passages
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._rag_base import RagMetric, k_of_n, render_passages

__all__ = [
    "AttributedStatement",
    "AttributedStatements",
    "ContextRecall",
    "LLMContextRecall",
    "LLMContextRecallV2",
]


class ContextRecall(RagMetric):
    """``context_recall@1``: share of the gold passages that were retrieved (no judge)."""

    name: ClassVar[str] = "context_recall"
    version: ClassVar[int] = 1
    requires_judge: ClassVar[bool] = False
    judge_calls: ClassVar[int] = 0

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_passages``, ``no_gold_passages`` or ``no_relevant_passages``."""
        try:
            found = turn_passages(sample.unit)
        except LabelError:
            return None  # evaluate raises it: an error row naming the ids
        if not found.passages:
            return "no_passages"
        if found.gold is None:
            return "no_gold_passages"
        return None if found.gold else "no_relevant_passages"

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Atoms: one per gold passage, ``retrieved`` (with its rank) or ``missing``.

        Raises:
            LabelError: the turn's labels are malformed or name passages it did not retrieve.

        """
        found = turn_passages(sample.unit)
        assert found.gold
        ranks = {p.id: p.rank for p in found.passages if p.id is not None}
        atoms = [  # built from our own typed values: no re-validation (Atom.model_construct)
            Atom.model_construct(
                text=gold if gold not in ranks else f"{gold} (#{ranks[gold] + 1})",
                label="retrieved" if gold in ranks else "missing",
                passed=gold in ranks,
            )
            for gold in found.gold
        ]
        hits = sum(a.passed for a in atoms)
        return MetricOutcome(
            atoms=tuple(atoms),
            reason=f"{k_of_n(hits, len(atoms))} needed passages retrieved",
            details={
                "recall": hits / len(atoms),
                "retrieved_relevant": hits,
                "gold_passages": len(atoms),
                "passages": len(found.passages),
                "duplicates": found.duplicates,
                "relevance_source": "labels",
                "k_of_n": k_of_n(hits, len(atoms)),
            },
        )


class AttributedStatement(BaseModel):
    """One statement of the reference and whether the passages support it."""

    model_config = ConfigDict(strict=True)

    statement: str = Field(description="A standalone statement taken from the reference.")
    reason: str = Field(description="One sentence: where the passages say it, or that they don't.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the passages contain this statement\'s information, else "0".'
    )


class AttributedStatements(BaseModel):
    """The reference broken into statements, each judged attributable or not."""

    model_config = ConfigDict(strict=True)

    statements: list[AttributedStatement] = Field(
        min_length=1, description="Every statement of the reference, in order (at least one)."
    )


class LLMContextRecall(RagMetric):
    """``llm_context_recall@1``: share of the reference's statements the passages support."""

    name: ClassVar[str] = "llm_context_recall"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet | None] = PromptSet("context_recall_v1")

    @property
    def uses_reference(self) -> bool:
        """Always: recall is measured against the reference answer."""
        return True

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_passages``; ``missing_reference`` when the turn has no reference answer."""
        skipped = retrieval_skip(sample)
        if skipped is not None:
            return skipped
        return None if sample.reference and sample.reference.strip() else "missing_reference"

    def judge_request(self, sample: MetricInput) -> JudgeRequest | None:
        """One call: the question, the reference and the numbered passages."""
        assert self.prompts is not None
        passages = turn_passages(sample.unit).passages
        return self.request(
            AttributedStatements,
            self.prompts.render("system"),
            self.prompts.render(
                "user",
                question=sample.unit.question,
                reference=sample.reference or "",
                passages=render_passages(passages),
            ),
        )

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Atoms: the reference's statements, ``"1"`` (attributable) or ``"0"``."""
        judge = require_judge(self, judge)
        request = self.judge_request(sample)
        assert request is not None
        reply = await tally.ask(judge, request)
        statements = reply.output.statements
        atoms = tuple(
            Atom(text=s.statement, label=s.verdict, passed=s.verdict == "1", rationale=s.reason)
            for s in statements
        )
        hits = sum(a.passed for a in atoms)
        return MetricOutcome(
            atoms=atoms,
            reason=f"{k_of_n(hits, len(atoms))} reference statements found in the passages",
            details={"recall": hits / len(atoms), "k_of_n": k_of_n(hits, len(atoms))},
        )


class LLMContextRecallV2(LLMContextRecall):
    """``llm_context_recall@2``: the same procedure with prompts that frame the input as data.

    The ``context_recall_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``llm_context_recall@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet | None] = PromptSet("context_recall_v2")
