"""The run's authority (rate limits, calls in flight, budget) and the gate workers ask.

The authority is a plain class (Ray makes it an actor); here it runs in the test's event loop,
and the gate's actor handle is a stand-in whose ``.remote`` calls are awaited as Ray's are.
"""

from __future__ import annotations

import asyncio
from typing import Any

import pytest
from pydantic import BaseModel

from agent_eval.errors import BudgetExhausted
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.run._budget import Budget
from agent_eval.run._call_gate import GatedJudge
from agent_eval.run.cluster._authority import AuthorityGate, EndpointLimits, RunAuthority


class _Verdict(BaseModel):
    verdict: str


REQUEST = JudgeRequest(messages=({"role": "user", "content": "hello"},), response_model=_Verdict,
                       max_tokens=100)  # fmt: skip


class _Handle:
    """``handle.method.remote(...)`` awaited like a Ray actor's (the call runs in this loop)."""

    def __init__(self, target: object) -> None:
        self._target = target

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._target, name)

        class _Remote:
            @staticmethod
            def remote(*args: Any) -> Any:
                return method(*args)

        return _Remote


class _SlowJudge(Judge):
    model = "m"

    def __init__(self) -> None:
        self.in_flight = self.peak = 0

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        self.in_flight += 1
        self.peak = max(self.peak, self.in_flight)
        await asyncio.sleep(0.01)
        self.in_flight -= 1
        return JudgeReply(_Verdict(verdict="1"), "m", 40, 10, 1.0, 1, "{}")


async def test_calls_in_flight_over_every_gate_never_pass_the_limit() -> None:
    authority = RunAuthority(EndpointLimits(in_flight=3), Budget())
    judge = _SlowJudge()
    workers = [
        GatedJudge(judge, AuthorityGate(_Handle(authority), "e", Budget())) for _ in range(4)
    ]
    await asyncio.gather(*(workers[i % 4].ask(REQUEST) for i in range(24)))
    assert judge.peak == 3 and authority.state()["peak_in_flight"] == 3
    assert authority.state()["admitted"] == 24 and authority.state()["spent_tokens"] == 24 * 50


async def test_the_budget_refuses_what_would_cross_it_beside_the_calls_in_flight() -> None:
    # each call plans ~101 tokens (1 of content + max_tokens 100) and spends 50: two fit
    authority = RunAuthority(EndpointLimits(in_flight=8), Budget(max_tokens=250))
    mirror = Budget()
    judge = GatedJudge(_SlowJudge(), AuthorityGate(_Handle(authority), "e", mirror))
    results = await asyncio.gather(*(judge.ask(REQUEST) for _ in range(4)), return_exceptions=True)
    refused = [r for r in results if isinstance(r, BudgetExhausted)]
    assert len(refused) == 2 and mirror.exhausted and mirror.refused_calls == 2
    state = authority.state()
    assert state["exhausted"] and state["refused_calls"] == 2 and state["spent_tokens"] == 100


async def test_a_ticket_whose_worker_died_is_reclaimed_after_its_lease() -> None:
    authority = RunAuthority(EndpointLimits(in_flight=1, lease_s=0.05), Budget())
    first, _ = await authority.admit("e", 10, 5, 5)  # never released: its worker died
    assert first
    second, refused = await asyncio.wait_for(authority.admit("e", 10, 5, 5), timeout=5)
    assert second and refused is None


def test_limits_must_be_positive() -> None:
    from agent_eval.errors import ConfigError

    with pytest.raises(ConfigError, match="--rpm"):
        EndpointLimits(requests_per_minute=0)
    with pytest.raises(ConfigError, match="in flight"):
        EndpointLimits(in_flight=0)


async def test_a_worker_asks_once_for_the_calls_waiting_together() -> None:
    # 32 calls at once through one gate: they go in one admit_many and one release_many
    # (they end together), not 64 actor calls
    authority = RunAuthority(EndpointLimits(in_flight=64), Budget())
    gate = AuthorityGate(_Handle(authority), "e", Budget())
    judge = _SlowJudge()
    await asyncio.gather(*(GatedJudge(judge, gate).ask(REQUEST) for _ in range(32)))
    assert authority.state()["admitted"] == 32 and authority.state()["spent_tokens"] == 32 * 50
    assert gate.admissions.batches == 1 and gate.releases.batches <= 2


async def test_admit_many_admits_at_once_only_what_the_slots_and_rates_have_room_for() -> None:
    authority = RunAuthority(EndpointLimits(in_flight=2), Budget())
    answers = await authority.admit_many("e", [(10, 5, 5)] * 3)
    assert [refused for _, refused in answers] == [None, None]  # the third waits: asked again
    limited = RunAuthority(EndpointLimits(in_flight=8, requests_per_minute=2), Budget())
    assert len(await limited.admit_many("e", [(10, 5, 5)] * 3)) == 2  # rpm 2: no room now
    await authority.release_many([(ticket, 5, 5) for ticket, _ in answers])
    assert authority.state()["spent_tokens"] == 20
    assert len(await authority.admit_many("e", [(10, 5, 5)] * 3)) == 2  # the slots came back


async def test_admit_many_answers_refusals_once_the_budget_is_spent() -> None:
    authority = RunAuthority(EndpointLimits(in_flight=8), Budget(max_tokens=25))
    answers = await authority.admit_many("e", [(10, 5, 5)] * 4)  # 10 planned each: two fit
    assert [ticket > 0 for ticket, _ in answers] == [True, True, False, False]
    assert all("budget" in (why or "") for _, why in answers[2:])
