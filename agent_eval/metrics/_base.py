"""The metric protocol: :class:`Metric`, what it is given and returns, and the registry.

A metric scores **units** of a conversation (:mod:`agent_eval.metrics._units`): the whole
conversation (goal accuracy) or each turn's answer with the context it had (claim-level and RAG
metrics). For each unit it gets a :class:`MetricInput` (the rendering when it reads one, the
unit, the trace, a reference) and returns a :class:`MetricOutcome`: a score in [0, 1], the typed
verdict when it has one, and its atoms when the score is built from atoms (the score is then
computed from them with :func:`~agent_eval._result.score_from_atoms`, never read from a model).
It may instead raise :class:`~agent_eval.errors.JudgeError`, or answer :meth:`Metric.skip_reason`
before any call. It never builds result rows itself: the engine turns either into a
:class:`~agent_eval._result.MetricResult`. Judge usage is counted by the judge the engine hands
it (:class:`~agent_eval.metrics._accounting.CountingJudge`, on the unit's :class:`CallTally`), so
a failure in a later stage still reports what the earlier stages spent.

A judged metric is its identity (``name``, ``version``, optionally ``Params`` and
``prompt_template``) plus one method, :meth:`Metric.evaluate`: planning, prompt hashing and
token estimates have defaults. :class:`JudgeFreeMetric` is the base of metrics that call no
judge.

Judge-free metrics (``requires_judge = False``) get ``judge=None``; metrics that read no
rendering (``uses_formatter = False``) get ``conversation == ""`` and their rows record the
formatter as ``"none"``. Identity parameters are a pydantic model (``Params``) and part of the
id: ``faithfulness@1[per_statement=true]``.
"""

from __future__ import annotations

import hashlib
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue

from agent_eval._plugins import Registry
from agent_eval._result import Atom, score_from_atoms
from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace
from agent_eval.formatting._identity import format_identity
from agent_eval.judges._base import Judge
from agent_eval.metrics._accounting import CallTally, CountingJudge, StageUsage, estimate_call
from agent_eval.metrics._units import Unit, UnitKind, answer_units, conversation_unit

__all__ = [
    "CallTally",
    "CountingJudge",
    "JudgeFreeMetric",
    "Metric",
    "MetricInput",
    "MetricOutcome",
    "MetricParams",
    "StageUsage",
    "UnitSkipped",
    "estimate_call",
    "metrics",
    "require_judge",
]


class MetricParams(BaseModel):
    """A metric's identity parameters (none by default); subclasses add typed fields."""

    model_config = ConfigDict(frozen=True, extra="forbid")


@dataclass(frozen=True, kw_only=True)
class MetricInput:
    """What a metric scores: one unit.

    Attributes:
        conversation: The conversation as rendered by the run's formatter (``""`` for metrics
            that read no rendering).
        reference: The reference, or ``None`` for reference-free variants: for a conversation
            the reference goal; for a turn its reference answer.
        unit: The unit (the whole conversation by default).
        trace: The conversation itself, for metrics that read its structure (tool calls).

    """

    conversation: str
    reference: str | None = None
    unit: Unit = field(default_factory=lambda: Unit(id="conversation"))
    trace: AgentTrace | None = None


@dataclass(frozen=True, kw_only=True)
class MetricOutcome:
    """A metric's result for one unit and the intermediate outputs that explain it.

    Attributes:
        verdict: The typed verdict as text (``"0"``/``"1"``, ``"1"``..``"5"``), or ``None`` for
            a score built from atoms.
        reason: The judge's reason (or the metric's own summary).
        score: In [0, 1]. ``None``: derived, from ``atoms`` when given, else from a binary
            verdict.
        atoms: The unit's atoms, for scores built from atoms.
        details: Intermediate outputs: keys that are result fields (``user_goal``,
            ``end_state``) go to those fields, the rest to ``MetricResult.details``.

    Raises:
        ValueError: no score can be derived (no atoms, a non-binary verdict and no score), or
            the score is outside [0, 1].

    """

    verdict: str | None = None
    reason: str | None = None
    score: float | None = None
    atoms: tuple[Atom, ...] | None = None
    details: dict[str, JsonValue] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.score is None:
            derived = self._derived_score()
            object.__setattr__(self, "score", derived)
        if self.score is None or not 0.0 <= self.score <= 1.0:
            raise ValueError(f"a metric outcome needs a score in [0, 1], got {self.score!r}")

    def _derived_score(self) -> float | None:
        if self.atoms is not None:
            return score_from_atoms(self.atoms)
        if self.verdict in ("0", "1"):
            return float(self.verdict)
        return None


class UnitSkipped(Exception):
    """Raised by :meth:`Metric.evaluate` when a unit turns out to have nothing to score.

    The engine records a ``skipped`` row with ``reason`` as its ``error_type`` (e.g.
    ``no_statements`` when an answer holds no statement at all), keeping the usage of the calls
    already made and ``details``. Never a score of 0 or 1.

    Args:
        reason: Short machine-friendly reason.
        message: A sentence for people.
        details: Intermediate outputs worth keeping on the row (JSON values).

    """

    def __init__(
        self, reason: str, message: str, details: dict[str, JsonValue] | None = None
    ) -> None:
        self.reason, self.message, self.details = reason, message, dict(details or {})
        super().__init__(message)


class Metric(ABC):
    """A named, versioned procedure from one unit of a conversation to one scored result.

    Subclasses set ``name`` and ``version``; ``id`` is ``name@version`` plus the parameters
    that differ from their defaults (``goal_accuracy@1``, ``faithfulness@1[per_statement=true]``).
    ``prompt_sha256`` identifies the prompt templates and is stored in every result.

    Args:
        params: Identity parameters (an instance of the class's ``Params``); defaults when
            ``None``.
        with_reference: Compare against the unit's reference (metrics that support one).
        temperature: Judge sampling temperature (0 for repeatable verdicts).
        max_tokens: Completion token limit per call, or ``None`` for the endpoint default.
        seed: Sampling seed sent to endpoints that honour one.

    """

    name: ClassVar[str]
    version: ClassVar[int]
    Params: ClassVar[type[MetricParams]] = MetricParams
    unit_kind: ClassVar[UnitKind] = "conversation"
    """What the metric scores: the whole conversation or each turn's answer."""
    requires_judge: ClassVar[bool] = True
    """False for judge-free metrics: they run with ``judge=None`` and record ``"none"``."""
    uses_formatter: ClassVar[bool] = True
    """False for metrics that read no rendering (their rows record formatter ``"none"``)."""
    judge_calls: ClassVar[int] = 1
    """Judge calls per unit when nothing fails (for plans and cost estimates)."""
    prompt_template: ClassVar[str] = ""
    """The prompt text a light metric sends (hashed by the default :attr:`prompt_sha256` and
    counted by the default token estimates); metrics with their own templates override those."""
    skip_messages: ClassVar[Mapping[str, str]] = {}
    """What to tell the user for each of this metric's own skip reasons (the engine's
    defaults are used for the reasons not named here)."""

    def __init__(
        self,
        params: MetricParams | None = None,
        *,
        with_reference: bool = False,
        temperature: float | None = 0.0,
        max_tokens: int | None = None,
        seed: int | None = None,
    ) -> None:
        self.params = params if params is not None else self.Params()
        if not isinstance(self.params, self.Params):
            raise TypeError(f"{self.name} takes {self.Params.__name__}, not {type(params)}")
        self.with_reference = with_reference
        self.temperature = temperature
        self.max_tokens = max_tokens
        self.seed = seed

    @property
    def id(self) -> str:
        """``name@version[params]``, parameters at their defaults left out."""
        changed = self.params.model_dump(exclude_defaults=True)
        return format_identity(self.name, self.version, changed)

    def units(self, trace: AgentTrace) -> list[Unit]:
        """The units of ``trace`` this metric scores (by :attr:`unit_kind`).

        An ``answer`` metric on a trace with no user turn gets one conversation unit, which
        :meth:`skip_reason` skips (``no_answer``): every conversation ends with a row.
        """
        if self.unit_kind == "conversation":
            return [conversation_unit(trace)]
        return answer_units(trace) or [conversation_unit(trace)]

    def unit_reference(self, unit: Unit, trace: AgentTrace) -> str | None:
        """The reference the unit is compared with: a turn's reference, else the trace's."""
        if unit.turn is not None:
            return unit.reference
        return trace.reference

    @property
    def prompt_sha256(self) -> str:
        """sha256 hex over the prompt templates (names and bytes), 64 characters.

        The default hashes :attr:`prompt_template` (``""`` for a metric that sends none).
        """
        if not self.prompt_template:
            return ""
        return hashlib.sha256(self.prompt_template.encode()).hexdigest()

    @property
    def uses_reference(self) -> bool:
        """Whether this metric (as configured) compares against a reference."""
        return False

    def skip_reason(self, sample: MetricInput) -> str | None:
        """A reason to skip ``sample`` without calling the judge (e.g. ``missing_reference``).

        The default skips an ``answer`` metric's unit that has no answer (``no_answer``).
        """
        if self.unit_kind == "answer" and not sample.unit.answer.strip():
            return "no_answer"
        return None

    def prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens (o200k) of the largest call for ``sample``.

        The engine compares it with the judge's context window to skip conversations that would
        not fit (``context_overflow``) rather than send them. The default counts
        :attr:`prompt_template`, the rendering, the unit's answer and the reference (0 for a
        judge-free metric).
        """
        if not self.requires_judge:
            return 0
        parts = (self.prompt_template, sample.conversation, sample.reference or "")
        answer = sample.unit.answer if self.unit_kind == "answer" else ""
        return sum(count_tokens(part) for part in (*parts, answer) if part)

    def prompt_tokens_at_most(self, sample: MetricInput) -> int | None:
        """An upper bound of :meth:`prompt_tokens` computed without the tokenizer, or ``None``.

        The engine skips counting (and loading the encoding) when the bound already fits under
        ``max_context_tokens``: the skip decision is the same as with the exact count. Built-in
        metrics bound every counted text by its UTF-8 bytes
        (:func:`~agent_eval._tokens.tokens_at_most`); the default, ``None``, always counts.
        """
        return None

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens of all of ``sample``'s calls together (dry-run plans).

        The default: :attr:`judge_calls` times :meth:`prompt_tokens`.
        """
        return self.judge_calls * self.prompt_tokens(sample)

    @abstractmethod
    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Score ``sample`` with ``judge`` (``None`` for judge-free metrics).

        The one method a metric must write. ``judge`` counts its own calls on ``tally`` (the
        engine passes a :class:`~agent_eval.metrics._accounting.CountingJudge`), so a metric
        may just ``await judge.ask(request)``; ``tally.ask(judge, request, stage)`` also
        counts the call under ``stage``, and ``tally.details`` keeps intermediate outputs.

        Raises:
            JudgeError: a judge call failed after its retries (the engine records an error row).

        """


class JudgeFreeMetric(Metric):
    """Base of metrics computed from the trace alone: no judge, no formatter, no prompt.

    One unit per conversation; ``judge=None`` and ``conversation == ""`` are passed in, and the
    rows record judge ``"none"`` and formatter ``"none"``.
    """

    requires_judge: ClassVar[bool] = False
    uses_formatter: ClassVar[bool] = False
    judge_calls: ClassVar[int] = 0

    @property
    def prompt_sha256(self) -> str:
        """``""``: no prompt."""
        return ""

    def prompt_tokens(self, sample: MetricInput) -> int:
        """0: nothing is sent to a model."""
        return 0

    def prompt_tokens_at_most(self, sample: MetricInput) -> int:
        """0: nothing is sent to a model."""
        return 0

    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """0: nothing is sent to a model."""
        return 0


def require_judge(metric: Metric, judge: Judge | None) -> Judge:
    """``judge``, or TypeError when a judged metric was given none (a programming error)."""
    if judge is None:
        raise TypeError(f"{metric.id} needs a judge; the engine passed None")
    return judge


def _adapt(name: str, obj: object) -> type[Metric]:
    if not (isinstance(obj, type) and issubclass(obj, Metric)):
        raise TypeError(f"metric entry point {name!r} is not a Metric subclass: {obj!r}")
    if "@" in name and f"{obj.name}@{obj.version}" != name:  # an older version: NAME@VERSION
        raise ValueError(f"metric entry point {name!r} declares {obj.name}@{obj.version}")
    return obj


metrics: Registry[type[Metric]] = Registry("metric", "agent_eval.metrics", _adapt)
"""Metric classes by name (``goal_accuracy``: the latest version; ``goal_accuracy@1``: an older
one kept available; see :func:`agent_eval.metrics._spec.metric_class`)."""
