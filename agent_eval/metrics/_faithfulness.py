"""Faithfulness (``faithfulness@1``): the share of an answer's statements its context supports.

Ragas' definition (``Faithfulness``, ragas 0.1-0.4: a statement-generation call, then one NLI
call judging every statement against the retrieved contexts), hardened:

1. **decompose** (:class:`Statements`): the answer becomes standalone statements, no pronouns;
   the question is given only to make them understandable. Pinned per answer
   (:mod:`agent_eval.metrics._decomposition`).
2. **verify** (:class:`StatementVerdicts`): every statement against the context, one verdict per
   statement typed ``Literal["0", "1"]`` (Ragas types it ``int``). The reviewer sees the
   context and the statements only, never the question's reference answer: a reviewer that knows
   the right answer tends to pass an answer that merely sounds right. Verdicts must align with
   the statements one-to-one (count and order, each statement repeated as given, compared after
   :func:`~agent_eval.metrics._evidence.normalize`), else the judge is re-asked with the error
   (:func:`~agent_eval.metrics._reasks.ask_checked`), then the row is ``invalid_judge_output``.

Score = supported / statements, computed here from the atoms. Zero statements (a refusal, "I
don't know.") is ``skipped`` / ``no_statements``: never NaN, 0 or 1.

``faithfulness@1[per_statement=true]`` judges each statement in its own call
(:class:`StatementVerdict`), so one verdict's error cannot leak into another's; the calls of a
unit run concurrently.
"""

from __future__ import annotations

import asyncio
from functools import cached_property
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_eval._result import Atom
from agent_eval._tokens import count_tokens
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, MetricParams
from agent_eval.metrics._claim_metric import (
    VERIFY_STAGE,
    ClaimMetric,
    k_of_n,
    render_context,
)
from agent_eval.metrics._evidence import normalize
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._reasks import Problem, ask_checked
from agent_eval.metrics._units import Context, Unit

__all__ = [
    "Faithfulness",
    "FaithfulnessParams",
    "FaithfulnessV2",
    "StatementVerdict",
    "StatementVerdicts",
    "Statements",
]


class Statements(BaseModel):
    """Stage 1 output: the answer's standalone statements, in order."""

    model_config = ConfigDict(strict=True)

    statements: list[str] = Field(
        description="Standalone statements of the answer, no pronouns; [] when it states nothing."
    )


class JudgedStatement(BaseModel):
    """One statement's verdict, repeating the statement it judges."""

    model_config = ConfigDict(strict=True)

    statement: str = Field(description="The statement, exactly as given.")
    reason: str = Field(description="One sentence: why the context does or does not support it.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the context supports the statement, else "0".'
    )


class StatementVerdicts(BaseModel):
    """Stage 2 output: one verdict per statement, in the order given."""

    model_config = ConfigDict(strict=True)

    verdicts: list[JudgedStatement]


class StatementVerdict(BaseModel):
    """Stage 2 output of the per-statement variant: one statement's reason and verdict."""

    model_config = ConfigDict(strict=True)

    reason: str = Field(description="One sentence: why the context does or does not support it.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the context supports the statement, else "0".'
    )


class FaithfulnessParams(MetricParams):
    """Identity parameters of ``faithfulness@1``.

    Attributes:
        per_statement: Judge each statement in its own call (independent verdict errors).

    """

    per_statement: bool = False


class Faithfulness(ClaimMetric):
    """``faithfulness@1``: one unit per turn's answer; score = supported statements / statements."""

    name: ClassVar[str] = "faithfulness"
    version: ClassVar[int] = 1
    Params: ClassVar[type[MetricParams]] = FaithfulnessParams
    prompts: ClassVar[PromptSet] = PromptSet("faithfulness_v1")
    decompose_model: ClassVar[type[BaseModel]] = Statements
    atoms_field: ClassVar[str] = "statements"
    atom_noun: ClassVar[str] = "statement"

    @property
    def per_statement(self) -> bool:
        """Whether each statement is judged in its own call."""
        assert isinstance(self.params, FaithfulnessParams)
        return self.params.per_statement

    def verify_request(self, statements: list[str], context: str) -> JudgeRequest:
        """The stage-2 request judging all ``statements`` against ``context``."""
        return self.request(
            StatementVerdicts,
            self.prompts.render("verify_system"),
            self.prompts.render("verify_user", context=context, statements=statements),
        )

    def verify_one_request(self, statement: str, context: str) -> JudgeRequest:
        """The per-statement request judging ``statement`` against ``context``."""
        return self.request(
            StatementVerdict,
            self.prompts.render("verify_one_system"),
            self.prompts.render("verify_one_user", context=context, statement=statement),
        )

    def verify_template(self) -> JudgeRequest:
        """The verify request (per statement, or of all statements) with empty inputs."""
        if self.per_statement:
            return self.verify_one_request("", "")
        return self.verify_request([], "")

    @cached_property
    def _verify_overhead(self) -> int:
        return sum(count_tokens(m["content"]) for m in self.verify_template().messages)

    def verify_overhead(self) -> int:
        """o200k tokens of the verify templates with empty inputs."""
        return self._verify_overhead

    def verify_calls(self, unit: Unit) -> int:
        """One verify call, or one per estimated statement with ``per_statement``."""
        return self.estimated_atoms(unit) if self.per_statement else 1

    async def judge_atoms(
        self,
        sample: MetricInput,
        atoms: list[str],
        passages: list[Context],
        judge: Judge,
        tally: CallTally,
    ) -> MetricOutcome:
        """Verdicts for ``atoms`` (one call, or one per statement), then the score from them."""
        context = render_context(passages)
        if self.per_statement:
            replies = await asyncio.gather(
                *(
                    tally.ask(judge, self.verify_one_request(a, context), VERIFY_STAGE)
                    for a in atoms
                )
            )
            judged = [(r.output.reason, r.output.verdict) for r in replies]
            reasks = 0
        else:
            reply, _, reasks = await ask_checked(
                tally,
                judge,
                self.verify_request(atoms, context),
                lambda output: _alignment(output, atoms),
                stage=VERIFY_STAGE,
            )
            judged = [(v.reason, v.verdict) for v in reply.output.verdicts]
        built = tuple(
            Atom(text=text, label=verdict, passed=verdict == "1", rationale=reason)
            for text, (reason, verdict) in zip(atoms, judged, strict=True)
        )
        supported = sum(atom.passed for atom in built)
        return MetricOutcome(
            reason=f"{k_of_n(supported, len(built))} statements supported by the context",
            atoms=built,
            details={
                **tally.details,
                "n_statements": len(built),
                "n_supported": supported,
                "k_of_n": k_of_n(supported, len(built)),
                "reasks": reasks,
            },
        )


def _alignment(output: StatementVerdicts, statements: list[str]) -> Problem | None:
    """A problem when the verdicts do not match the statements one-to-one, in order."""
    verdicts = output.verdicts
    if len(verdicts) != len(statements):
        return Problem(
            f"expected {len(statements)} verdicts, one per statement in the order given, "
            f"got {len(verdicts)}"
        )
    for number, (verdict, statement) in enumerate(zip(verdicts, statements, strict=True), 1):
        if normalize(verdict.statement) != normalize(statement):
            return Problem(
                f"verdict {number} is for {verdict.statement!r}, but statement {number} is "
                f"{statement!r}; give the verdicts in the order of the statements, repeating "
                "each statement exactly"
            )
    return None


class FaithfulnessV2(Faithfulness):
    """``faithfulness@2``: the same procedure with prompts that frame the input as data.

    The ``faithfulness_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``faithfulness@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet] = PromptSet("faithfulness_v2")
