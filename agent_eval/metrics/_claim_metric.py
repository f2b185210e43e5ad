"""What the claim-level metrics share: answer units, their context, and pinned decomposition.

:class:`ClaimMetric` scores each turn's answer (``unit_kind = "answer"``) against the context it
had (:attr:`Unit.contexts <agent_eval.metrics._units.Unit.contexts>`: retrieved passages and
tool results before the answer). It reads no rendering (formatter ``none``). In two stages:

1. **decompose** the answer into atoms (statements, claims): a judge call with the question and
   the answer, never the context; the atoms are pinned in a
   :class:`~agent_eval.metrics._decomposition.DecompositionCache` (an in-memory one unless the
   caller gives a file), so a re-run or a repeat judges the same atoms;
2. **verify** the atoms against the context (the subclass: :meth:`ClaimMetric.judge_atoms`).

Skips, before any call: ``no_answer`` (an empty answer), ``no_context`` (no context passage with
text: nothing can support the answer, which is not the same as unsupported). After the first
stage: ``no_statements`` (a refusal or "I don't know." holds no statement): never a 0 or a 1.

The context the judge reads is the passages numbered in order, ``[1]``, ``[2]``...; each
passage's id (document id, tool call id) is shown beside its number when known.
"""

from __future__ import annotations

import asyncio
import re
from abc import abstractmethod
from functools import cached_property
from typing import ClassVar

from pydantic import BaseModel

from agent_eval._tokens import count_tokens, tokens_at_most
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.metrics._base import (
    CallTally,
    Metric,
    MetricInput,
    MetricOutcome,
    MetricParams,
    UnitSkipped,
    require_judge,
)
from agent_eval.metrics._decomposition import DecompositionCache, decomposition_key
from agent_eval.metrics._prompts import PromptSet
from agent_eval.metrics._units import Context, Unit, UnitKind

__all__ = ["ClaimMetric", "context_passages", "render_context"]

DECOMPOSE_STAGE = "decompose"
VERIFY_STAGE = "verify"
_SENTENCE = re.compile(r"[.!?](?:\s|$)")


def context_passages(unit: Unit) -> list[Context]:
    """The unit's context passages that hold text, in order."""
    return [c for c in unit.contexts if c.text.strip()]


def render_context(passages: list[Context]) -> str:
    """The passages as the judge reads them: ``[1] (id) text``, blank-line separated."""
    blocks = []
    for number, passage in enumerate(passages, 1):
        label = f"[{number}] ({passage.id})" if passage.id else f"[{number}]"
        blocks.append(f"{label} {passage.text.strip()}")
    return "\n\n".join(blocks)


class ClaimMetric(Metric):
    """Base of the claim-level metrics (see the module docstring).

    Subclasses set ``name``, ``version``, ``prompts`` (templates ``decompose_system``,
    ``decompose_user`` with ``question`` and ``answer``, plus their own), ``decompose_model``
    (a pydantic model with one ``list[str]`` field named ``atoms_field``) and implement
    :meth:`judge_atoms`.

    Attributes:
        decompositions: Where decompositions are pinned; an in-memory store by default. Give a
            file-backed :class:`DecompositionCache` to pin them across runs.

    """

    unit_kind: ClassVar[UnitKind] = "answer"
    uses_formatter: ClassVar[bool] = False
    judge_calls: ClassVar[int] = 2
    prompts: ClassVar[PromptSet]
    decompose_model: ClassVar[type[BaseModel]]
    atoms_field: ClassVar[str]
    atom_noun: ClassVar[str] = "statement"

    def __init__(
        self,
        params: MetricParams | None = None,
        *,
        with_reference: bool = False,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        super().__init__(
            params,
            with_reference=with_reference,
            temperature=temperature,
            max_tokens=max_tokens,
            seed=seed,
        )
        self.decompositions = DecompositionCache()
        self._in_flight: dict[str, asyncio.Event] = {}  # decompositions being asked, by key

    @property
    def prompt_sha256(self) -> str:
        """sha256 of the metric version's prompt folder."""
        return self.prompts.sha256

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``no_answer`` for an empty answer, ``no_context`` when no passage holds text."""
        if not sample.unit.answer.strip():
            return "no_answer"
        if not context_passages(sample.unit):
            return "no_context"
        return None

    # -- requests ------------------------------------------------------------------------

    def request(self, model: type[BaseModel], system: str, user: str) -> JudgeRequest:
        """A two-message request for ``model`` with the metric's sampling settings."""
        return JudgeRequest(
            messages=({"role": "system", "content": system}, {"role": "user", "content": user}),
            response_model=model,
            temperature=self.temperature,
            max_tokens=self.max_tokens,
            seed=self.seed,
        )

    def decompose_request(self, unit: Unit) -> JudgeRequest:
        """Stage 1: split the answer into atoms (the question only makes them understandable)."""
        return self.request(
            self.decompose_model,
            self.prompts.render("decompose_system"),
            self.prompts.render("decompose_user", question=unit.question, answer=unit.answer),
        )

    # -- token estimates -----------------------------------------------------------------

    @cached_property
    def _overheads(self) -> tuple[int, int]:
        empty = Unit(id="turn:1", question="", answer="")
        return _tokens(self.decompose_request(empty)), self.verify_overhead()

    @abstractmethod
    def verify_overhead(self) -> int:
        """o200k tokens of the verify stage's templates with empty inputs."""

    def prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated tokens of the largest call (verify, or decompose when that is longer).

        The answer's length stands in for its atoms in the verify stage.
        """
        unit = sample.unit
        answer = count_tokens(unit.answer)
        decompose = self._overheads[0] + count_tokens(unit.question) + answer
        context = sum(count_tokens(c.text) for c in context_passages(unit))
        return max(decompose, self._overheads[1] + context + answer)

    def verify_template(self) -> JudgeRequest | None:
        """The verify stage's request with empty inputs (its templates alone), for byte bounds.

        ``None`` (the default): unknown, so :meth:`prompt_tokens_at_most` gives no bound.
        """
        return None

    @cached_property
    def _overhead_bytes(self) -> tuple[int, int] | None:
        template = self.verify_template()
        if template is None:
            return None
        empty = Unit(id="turn:1", question="", answer="")
        return _bytes(self.decompose_request(empty)), _bytes(template)

    def prompt_tokens_at_most(self, sample: MetricInput) -> int | None:
        """:meth:`prompt_tokens` with every text bounded by its UTF-8 bytes."""
        overheads = self._overhead_bytes
        if overheads is None:
            return None
        unit = sample.unit
        answer = tokens_at_most(unit.answer)
        decompose = overheads[0] + tokens_at_most(unit.question) + answer
        context = sum(tokens_at_most(c.text) for c in context_passages(unit))
        return max(decompose, overheads[1] + context + answer)

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Both stages (one verify call, or one per estimated sentence for per-atom calls)."""
        unit = sample.unit
        answer = count_tokens(unit.answer)
        decompose = self._overheads[0] + count_tokens(unit.question) + answer
        context = sum(count_tokens(c.text) for c in context_passages(unit))
        return decompose + self.verify_calls(unit) * (self._overheads[1] + context) + answer

    def verify_calls(self, unit: Unit) -> int:
        """Verify calls planned for ``unit`` (1; per-atom variants: the sentence count)."""
        return 1

    @staticmethod
    def estimated_atoms(unit: Unit) -> int:
        """Sentences in the answer, at least 1: a stand-in for its atom count in plans."""
        return max(1, len(_SENTENCE.findall(unit.answer.strip() + " ")))

    # -- evaluation ----------------------------------------------------------------------

    def decomposition_key(self, unit: Unit, judge_model: str) -> str:
        """The key ``unit``'s atoms are pinned under when ``judge_model`` decomposes them.

        See :func:`~agent_eval.metrics._decomposition.decomposition_key` (sha256 hex of the
        metric's ``name@version``, the judge model, the question, answer and context texts).
        """
        return decomposition_key(
            metric=f"{self.name}@{self.version}",
            judge_model=judge_model,
            question=unit.question,
            answer=unit.answer,
            contexts=[c.text for c in unit.contexts],
        )

    async def atoms_of(self, sample: MetricInput, judge: Judge, tally: CallTally) -> list[str]:
        """The answer's atoms: pinned ones when stored, else decomposed (and then stored).

        Sets ``tally.details["decomposition"]`` to ``"pinned"`` (stored in this run's
        decomposition store), ``"cached"`` (decomposed from a judge-call cache hit: no request
        sent, so the atoms are those another run's judge gave) or ``"new"`` (the judge was
        asked now).

        Raises:
            UnitSkipped: the answer holds no atom (``no_statements``).
            JudgeError: the decomposition call failed.

        """
        unit = sample.unit
        key = self.decomposition_key(unit, judge.model)
        atoms = await self._pinned(key)
        if atoms is not None:
            tally.details["decomposition"] = "pinned"
        else:
            done = self._in_flight[key] = asyncio.Event()
            try:
                reply = await tally.ask(judge, self.decompose_request(unit), DECOMPOSE_STAGE)
                decomposed = "cached" if reply.cached else "new"
                raw: list[str] = getattr(reply.output, self.atoms_field)
                atoms = [a.strip() for a in raw if a.strip()]
                self.decompositions.put(
                    key, atoms, metric=f"{self.name}@{self.version}", judge_model=judge.model
                )
            finally:
                del self._in_flight[key]
                done.set()
            tally.details["decomposition"] = decomposed
        if not atoms:
            raise UnitSkipped(
                "no_statements",
                f"the answer holds no {self.atom_noun} to check against the context (a refusal "
                "or an 'I don't know'): neither supported nor unsupported",
                {f"n_{self.atom_noun}s": 0, "decomposition": tally.details["decomposition"]},
            )
        return atoms

    async def _pinned(self, key: str) -> list[str] | None:
        """The stored atoms of ``key``, after any decomposition of it in flight has finished.

        Units with the same question, answer and contexts (one conversation exported in two
        files) share a key: the first asks, the others wait and take its atoms, so a run asks
        the decompose stage each distinct thing once, whatever the timing, and a cold and a
        warm run count the same calls (only the cached share differs). ``None``: not stored
        and none in flight (the caller decomposes), or the one in flight failed.
        """
        while True:
            atoms = self.decompositions.get(key)
            waiting = self._in_flight.get(key)
            if atoms is not None or waiting is None:
                return atoms
            await waiting.wait()

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Decompose (or reuse the pinned atoms), then judge them against the context."""
        judge = require_judge(self, judge)
        atoms = await self.atoms_of(sample, judge, tally)
        return await self.judge_atoms(sample, atoms, context_passages(sample.unit), judge, tally)

    @abstractmethod
    async def judge_atoms(
        self,
        sample: MetricInput,
        atoms: list[str],
        passages: list[Context],
        judge: Judge,
        tally: CallTally,
    ) -> MetricOutcome:
        """Stage 2: judge ``atoms`` against ``passages``; the outcome carries every atom."""


def _tokens(request: JudgeRequest) -> int:
    return sum(count_tokens(m["content"]) for m in request.messages)


def k_of_n(passed: int, total: int) -> str:
    """``"3 of 4"``: how a unit's score reads with its N."""
    return f"{passed} of {total}"


def _bytes(request: JudgeRequest) -> int:
    return sum(tokens_at_most(m["content"]) for m in request.messages)
