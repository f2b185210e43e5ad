"""Criteria metrics: a criteria file (:mod:`~agent_eval.metrics._criteria_file`) as a metric.

``--metric criteria:PATH`` (and ``[metrics.NAME]`` tables of ``agent-eval.toml``) build a
:class:`CriteriaMetric`: one binary judge call per unit, the typed verdict
(:class:`CriteriaVerdict`, ``"0"``/``"1"`` with a reason), score = verdict. The unit is the
whole conversation (rendered by the run's formatter) or each answer turn (the turn's question and
answer, no formatter), as the file says.

Identity: the metric is ``name@version`` of the file; its ``prompt_sha256`` covers the prompt
templates (``prompts/criteria_v1``) *and* the file's bytes, and every row carries the file's
own sha256 as ``details["criteria_sha256"]``, so that a file edited under the same version is
detected (:mod:`agent_eval.run._criteria_drift`), and a ``--resume`` refuses to mix them.
"""

from __future__ import annotations

import hashlib
from functools import cached_property
from pathlib import Path
from typing import ClassVar, Literal

from pydantic import BaseModel, ConfigDict, Field

from agent_eval._tokens import count_tokens, tokens_at_most
from agent_eval._trace import AgentTrace
from agent_eval.errors import CriteriaError
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import CallTally, Metric, MetricInput, MetricOutcome, require_judge
from agent_eval.metrics._criteria_file import CRITERIA_SHA256, Criteria, load_criteria
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._units import Unit

__all__ = ["CRITERIA_PREFIX", "CriteriaMetric", "CriteriaVerdict", "criteria_metric"]

CRITERIA_PREFIX = "criteria:"
"""The metric-spec prefix of a criteria file: ``criteria:path/to/file.toml``."""

_PROMPTS = PromptSet("criteria_v1")


class CriteriaVerdict(BaseModel):
    """The judge's answer: a reason and the binary verdict (strictly the string "0" or "1")."""

    model_config = ConfigDict(strict=True)

    reason: str = Field(description="One or two sentences: what decides the verdict.")
    verdict: Literal["0", "1"] = Field(
        description='"1" when the criterion passes, "0" when it fails.'
    )


class CriteriaMetric(Metric):
    """One criteria file as a metric (a subclass per file is made by :func:`criteria_metric`).

    Takes :class:`~agent_eval.metrics._base.Metric`'s arguments. A file with a ``reference`` key
    judges with the unit's reference (an answer turn's own, else the conversation's) and skips
    units without one (``missing_reference``).
    """

    criteria: ClassVar[Criteria]
    prompts: ClassVar[PromptSet] = _PROMPTS

    @property
    def prompt_sha256(self) -> str:
        """sha256 hex over the templates' hash and the criteria file's bytes' hash."""
        joined = f"{self.prompts.sha256}\0{self.criteria.sha256}"
        return hashlib.sha256(joined.encode()).hexdigest()

    @property
    def uses_reference(self) -> bool:
        """True when the criteria file says how to use a reference."""
        return self.criteria.reference is not None

    def unit_reference(self, unit: Unit, trace: AgentTrace) -> str | None:
        """The turn's reference for an answer unit, else the conversation's (the trace's)."""
        return unit.reference or trace.reference

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_answer`` (answer units), ``missing_reference`` (files that use a reference)."""
        if self.uses_reference and not sample.reference:
            return "missing_reference"
        return super().skip_reason(sample)

    @cached_property
    def _system(self) -> str:
        criteria = self.criteria
        examples = "".join(
            self.prompts.render(
                "example", number=number, conversation=example.conversation,
                answer=_example_answer(example.reason, example.verdict),
            ) + "\n"
            for number, example in enumerate(criteria.examples, 1)
        )  # fmt: skip
        return self.prompts.render(
            "system", unit=criteria.unit, criterion=criteria.name, question=criteria.question,
            pass_when=criteria.pass_when, fail_when=criteria.fail_when,
            reference_use=criteria.reference or "", examples=examples,
        )  # fmt: skip

    def judge_request(self, sample: MetricInput) -> JudgeRequest:
        """The one request for ``sample``: the criterion, then the unit as data."""
        user = self.prompts.render(
            "user", unit=self.criteria.unit, conversation=sample.conversation,
            question=sample.unit.question, answer=sample.unit.answer,
            reference=sample.reference if self.uses_reference else None,
        )  # fmt: skip
        return JudgeRequest(
            messages=(
                {"role": "system", "content": self._system},
                {"role": "user", "content": user},
            ),
            response_model=CriteriaVerdict,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def prompt_tokens(self, sample: MetricInput) -> int:
        """o200k tokens of the request's messages."""
        return sum(count_tokens(m["content"]) for m in self.judge_request(sample).messages)

    def prompt_tokens_at_most(self, sample: MetricInput) -> int:
        """:meth:`prompt_tokens` bounded by the UTF-8 bytes of the request's messages."""
        return sum(tokens_at_most(m["content"]) for m in self.judge_request(sample).messages)

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Same as :meth:`prompt_tokens`: one call per unit."""
        return self.prompt_tokens(sample)

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """One call; the verdict, its reason and the file's sha256 in ``details``."""
        reply = await tally.ask(require_judge(self, judge), self.judge_request(sample))
        verdict: CriteriaVerdict = reply.output
        return MetricOutcome(
            verdict=verdict.verdict,
            reason=verdict.reason,
            details={CRITERIA_SHA256: self.criteria.sha256},
        )


def _example_answer(reason: str, verdict: str) -> str:
    return CriteriaVerdict(reason=reason, verdict=verdict).model_dump_json()  # type: ignore[arg-type]


def criteria_class(criteria: Criteria) -> type[CriteriaMetric]:
    """A :class:`CriteriaMetric` subclass named and versioned by ``criteria``.

    Raises:
        CriteriaError: the name is a registered metric's (results could not be told apart).

    """
    from agent_eval.metrics._base import metrics

    if criteria.name in metrics.declared_names():
        raise CriteriaError(
            criteria.path, "name", f"{criteria.name!r} is the name of a registered metric",
            "choose another name, so that its results cannot be mistaken for that metric's",
        )  # fmt: skip
    unit = criteria.unit
    return type(
        f"Criteria_{criteria.name}",
        (CriteriaMetric,),
        {
            "name": criteria.name,
            "version": criteria.version,
            "criteria": criteria,
            "unit_kind": unit,
            "uses_formatter": unit == "conversation",
            "__module__": __name__,
        },
    )


def criteria_metric(
    path: str | Path,
    *,
    with_reference: bool = False,
    temperature: float | None = 0.0,
    max_tokens: int | None = None,
    seed: int | None = None,
) -> CriteriaMetric:
    """The metric of the criteria file at ``path``, with the run's judge settings.

    ``with_reference`` is accepted for symmetry with :func:`~agent_eval.metrics._spec.build_metric`;
    whether a reference is used is the file's to say (its ``reference`` key).

    Raises:
        CriteriaError: the file is unreadable or breaks the format (names the key and the fix),
            or its name is a registered metric's.

    """
    cls = criteria_class(load_criteria(path))
    return cls(
        with_reference=with_reference, temperature=temperature, max_tokens=max_tokens, seed=seed
    )
