"""The metric protocol: :class:`Metric`, what it is given and returns, and the registry.

A metric scores **units** of a conversation (:mod:`agent_eval.metrics.units`): the whole
conversation (goal accuracy) or each turn's answer with the context it had (claim-level and RAG
metrics). For each unit it gets a :class:`MetricInput` (the rendering when it reads one, the
unit, the trace, a reference) and returns a :class:`MetricOutcome`: a score in [0, 1], the typed
verdict when it has one, and its atoms when the score is built from atoms (the score is then
computed from them with :func:`~agent_eval.result.score_from_atoms`, never read from a model).
It may instead raise :class:`~agent_eval.errors.JudgeError`, or answer :meth:`Metric.skip_reason`
before any call. It never builds result rows itself: the engine turns either into a
:class:`~agent_eval.result.MetricResult`. Judge usage is counted on the :class:`CallTally` the
engine passes in, so a failure in a later stage still reports what the earlier stages spent.

Judge-free metrics (``requires_judge = False``) get ``judge=None``; metrics that read no
rendering (``uses_formatter = False``) get ``conversation == ""`` and their rows record the
formatter as ``"none"``. Identity parameters are a pydantic model (``Params``) and part of the
id: ``faithfulness@1[per_statement=true]``.
"""

from __future__ import annotations

import asyncio
import time
from abc import ABC, abstractmethod
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any, ClassVar

from pydantic import BaseModel, ConfigDict, JsonValue

from agent_eval.errors import JudgeError
from agent_eval.formatting.identity import format_identity
from agent_eval.judges import inflight
from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest
from agent_eval.metrics.units import Unit, UnitKind, answer_units, conversation_unit
from agent_eval.plugins import Registry
from agent_eval.result import Atom, score_from_atoms
from agent_eval.tokens import count_tokens
from agent_eval.trace import AgentTrace

__all__ = [
    "CallTally",
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


def estimate_call(request: JudgeRequest | None, reply_text: str, attempts: int) -> tuple[int, int]:
    """``(prompt, completion)`` tokens of a judge call whose usage was not reported (estimate).

    ``o200k_base`` tokens of the request's message contents and of the reply text, each times
    ``attempts`` (at least 1); chat framing and re-ask messages are not counted, so it is a
    floor rather than a bound. ``request`` ``None`` estimates the prompt as 0.
    """
    times = max(attempts, 1)
    prompt = (
        0
        if request is None
        else sum(count_tokens(str(message.get("content") or "")) for message in request.messages)
    )
    return prompt * times, count_tokens(reply_text) * times


@dataclass
class StageUsage:
    """Judge usage of one stage of a metric (``decompose``, ``verify``...) on one row.

    ``usage_known`` is False when a call of the stage had no usage report; the estimated
    counts then hold the stage's share of the row's estimate (the same sum as
    :class:`CallTally`'s, over the stage's calls), so the stages add up to the row.
    """

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0
    cached_calls: int = 0
    usage_known: bool = True
    estimated_input_tokens: int = 0
    estimated_output_tokens: int = 0

    def as_json(self) -> dict[str, JsonValue]:
        """The counts as a JSON object (what rows store under ``details["stages"]``).

        ``estimated_input_tokens`` / ``estimated_output_tokens`` are there only when
        ``usage_known`` is False (as on :class:`~agent_eval.result.MetricResult`).
        """
        counts: dict[str, JsonValue] = {
            "calls": self.calls,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "attempts": self.attempts,
            "cached_calls": self.cached_calls,
            "usage_known": self.usage_known,
        }
        if not self.usage_known:
            counts["estimated_input_tokens"] = self.estimated_input_tokens
            counts["estimated_output_tokens"] = self.estimated_output_tokens
        return counts

    def count(self, estimate: tuple[int, int], known: bool) -> None:
        """Add one call's estimate (its reported tokens when ``known``) to the stage's."""
        self.usage_known = self.usage_known and known
        self.estimated_input_tokens += estimate[0]
        self.estimated_output_tokens += estimate[1]

    def add_call(
        self,
        tokens: tuple[int, int],
        attempts: int,
        estimate: tuple[int, int],
        known: bool,
        *,
        cached: bool = False,
    ) -> None:
        """Add one call: its reported ``(input, output)`` tokens, requests sent and estimate."""
        self.calls += 1
        self.input_tokens += tokens[0]
        self.output_tokens += tokens[1]
        self.attempts += attempts
        self.cached_calls += int(cached)
        self.count(estimate, known)


@dataclass
class CallTally:
    """Judge usage for one result row, summed over every call and retry (mutable).

    Calls asked with a ``stage`` name are also counted per stage (:attr:`stages`); the engine
    stores those counts on the row as ``details["stages"]``.

    A call whose usage the endpoint did not report (``usage_known=False`` on the reply or
    error) makes the row's usage unknown; :attr:`estimated_input_tokens` /
    :attr:`estimated_output_tokens` then add, for that call, the ``o200k_base`` count of the
    request's messages and of the reply text, each times the call's attempts (the same
    tokenizer the dry-run plan and the budget use; :func:`estimate_call`). A call answered from
    the judge-call cache costs nothing in this run and never makes the usage unknown.

    A call cancelled on the way (an interrupted run) is counted too, from what the judge had
    sent (:mod:`agent_eval.judges.inflight`): its requests, the tokens of the replies read,
    and in :attr:`unanswered` the requests whose reply was never read (usage unknown).
    """

    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    calls: int = 0
    cached_calls: int = 0
    usage_known: bool = True
    estimated_input_tokens: int = 0
    estimated_output_tokens: int = 0
    details: dict[str, Any] = field(default_factory=dict)
    """Intermediate outputs of the stages that succeeded (kept on an error row)."""
    stages: dict[str, StageUsage] = field(default_factory=dict)
    """Usage by stage name, in the order the stages first ran."""
    unanswered: int = 0
    """Requests of cancelled calls whose reply was never read (their tokens are estimated)."""

    def _count(
        self,
        request: JudgeRequest | None,
        reported: tuple[int, int],
        attempts: int,
        known: bool,
        reply_text: str,
    ) -> tuple[int, int]:
        """Count one call; returns its estimate (the reported tokens when ``known``)."""
        self.input_tokens += reported[0]
        self.output_tokens += reported[1]
        self.attempts += attempts
        self.calls += 1
        if known:
            estimate = reported
        else:
            self.usage_known = False
            guess = estimate_call(request, reply_text, attempts)
            estimate = (max(reported[0], guess[0]), max(reported[1], guess[1]))
        self.estimated_input_tokens += estimate[0]
        self.estimated_output_tokens += estimate[1]
        return estimate

    def add_reply(
        self,
        reply: JudgeReply[Any],
        stage: str | None = None,
        request: JudgeRequest | None = None,
    ) -> None:
        """Count a successful call (also under ``stage`` when given).

        ``request`` is what was asked; it is needed only to estimate a reply without usage.
        """
        known = reply.usage_known or reply.cached
        estimate = self._count(
            request, (reply.input_tokens, reply.output_tokens), reply.attempts, known,
            reply.raw_reply,
        )  # fmt: skip
        self.latency_ms += reply.latency_ms
        self.cached_calls += int(reply.cached)
        if stage is not None:
            self.stages.setdefault(stage, StageUsage()).add_call(
                (reply.input_tokens, reply.output_tokens), reply.attempts, estimate, known,
                cached=reply.cached,
            )  # fmt: skip

    def add_error(
        self,
        error: JudgeError,
        latency_ms: float,
        stage: str | None = None,
        request: JudgeRequest | None = None,
    ) -> None:
        """Count a failed call (its attempts and the usage it reported)."""
        estimate = self._count(
            request, (error.input_tokens, error.output_tokens), error.attempts,
            error.usage_known, error.raw_reply or "",
        )  # fmt: skip
        self.latency_ms += latency_ms
        if stage is not None:
            self.stages.setdefault(stage, StageUsage()).add_call(
                (error.input_tokens, error.output_tokens), error.attempts, estimate,
                error.usage_known,
            )  # fmt: skip

    def add_cancelled(
        self,
        usage: inflight.CancelledUsage,
        latency_ms: float,
        stage: str | None = None,
        request: JudgeRequest | None = None,
    ) -> None:
        """Count a call cancelled after it sent ``usage.requests`` request(s).

        Its usage is unknown when a reply was never read (``usage.unanswered``): the estimate
        then counts the request's prompt for every request (:func:`estimate_call`).
        """
        known = not usage.unanswered
        reported = (usage.input_tokens, usage.output_tokens)
        estimate = self._count(request, reported, usage.requests, known, "")
        self.latency_ms += latency_ms
        self.unanswered += usage.unanswered
        if stage is not None:
            self.stages.setdefault(stage, StageUsage()).add_call(
                reported, usage.requests, estimate, known
            )

    async def ask(
        self, judge: Judge, request: JudgeRequest, stage: str | None = None
    ) -> JudgeReply[Any]:
        """``judge.ask(request)``, counted here (and under ``stage``) whether it succeeds or not.

        Also when it is cancelled: what it had sent is counted (:meth:`add_cancelled`).
        """
        start = time.perf_counter()
        with inflight.watch() as cancelled:
            try:
                reply = await judge.ask(request)
            except JudgeError as exc:
                self.add_error(exc, (time.perf_counter() - start) * 1000, stage, request)
                raise
            except asyncio.CancelledError:
                for usage in cancelled:
                    self.add_cancelled(usage, (time.perf_counter() - start) * 1000, stage, request)
                raise
        self.add_reply(reply, stage, request)
        return reply

    def usage_fields(self) -> dict[str, Any]:
        """The row's usage fields of :class:`~agent_eval.result.MetricResult`.

        Tokens, requests, calls, cached calls, whether the usage is known and, when it is
        not, the estimate.
        """
        return {
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "attempts": self.attempts,
            "judge_calls": self.calls,
            "cached_calls": self.cached_calls,
            "usage_known": self.usage_known,
            "estimated_input_tokens": None if self.usage_known else self.estimated_input_tokens,
            "estimated_output_tokens": None if self.usage_known else self.estimated_output_tokens,
        }

    def stage_details(self) -> dict[str, JsonValue]:
        """``{"stages": {name: counts}}`` when any call named a stage, else ``{}``."""
        if not self.stages:
            return {}
        return {"stages": {name: usage.as_json() for name, usage in self.stages.items()}}

    def partial_details(self) -> dict[str, Any]:
        """What a unit stopped before its outcome keeps: :attr:`details`, :meth:`stage_details`."""
        return {**self.details, **self.stage_details()}


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
    @abstractmethod
    def prompt_sha256(self) -> str:
        """sha256 hex over the prompt templates (names and bytes), 64 characters."""

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

    @abstractmethod
    def prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens (o200k) of the largest call for ``sample``.

        The engine compares it with the judge's context window to skip conversations that would
        not fit (``context_overflow``) rather than send them.
        """

    def prompt_tokens_at_most(self, sample: MetricInput) -> int | None:
        """An upper bound of :meth:`prompt_tokens` computed without the tokenizer, or ``None``.

        The engine skips counting (and loading the encoding) when the bound already fits under
        ``max_context_tokens``: the skip decision is the same as with the exact count. Built-in
        metrics bound every counted text by its UTF-8 bytes
        (:func:`~agent_eval.tokens.tokens_at_most`); the default, ``None``, always counts.
        """
        return None

    @abstractmethod
    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens of all of ``sample``'s calls together (dry-run plans)."""

    @abstractmethod
    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Score ``sample`` with ``judge`` (``None`` for judge-free metrics), counting calls.

        Raises:
            JudgeError: a judge call failed after its retries (the engine records an error row).

        """


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
one kept available; see :func:`agent_eval.metrics.spec.metric_class`)."""
