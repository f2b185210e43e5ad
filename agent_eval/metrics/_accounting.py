"""Judge-call accounting: what a unit's judge calls spent, counted by a judge wrapper.

:class:`CallTally` sums one result row's judge usage over every call and retry (tokens,
requests, latency, cache hits, per stage); :class:`CountingJudge` is the judge the engine hands
a metric: it counts each of its calls on the unit's tally itself, so a metric needs no
accounting code (:meth:`CallTally.ask` on it counts once). :func:`estimate_call` estimates a
call whose usage the endpoint did not report. Moved out of :mod:`agent_eval.metrics._base` (which
re-exports these names), so that the metric protocol file holds the protocol only.
"""

from __future__ import annotations

import asyncio
import time
from dataclasses import dataclass, field
from typing import Any

from pydantic import JsonValue

from agent_eval._tokens import count_tokens
from agent_eval.errors import JudgeError
from agent_eval.judges import _inflight as inflight
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest

__all__ = ["CallTally", "CountingJudge", "StageUsage", "estimate_call"]


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
        ``usage_known`` is False (as on :class:`~agent_eval._result.MetricResult`).
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
    sent (:mod:`agent_eval.judges._inflight`): its requests, the tokens of the replies read,
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
        if isinstance(judge, CountingJudge) and judge.tally is self:
            judge = judge.inner  # the wrapper counts on this tally: count here, once
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
        """The row's usage fields of :class:`~agent_eval._result.MetricResult`.

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


class CountingJudge(Judge):
    """A judge that counts each of its calls on ``tally`` (:meth:`CallTally.ask`).

    The engine gives every unit's :meth:`~agent_eval.metrics._base.Metric.evaluate` its judge
    wrapped in one of these, on the unit's tally: a metric that just calls ``judge.ask`` has
    its usage counted, and one that counts with ``tally.ask(judge, ...)`` counts each call
    once (the tally unwraps its own counting judge).

    Args:
        judge: The judge calls go to.
        tally: Where they are counted.

    """

    def __init__(self, judge: Judge, tally: CallTally) -> None:
        self.inner, self.tally, self.model = judge, tally, judge.model

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """``judge.ask(request)``, counted on the tally whether it succeeds or not."""
        return await self.tally.ask(self.inner, request)

    async def aclose(self) -> None:
        """Close the wrapped judge."""
        await self.inner.aclose()
