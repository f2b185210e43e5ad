"""The metric protocol: :class:`Metric`, what it is given and returns, and the registry.

A metric turns one formatted conversation (and, optionally, a reference) into one binary
verdict through one or more judge calls. It never builds result rows itself: it returns a
:class:`MetricOutcome` or raises a :class:`~agent_eval.errors.JudgeError`, and the engine turns
either into a :class:`~agent_eval.result.MetricResult`. Judge usage is counted on the
:class:`CallTally` the engine passes in, so a failure in a later stage still reports what the
earlier stages spent.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from dataclasses import dataclass, field
from typing import Any, ClassVar

from agent_eval.errors import JudgeError
from agent_eval.judges.base import Judge, JudgeReply, JudgeRequest
from agent_eval.plugins import Registry
from agent_eval.result import Verdict

__all__ = ["CallTally", "Metric", "MetricInput", "MetricOutcome", "metrics"]


@dataclass(frozen=True, kw_only=True)
class MetricInput:
    """What a metric scores.

    Attributes:
        conversation: The conversation as rendered by the run's formatter.
        reference: The reference goal, or ``None`` for the reference-free variant.

    """

    conversation: str
    reference: str | None = None


@dataclass(frozen=True, kw_only=True)
class MetricOutcome:
    """A metric's verdict and the intermediate outputs that explain it.

    Attributes:
        verdict: ``"0"`` or ``"1"``.
        reason: The judge's reason.
        details: Intermediate outputs by result field name (e.g. ``user_goal``, ``end_state``).

    """

    verdict: Verdict
    reason: str
    details: dict[str, str] = field(default_factory=dict)


@dataclass
class CallTally:
    """Judge usage for one result row, summed over every call and retry (mutable)."""

    input_tokens: int = 0
    output_tokens: int = 0
    latency_ms: float = 0.0
    attempts: int = 0
    cached_calls: int = 0
    details: dict[str, str] = field(default_factory=dict)
    """Intermediate outputs of the stages that succeeded (kept on an error row)."""

    def add_reply(self, reply: JudgeReply[Any]) -> None:
        """Count a successful call."""
        self.input_tokens += reply.input_tokens
        self.output_tokens += reply.output_tokens
        self.latency_ms += reply.latency_ms
        self.attempts += reply.attempts
        self.cached_calls += int(reply.cached)

    def add_error(self, error: JudgeError, latency_ms: float) -> None:
        """Count a failed call (its attempts and the usage it reported)."""
        self.input_tokens += error.input_tokens
        self.output_tokens += error.output_tokens
        self.latency_ms += latency_ms
        self.attempts += error.attempts

    async def ask(self, judge: Judge, request: JudgeRequest) -> JudgeReply[Any]:
        """``judge.ask(request)``, counted here whether it succeeds or raises."""
        start = time.perf_counter()
        try:
            reply = await judge.ask(request)
        except JudgeError as exc:
            self.add_error(exc, (time.perf_counter() - start) * 1000)
            raise
        self.add_reply(reply)
        return reply


class Metric(ABC):
    """A named, versioned procedure from one formatted conversation to one verdict.

    Subclasses set ``name`` and ``version``; ``id`` is ``name@version`` (``goal_accuracy@1``).
    ``prompt_sha256`` identifies the prompt templates and is stored in every result.
    """

    name: ClassVar[str]
    version: ClassVar[int]
    judge_calls: ClassVar[int] = 1
    """Judge calls per conversation when nothing fails (for plans and cost estimates)."""

    @property
    def id(self) -> str:
        """``name@version``."""
        return f"{self.name}@{self.version}"

    @property
    @abstractmethod
    def prompt_sha256(self) -> str:
        """sha256 hex over the prompt templates (names and bytes), 64 characters."""

    @property
    def uses_reference(self) -> bool:
        """Whether this metric (as configured) compares against a reference."""
        return False

    def skip_reason(self, sample: MetricInput) -> str | None:
        """A reason to skip ``sample`` without calling the judge (e.g. ``missing_reference``)."""
        return None

    @abstractmethod
    def prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens (o200k) of the largest call for ``sample``.

        The engine compares it with the judge's context window to skip conversations that would
        not fit (``context_overflow``) rather than send them.
        """

    @abstractmethod
    def planned_prompt_tokens(self, sample: MetricInput) -> int:
        """Estimated prompt tokens of all of ``sample``'s calls together (dry-run plans)."""

    @abstractmethod
    async def evaluate(self, sample: MetricInput, judge: Judge, tally: CallTally) -> MetricOutcome:
        """Score ``sample`` with ``judge``, counting every call on ``tally``.

        Raises:
            JudgeError: a judge call failed after its retries (the engine records an error row).

        """


def _adapt(name: str, obj: object) -> type[Metric]:
    if not (isinstance(obj, type) and issubclass(obj, Metric)):
        raise TypeError(f"metric entry point {name!r} is not a Metric subclass: {obj!r}")
    return obj


metrics: Registry[type[Metric]] = Registry("metric", "agent_eval.metrics", _adapt)
"""Metric classes by name (``goal_accuracy``, third-party)."""
