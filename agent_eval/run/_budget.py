"""Run budgets: a judge-token and a cost limit, decided before every judge call.

A :class:`Budget` holds the limits of one run (``--max-judge-tokens``, ``--max-cost``) and what
the run has spent and reserved. :class:`BudgetedJudge` wraps the judge *inside* the judge-call
cache, so cached replies cost nothing and never count. Before each request it reserves the
request's planned tokens: the ``o200k_base`` count of its messages plus its ``max_tokens``, or
:data:`~agent_eval.run._plan.OUTPUT_TOKENS_PER_CALL` when unset (the same estimate as the dry-run
plan). When ``spent + reserved + planned`` would cross a limit, the request is not sent:
:class:`~agent_eval.errors.BudgetExhausted` is raised, the budget is marked exhausted, and the
engine stops scheduling: the unit in hand and every unit not yet judged end ``skipped`` with
reason ``budget``, while calls already in flight finish. After a reply, its reservation is
replaced by what it really cost: the reported usage, or the estimate when the endpoint reported
none. A failed request is charged its reported usage (0 when none).

Cost is priced with the run's :class:`~agent_eval._costs.PriceTable`; a ``--max-cost`` for a
model with no known price is refused before the run starts (:meth:`Budget.check_priced`).
``--resume`` continues a stopped run: rows skipped for ``budget`` are scored again, with the new
run's budget.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_eval._costs import PriceTable, usd_text
from agent_eval.errors import BudgetExhausted, ConfigError, JudgeError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.run._plan import OUTPUT_TOKENS_PER_CALL
from agent_eval.run._ratelimit import estimate_tokens

if TYPE_CHECKING:
    from agent_eval.config import ScoreConfig

__all__ = ["BUDGET_SKIP", "Budget", "BudgetedJudge", "budget_line", "planned_tokens"]

BUDGET_SKIP = "budget"
"""``error_type`` of rows skipped because the run's budget would have been crossed."""


def planned_tokens(request: JudgeRequest) -> tuple[int, int]:
    """``(prompt, completion)`` tokens planned for ``request`` (o200k estimate)."""
    prompt = estimate_tokens(request) - (request.max_tokens or 0)
    return prompt, request.max_tokens or OUTPUT_TOKENS_PER_CALL


@dataclass(kw_only=True)
class Budget:
    """The limits of one run and what it spent (shared by every engine of the run).

    Attributes:
        max_tokens: Most judge tokens (prompt + completion) the run may spend; ``None``: no limit.
        max_cost: Most USD the run may spend; ``None``: no limit.
        model: The judge model (for prices).
        prices: The price table.
        spent_tokens / spent_cost: Spent by finished calls (cached replies excluded).
        reserved_tokens / reserved_cost: Planned for the calls in flight.
        exhausted: A call was refused: schedule nothing more.
        refused_calls: Calls not sent because of the budget.

    """

    max_tokens: int | None = None
    max_cost: float | None = None
    model: str = ""
    prices: PriceTable = field(default_factory=PriceTable)
    spent_tokens: int = 0
    spent_cost: float = 0.0
    reserved_tokens: int = 0
    reserved_cost: float = 0.0
    exhausted: bool = False
    refused_calls: int = 0
    _lock: asyncio.Lock | None = field(default=None, repr=False)

    @classmethod
    def from_config(cls, cfg: ScoreConfig, model: str) -> Budget:
        """The budget ``cfg`` sets (``max_judge_tokens``, ``max_cost``, ``[prices]``) for ``model``.

        Raises:
            ConfigError: a limit that is not positive.

        """
        return cls(
            max_tokens=cfg.max_judge_tokens,
            max_cost=cfg.max_cost,
            model=model,
            prices=PriceTable.from_config(cfg.prices),
        )

    def __post_init__(self) -> None:
        if self.max_tokens is not None and self.max_tokens < 1:
            raise ConfigError(f"--max-judge-tokens must be at least 1, got {self.max_tokens}")
        if self.max_cost is not None and self.max_cost <= 0:
            raise ConfigError(f"--max-cost must be a positive USD amount, got {self.max_cost}")

    @property
    def limited(self) -> bool:
        """Whether any limit is set."""
        return self.max_tokens is not None or self.max_cost is not None

    def check_priced(self) -> None:
        """Refuse a cost limit for a model with no price.

        Raises:
            ConfigError: ``max_cost`` is set and ``model`` has no price; names the fix.

        """
        if self.max_cost is not None and self.prices.price(self.model) is None:
            raise ConfigError(
                f"--max-cost needs a price for judge model {self.model!r}, and none is known; "
                f'add [prices."{self.model}"] input/output (USD per 1M tokens) to agent-eval.toml'
            )

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the usage (0 when the model has no price: only ``max_tokens`` applies)."""
        return self.prices.cost(self.model, input_tokens, output_tokens) or 0.0

    def fits(self, tokens: int, cost: float) -> bool:
        """Whether ``tokens`` and ``cost`` more fit beside what is spent and reserved."""
        tokens_left = self.max_tokens is None or (
            self.spent_tokens + self.reserved_tokens + tokens <= self.max_tokens
        )
        cost_left = self.max_cost is None or (
            self.spent_cost + self.reserved_cost + cost <= self.max_cost + 1e-12
        )
        return tokens_left and cost_left

    def plan_fits(self, tokens: int, cost: float | None) -> bool | None:
        """Whether a whole plan fits (``None`` when a cost limit meets an unknown cost)."""
        if self.max_tokens is not None and tokens > self.max_tokens:
            return False
        if self.max_cost is not None:
            if cost is None:
                return None
            if cost > self.max_cost:
                return False
        return True

    def remaining(self) -> str:
        """What is left, in words: ``12,000 of 50,000 tokens, $0.0123 of $0.50``."""
        parts = []
        if self.max_tokens is not None:
            left = max(self.max_tokens - self.spent_tokens, 0)
            parts.append(f"{left:,} of {self.max_tokens:,} judge tokens left")
        if self.max_cost is not None:
            left_usd = max(self.max_cost - self.spent_cost, 0.0)
            parts.append(f"${left_usd:.4f} of ${self.max_cost:.4f} left")
        return ", ".join(parts) or "no limit"

    def lock(self) -> asyncio.Lock:
        """The lock of the current event loop's reservations (made on first use)."""
        if self._lock is None:
            self._lock = asyncio.Lock()
        return self._lock


class BudgetedJudge(Judge):
    """A judge that asks ``inner`` only while the run's :class:`Budget` has room.

    Args:
        inner: The judge to call (rate limits inside, the cache outside).
        budget: The run's budget.

    Raises:
        BudgetExhausted: from :meth:`ask`, when the request would cross a limit (nothing sent).

    """

    def __init__(self, inner: Judge, budget: Budget) -> None:
        self.inner, self.budget = inner, budget
        self.model = inner.model

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Reserve the request's planned tokens, ask ``inner``, then charge what it cost."""
        prompt, completion = planned_tokens(request)
        tokens, cost = prompt + completion, self.budget.cost(prompt, completion)
        async with self.budget.lock():
            if self.budget.exhausted or not self.budget.fits(tokens, cost):
                self.budget.exhausted = True
                self.budget.refused_calls += 1
                raise BudgetExhausted(
                    f"the next judge call (~{tokens:,} tokens planned) would cross the run's "
                    f"budget ({self.budget.remaining()})"
                )
            self.budget.reserved_tokens += tokens
            self.budget.reserved_cost += cost
        try:
            reply = await self.inner.ask(request)
        except JudgeError as exc:
            await self._settle(tokens, cost, exc.input_tokens, exc.output_tokens)
            raise
        except BaseException:
            await self._settle(tokens, cost, 0, 0)
            raise
        known = reply.usage_known  # no usage reported: charge the estimate
        used_in = reply.input_tokens if known else prompt
        used_out = reply.output_tokens if known else completion
        await self._settle(tokens, cost, used_in, used_out)
        return reply

    async def _settle(self, tokens: int, cost: float, used_in: int, used_out: int) -> None:
        async with self.budget.lock():
            self.budget.reserved_tokens -= tokens
            self.budget.reserved_cost -= cost
            self.budget.spent_tokens += used_in + used_out
            self.budget.spent_cost += self.budget.cost(used_in, used_out)

    async def aclose(self) -> None:
        """Close the inner judge."""
        await self.inner.aclose()


def _spent_cost_text(budget: Budget) -> str:
    """What the run spent in USD (:func:`~agent_eval._costs.usd_text`).

    ``n/a (no price for 'model')`` when the judge model has no price: never ``$0`` for an
    unknown price (its calls were counted at 0 USD, only the token limit applied).
    """
    if budget.prices.price(budget.model) is None:
        return f"n/a (no price for {budget.model!r})"
    return usd_text(budget.spent_cost)


def budget_line(budget: Budget, skipped: int, run: str, *, resumable: bool = True) -> str | None:
    """What to print after a run: ``None`` when no limit was reached.

    Otherwise: what stopped, how many units were skipped and how to continue: ``--resume RUN``
    for ``score`` (``resumable``); for ``compare`` and ``stability``, which have no resume, run
    the command again with a new budget (the calls already paid for are answered from the
    judge-call cache unless it was turned off).
    """
    if not budget.exhausted:
        return None
    return (
        f"budget reached: {skipped} unit(s) skipped (budget), {budget.refused_calls} call(s) "
        f"not sent; spent {budget.spent_tokens:,} judge tokens, {_spent_cost_text(budget)} "
        f"({budget.remaining()}); "
        + (
            f"continue with --resume {run} and a new budget"
            if resumable
            else "run the command again with a new budget: the calls already made are answered "
            "from the judge-call cache (unless --no-cache or --refresh-cache)"
        )
    )
