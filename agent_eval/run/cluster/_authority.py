"""One authority per run for the judge's limits and the budget, and the gate workers ask.

:class:`RunAuthority` runs as one Ray actor per run (async: every admission waits in its one
event loop, so no two workers ever see the same free slot). It holds, per judge endpoint, the
requests-per-minute and tokens-per-minute limits (``aiolimiter``'s leaky bucket, as
:class:`~agent_eval.run._ratelimit.RateLimitedJudge` in one process) and the most calls in
flight; and the run's :class:`~agent_eval.run._budget.Budget` (tokens and cost, reserved before
a call, charged after it, as :class:`~agent_eval.run._budget.BudgetedJudge` does in one
process). A request is admitted when a slot for a call in flight is free, then when the budget
has room for its plan beside the plans of the calls in flight (else refused, and the run's
budget is exhausted), then when both rate limits have room.

Every worker's judge asks it through :class:`AuthorityGate` (a
:class:`~agent_eval.run._call_gate.CallGate`) before each request that reaches the model, and
releases its ticket after. The sum of what every worker sends is therefore held to the limits,
and the budget is crossed by at most the calls already in flight when it ran out, as in one
process. A ticket whose worker died is reclaimed after ``lease_s`` seconds (the judge's
timeout times its attempts), so a killed worker does not shrink the run's calls in flight for
good.
"""

from __future__ import annotations

import asyncio
import itertools
import time
from dataclasses import dataclass
from typing import Any

from aiolimiter import AsyncLimiter

from agent_eval.errors import BudgetExhausted, ConfigError
from agent_eval.judges._base import JudgeRequest
from agent_eval.run._budget import Budget, planned_tokens
from agent_eval.run._ratelimit import estimate_tokens
from agent_eval.run.cluster._coalesce import Coalescer

__all__ = ["AuthorityGate", "EndpointLimits", "RunAuthority"]


@dataclass(frozen=True, kw_only=True)
class EndpointLimits:
    """The limits of one judge endpoint for the whole run.

    Attributes:
        requests_per_minute: Most requests started per ``period_s``; ``None``: no limit.
        tokens_per_minute: Most estimated tokens sent per ``period_s``; ``None``: no limit.
        in_flight: Most calls in flight at once over every worker (>= 1).
        period_s: The window of the rate limits, seconds (60; shorter in tests).
        lease_s: Seconds after which an unreleased ticket is reclaimed (its worker died).

    """

    requests_per_minute: float | None = None
    tokens_per_minute: float | None = None
    in_flight: int = 16
    period_s: float = 60.0
    lease_s: float = 600.0

    def __post_init__(self) -> None:
        if self.in_flight < 1:
            raise ConfigError(f"calls in flight must be at least 1, got {self.in_flight}")
        for name, limit in (("--rpm", self.requests_per_minute), ("--tpm", self.tokens_per_minute)):
            if limit is not None and limit <= 0:
                raise ConfigError(f"{name} must be a positive number, got {limit!r}")


class _Endpoint:
    """The buckets and the calls in flight of one endpoint (inside the authority)."""

    def __init__(self, limits: EndpointLimits) -> None:
        self.limits = limits
        rpm, tpm = limits.requests_per_minute, limits.tokens_per_minute
        self.requests = AsyncLimiter(rpm, limits.period_s) if rpm is not None else None
        self.tokens = AsyncLimiter(tpm, limits.period_s) if tpm is not None else None
        self.leases: dict[int, float] = {}  # ticket -> monotonic time admitted
        self.freed = asyncio.Condition()
        self.peak = 0

    def _reclaim(self) -> None:
        oldest = time.monotonic() - self.limits.lease_s
        for ticket in [t for t, since in self.leases.items() if since < oldest]:
            del self.leases[ticket]

    async def enter(self, ticket: int) -> None:
        """Wait for a free slot (reclaiming expired leases) and take it for ``ticket``."""
        async with self.freed:
            while len(self.leases) >= self.limits.in_flight:
                self._reclaim()
                if len(self.leases) < self.limits.in_flight:
                    break
                try:
                    await asyncio.wait_for(self.freed.wait(), timeout=self.limits.lease_s)
                except TimeoutError:
                    continue
            self.leases[ticket] = time.monotonic()
            self.peak = max(self.peak, len(self.leases))

    def rates_free(self, estimate: int) -> bool:
        """Whether both rate limits have room now for one request of ``estimate`` tokens."""
        if self.tokens is not None and not self.tokens.has_capacity(
            min(estimate, self.tokens.max_rate)
        ):
            return False
        return self.requests is None or self.requests.has_capacity()

    async def rates(self, estimate: int) -> None:
        """Wait until both rate limits have room for one request of ``estimate`` tokens."""
        if self.tokens is not None:
            await self.tokens.acquire(min(estimate, self.tokens.max_rate))
        if self.requests is not None:
            await self.requests.acquire()

    async def leave(self, ticket: int) -> None:
        """Free ``ticket``'s slot (nothing when it was reclaimed already)."""
        async with self.freed:
            if self.leases.pop(ticket, None) is not None:
                self.freed.notify()


class RunAuthority:
    """The run's limits per endpoint and its budget (the body of one Ray actor per run).

    Args:
        limits: The limits every endpoint of the run gets.
        budget: The run's budget (a copy: this one is the authority's).

    """

    def __init__(self, limits: EndpointLimits, budget: Budget) -> None:
        self.limits, self.budget = limits, budget
        self._endpoints: dict[str, _Endpoint] = {}
        self._tickets = itertools.count(1)
        self._reserved: dict[int, tuple[str, int, float]] = {}  # ticket -> endpoint, plan
        self.admitted = 0

    def _endpoint(self, name: str) -> _Endpoint:
        if name not in self._endpoints:
            self._endpoints[name] = _Endpoint(self.limits)
        return self._endpoints[name]

    async def admit(
        self, endpoint: str, estimate: int, prompt: int, completion: int
    ) -> tuple[int, str | None]:
        """Wait for a slot of a call in flight, reserve the call's plan, wait for the rates.

        The budget is checked once the call holds a slot, so what is reserved is at most the
        plans of the calls in flight (as in one process, whose calls in flight are its
        ``--concurrency``).

        Args:
            endpoint: The judge endpoint (bare) the call goes to.
            estimate: Its tokens against a tokens-per-minute limit.
            prompt: Its planned prompt tokens (the budget's plan).
            completion: Its planned completion tokens.

        Returns:
            ``(ticket, None)`` when admitted; ``(0, why)`` when the budget refused it.

        """
        ticket, slot = next(self._tickets), self._endpoint(endpoint)
        await slot.enter(ticket)
        budget = self.budget
        tokens, cost = prompt + completion, budget.cost(prompt, completion)
        if budget.exhausted or not budget.fits(tokens, cost):
            budget.exhausted = True
            budget.refused_calls += 1
            await slot.leave(ticket)
            return 0, (
                f"the next judge call (~{tokens:,} tokens planned) would cross the run's "
                f"budget ({budget.remaining()})"
            )
        budget.reserved_tokens += tokens
        budget.reserved_cost += cost
        self._reserved[ticket] = (endpoint, tokens, cost)
        try:
            await slot.rates(estimate)
        except BaseException:
            self._unreserve(ticket)
            await slot.leave(ticket)
            raise
        self.admitted += 1
        return ticket, None

    async def admit_many(
        self, endpoint: str, requests: list[tuple[int, int, int]]
    ) -> list[tuple[int, str | None]]:
        """:meth:`admit` for a worker's waiting requests: the first waits, the others don't.

        Args:
            endpoint: The judge endpoint (bare) the calls go to.
            requests: ``(estimate, prompt, completion)`` per request, in the order asked.

        Returns:
            The answers of the first ``n >= 1`` requests, in order (as :meth:`admit`): the
            first when it is admitted (or refused), then each next one while a slot is free
            and both rate limits have room at once. The worker asks again for the rest.

        """
        answers = [await self.admit(endpoint, *requests[0])]
        slot = self._endpoint(endpoint)
        for estimate, prompt, completion in requests[1:]:
            if len(slot.leases) >= slot.limits.in_flight or not slot.rates_free(estimate):
                break
            answers.append(await self.admit(endpoint, estimate, prompt, completion))
        return answers

    async def release_many(self, calls: list[tuple[int, int, int]]) -> list[None]:
        """:meth:`release` for each ``(ticket, input_tokens, output_tokens)``."""
        for ticket, input_tokens, output_tokens in calls:
            await self.release(ticket, input_tokens, output_tokens)
        return [None] * len(calls)

    def _unreserve(self, ticket: int) -> str | None:
        endpoint, tokens, cost = self._reserved.pop(ticket, ("", 0, 0.0))
        self.budget.reserved_tokens -= tokens
        self.budget.reserved_cost -= cost
        return endpoint or None

    async def release(self, ticket: int, input_tokens: int, output_tokens: int) -> None:
        """The call of ``ticket`` is over: free its slot, charge what it used."""
        endpoint = self._unreserve(ticket)
        self.budget.spent_tokens += input_tokens + output_tokens
        self.budget.spent_cost += self.budget.cost(input_tokens, output_tokens)
        if endpoint is not None:
            await self._endpoint(endpoint).leave(ticket)

    def state(self) -> dict[str, Any]:
        """What the run spent and how the limits held (for the driver's summary and tests)."""
        budget = self.budget
        return {
            "spent_tokens": budget.spent_tokens,
            "spent_cost": budget.spent_cost,
            "exhausted": budget.exhausted,
            "refused_calls": budget.refused_calls,
            "admitted": self.admitted,
            "peak_in_flight": max((e.peak for e in self._endpoints.values()), default=0),
        }


class AuthorityGate:
    """A worker's :class:`~agent_eval.run._call_gate.CallGate`: asks the run's authority actor.

    The requests of a worker waiting at once go to the authority together
    (:class:`~agent_eval.run.cluster._coalesce.Coalescer`: :meth:`RunAuthority.admit_many`,
    :meth:`RunAuthority.release_many`), one actor call at a time each way, so the authority is
    asked about once per batch of calls in flight rather than twice per call.

    Args:
        authority: The handle of the run's :class:`RunAuthority` actor.
        endpoint: The judge endpoint (bare) this worker's judge asks.
        budget: The worker's mirror of the budget: marked exhausted when a call is refused,
            so its engines stop scheduling units (they are skipped ``budget``).

    """

    def __init__(self, authority: Any, endpoint: str, budget: Budget) -> None:
        self.authority, self.endpoint, self.budget = authority, endpoint, budget
        self.admissions: Coalescer[tuple[int, int, int], tuple[int, str | None]] = Coalescer(
            self._admit, orphan=self._give_back
        )
        self.releases: Coalescer[tuple[int, int, int], None] = Coalescer(self._release)
        self._orphans: set[asyncio.Task[None]] = set()

    async def _admit(self, requests: list[tuple[int, int, int]]) -> list[tuple[int, str | None]]:
        answers: list[tuple[int, str | None]] = await self.authority.admit_many.remote(
            self.endpoint, requests
        )
        return answers

    async def _release(self, calls: list[tuple[int, int, int]]) -> list[None]:
        done: list[None] = await self.authority.release_many.remote(calls)
        return done

    def _give_back(self, answer: tuple[int, str | None]) -> None:
        """Release the ticket of a caller that stopped waiting (nothing was sent)."""
        ticket, _ = answer
        if ticket:
            task = asyncio.get_running_loop().create_task(self.releases((ticket, 0, 0)))
            self._orphans.add(task)
            task.add_done_callback(self._orphans.discard)

    async def admit(self, request: JudgeRequest) -> object:
        """Ask the authority; raise :class:`BudgetExhausted` when it refuses."""
        prompt, completion = planned_tokens(request)
        ticket, refused = await self.admissions((estimate_tokens(request), prompt, completion))
        if refused is not None:
            self.budget.exhausted = True
            self.budget.refused_calls += 1
            raise BudgetExhausted(refused)
        return ticket

    async def release(self, ticket: object, input_tokens: int, output_tokens: int) -> None:
        """Tell the authority what the call used."""
        if not isinstance(ticket, int):
            raise TypeError(f"not a ticket of this gate: {ticket!r}")
        await self.releases((ticket, input_tokens, output_tokens))
