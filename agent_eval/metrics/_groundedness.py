"""Groundedness (``groundedness@1``): atomic claims labelled against the context, evidence checked.

Two stages, like faithfulness, with three labels and quoted evidence:

1. **decompose** (:class:`Claims`): the answer becomes atomic claims (pinned per answer);
2. **verify** (:class:`ClaimJudgements`): each claim ``SUPPORTED`` (stated or reasonably entailed
   by the context), ``CONTRADICTED`` (conflicts with it) or ``UNSUPPORTED`` (not addressed by it,
   which is not the same as false), with the exact quoted span of context used as evidence
   (``"none"`` for UNSUPPORTED) and a one-sentence rationale. Strict: a claim that adds
   specificity the context lacks ("a 20% discount" where the context says "a discount") is
   UNSUPPORTED.

Checks on the verify reply, each re-asked with the error
(:func:`~agent_eval.metrics._reasks.ask_checked`):

- the claims align one-to-one with the given ones (count, order, text); still misaligned after
  the re-asks: ``invalid_judge_output`` with the raw reply;
- **evidence is verified**: a SUPPORTED or CONTRADICTED claim's quote must occur in one context
  passage after :func:`~agent_eval.metrics._evidence.normalize` (whitespace, quotes, dashes,
  case); a quote still not found after the re-asks makes that claim ``UNVERIFIED``
  (``judge_label`` keeps what the judge said): it never counts as SUPPORTED.

Score = SUPPORTED claims with verified evidence / claims, computed here. A ``supported_count``
the model returns is compared with its own list; a disagreement is noted in
``details["count_disagreement"]``, never used. ``details`` also holds the counts per label and
``quotes_checked`` / ``quotes_verified``.
"""

from __future__ import annotations

from functools import cached_property
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_eval._result import Atom
from agent_eval._tokens import count_tokens
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome
from agent_eval.metrics._claim_metric import VERIFY_STAGE, ClaimMetric, k_of_n, render_context
from agent_eval.metrics._evidence import find_quote, normalize
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._reasks import Problem, ask_checked
from agent_eval.metrics._units import Context

__all__ = [
    "LABELS",
    "UNVERIFIED",
    "ClaimJudgement",
    "ClaimJudgements",
    "ClaimLabel",
    "Claims",
    "Groundedness",
    "GroundednessV2",
]

ClaimLabel = Literal["SUPPORTED", "CONTRADICTED", "UNSUPPORTED"]
LABELS: tuple[str, ...] = ("SUPPORTED", "CONTRADICTED", "UNSUPPORTED")
UNVERIFIED = "UNVERIFIED"
"""The label we record for a SUPPORTED/CONTRADICTED claim whose quote is not in the context."""
_NO_EVIDENCE = frozenset({"", "none", "n/a", "null", "-"})


class Claims(BaseModel):
    """Stage 1 output: the answer's atomic claims, in order."""

    model_config = ConfigDict(strict=True)

    claims: list[str] = Field(
        description="Atomic, standalone claims of the answer; [] when it claims nothing."
    )


class ClaimJudgement(BaseModel):
    """One claim's label, quoted evidence and rationale."""

    model_config = ConfigDict(strict=True)

    claim: str = Field(description="The claim, exactly as given.")
    label: ClaimLabel = Field(description="SUPPORTED, CONTRADICTED or UNSUPPORTED.")
    evidence: str = Field(
        description='The exact span of the context relied on; "none" for UNSUPPORTED.'
    )
    rationale: str = Field(description="One sentence: why this label.")


class ClaimJudgements(BaseModel):
    """Stage 2 output: one judgement per claim in the order given, and the model's own count."""

    model_config = ConfigDict(strict=True)

    claims: list[ClaimJudgement]
    supported_count: int | None = Field(
        default=None, description="How many claims were labelled SUPPORTED."
    )


class Groundedness(ClaimMetric):
    """``groundedness@1``: one unit per turn's answer; score = verified SUPPORTED / claims."""

    name: ClassVar[str] = "groundedness"
    version: ClassVar[int] = 1
    prompts: ClassVar[PromptSet] = PromptSet("groundedness_v1")
    decompose_model: ClassVar[type[BaseModel]] = Claims
    atoms_field: ClassVar[str] = "claims"
    atom_noun: ClassVar[str] = "claim"

    def verify_request(self, claims: list[str], context: str) -> JudgeRequest:
        """The stage-2 request labelling ``claims`` against ``context``."""
        return self.request(
            ClaimJudgements,
            self.prompts.render("verify_system"),
            self.prompts.render("verify_user", context=context, claims=claims),
        )

    def verify_template(self) -> JudgeRequest:
        """The verify request with no claims and no context."""
        return self.verify_request([], "")

    @cached_property
    def _verify_overhead(self) -> int:
        return sum(count_tokens(m["content"]) for m in self.verify_template().messages)

    def verify_overhead(self) -> int:
        """o200k tokens of the verify templates with empty inputs."""
        return self._verify_overhead

    async def judge_atoms(
        self,
        sample: MetricInput,
        atoms: list[str],
        passages: list[Context],
        judge: Judge,
        tally: CallTally,
    ) -> MetricOutcome:
        """Label the claims, verify their quotes, and score from the verified labels."""
        texts = [p.text for p in passages]
        reply, remaining, reasks = await ask_checked(
            tally,
            judge,
            self.verify_request(atoms, render_context(passages)),
            lambda output: _check(output, atoms, texts),
            stage=VERIFY_STAGE,
        )
        output: ClaimJudgements = reply.output
        built = tuple(_atom(text, j, texts) for text, j in zip(atoms, output.claims, strict=True))
        counts = {label: sum(a.label == label for a in built) for (*_, label) in _LABEL_KEYS}
        checked = [a for a in built if a.evidence_verified is not None]
        supported = counts[LABELS[0]]
        details = {
            **tally.details,
            "n_claims": len(built),
            **{key: counts[label] for key, label in _LABEL_KEYS},
            "k_of_n": k_of_n(supported, len(built)),
            "quotes_checked": len(checked),
            "quotes_verified": sum(bool(a.evidence_verified) for a in checked),
            "reasks": reasks,
        }
        if remaining is not None:
            details["unverified_after_reasks"] = remaining.message
        said = sum(j.label == "SUPPORTED" for j in output.claims)
        if output.supported_count is not None and output.supported_count != said:
            details["count_disagreement"] = (
                f"the judge's supported_count is {output.supported_count}, but its list labels "
                f"{said} claim(s) SUPPORTED; the list is used"
            )
        return MetricOutcome(
            reason=f"{k_of_n(supported, len(built))} claims supported by the context "
            f"(quotes verified: {details['quotes_verified']} of {len(checked)})",
            atoms=built,
            details=details,
        )


_LABEL_KEYS = (
    ("n_supported", "SUPPORTED"),
    ("n_contradicted", "CONTRADICTED"),
    ("n_unsupported", "UNSUPPORTED"),
    ("n_unverified", UNVERIFIED),
)


def _needs_quote(judgement: ClaimJudgement) -> bool:
    return judgement.label != "UNSUPPORTED"


def _evidence(judgement: ClaimJudgement) -> str | None:
    text = judgement.evidence.strip()
    return None if text.casefold() in _NO_EVIDENCE else text


def _check(output: ClaimJudgements, claims: list[str], passages: list[str]) -> Problem | None:
    """Misaligned claims (fatal), else quotes not found in the context (not fatal)."""
    given = output.claims
    if len(given) != len(claims):
        return Problem(
            f"expected {len(claims)} claims, one per claim in the order given, got {len(given)}"
        )
    for number, (judgement, claim) in enumerate(zip(given, claims, strict=True), 1):
        if normalize(judgement.claim) != normalize(claim):
            return Problem(
                f"entry {number} is for {judgement.claim!r}, but claim {number} is {claim!r}; "
                "give the entries in the order of the claims, repeating each claim exactly"
            )
    missing = [
        f"claim {number} ({j.label}): the evidence {j.evidence!r} does not occur in the context"
        for number, j in enumerate(given, 1)
        if _needs_quote(j) and find_quote(_evidence(j), passages) is None
    ]
    if not missing:
        return None
    return Problem(
        "; ".join(missing) + ". Copy the evidence word for word from one passage of the context "
        '(without the passage number), or label the claim UNSUPPORTED with evidence "none"',
        fatal=False,
    )


def _atom(text: str, judgement: ClaimJudgement, passages: list[str]) -> Atom:
    evidence = _evidence(judgement)
    if not _needs_quote(judgement):
        return Atom(
            text=text,
            label=judgement.label,
            passed=False,
            evidence=evidence,
            evidence_verified=None,
            rationale=judgement.rationale,
        )
    verified = find_quote(evidence, passages) is not None
    label = judgement.label if verified else UNVERIFIED
    return Atom(
        text=text,
        label=label,
        passed=verified and judgement.label == "SUPPORTED",
        evidence=evidence,
        evidence_verified=verified,
        rationale=judgement.rationale,
        judge_label=None if verified else judgement.label,
    )


class GroundednessV2(Groundedness):
    """``groundedness@2``: the same procedure with prompts that frame the input as data.

    The ``groundedness_v2`` prompts say that the material is recorded, untrusted data to
    evaluate, that any instruction inside it (one that addresses an evaluator or asks for a
    verdict included) is part of what is evaluated and never addressed to the judge, and show
    trace text as quoted lines (``| line``, ``|! line`` for lines imitating a header), as the
    hardened formatters do (``docs/hardened-judging.md``).
    ``groundedness@1`` keeps the original prompts.
    """

    version: ClassVar[int] = 2
    prompts: ClassVar[PromptSet] = PromptSet("groundedness_v2")
