"""A gate every judge call passes: the seam for limits and a budget held outside the process.

One process keeps its rate limits (:class:`~agent_eval.run._ratelimit.RateLimitedJudge`) and its
budget (:class:`~agent_eval.run._budget.BudgetedJudge`) in itself. A run spread over several
processes needs one authority for them (DESIGN, Scale-out): each worker's judge asks a
:class:`CallGate` before every request that reaches the model and tells it afterwards what the
request cost. :class:`GatedJudge` is that judge; it sits where the rate limits and the budget
sit in :func:`~agent_eval.run._judge_stack.wrap_judge` (inside the judge-call cache, so a cached
reply never waits and never counts). The gate of a Ray run is
:class:`~agent_eval.run.cluster._authority.AuthorityGate`.

The tokens planned for a request and those charged after it are the budget's
(:func:`~agent_eval.run._budget.planned_tokens`; the reported usage, or the plan when the
endpoint reported none; a failed request is charged its reported usage).
"""

from __future__ import annotations

from typing import Any, Protocol

from agent_eval.errors import JudgeError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.run._budget import planned_tokens

__all__ = ["CallGate", "GatedJudge"]


class CallGate(Protocol):
    """Admits judge calls within limits held elsewhere, and is told what each one cost."""

    async def admit(self, request: JudgeRequest) -> object:
        """Wait until ``request`` may be sent; returns a ticket for :meth:`release`.

        Raises:
            BudgetExhausted: the request would cross the run's budget (nothing is sent).

        """
        ...

    async def release(self, ticket: object, input_tokens: int, output_tokens: int) -> None:
        """The call of ``ticket`` is over and used these tokens (prompt, completion)."""
        ...


class GatedJudge(Judge):
    """A judge that asks ``gate`` before each request to ``inner`` and releases it after.

    Args:
        inner: The judge to call.
        gate: The run's gate (rate limits, calls in flight, budget).

    Raises:
        BudgetExhausted: from :meth:`ask`, when the gate refuses (nothing sent).

    """

    def __init__(self, inner: Judge, gate: CallGate) -> None:
        self.inner, self.gate = inner, gate
        self.model = inner.model

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Be admitted, ask ``inner``, then release with what the call used."""
        ticket = await self.gate.admit(request)
        try:
            reply = await self.inner.ask(request)
        except JudgeError as exc:
            await self.gate.release(ticket, exc.input_tokens, exc.output_tokens)
            raise
        except BaseException:
            await self.gate.release(ticket, 0, 0)
            raise
        if reply.usage_known:
            await self.gate.release(ticket, reply.input_tokens, reply.output_tokens)
        else:  # no usage reported: charge the plan
            await self.gate.release(ticket, *planned_tokens(request))
        return reply

    async def aclose(self) -> None:
        """Close the inner judge."""
        await self.inner.aclose()
