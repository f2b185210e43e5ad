"""What a scoring run would do, without calling a judge: :class:`RunPlan` (``--dry-run``).

For one metric and formatter: how many conversations there are, how many would be sent and
how many skipped (and why), the judge calls, the prompt tokens (o200k estimate of every call,
later stages estimated with the reference or empty outputs), and an estimated cost from the
price table (``[prices]``, then genai-prices: :mod:`agent_eval._costs`) when the judge model has
a known price. With no judge configured, the cost is estimated at the default judge's price
and says so. Completion tokens are estimated at
:data:`OUTPUT_TOKENS_PER_CALL` per call: a verdict with a short reason.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_eval._costs import PriceTable, usd_text
from agent_eval._trace import AgentTrace
from agent_eval.formatting._base import Formatter
from agent_eval.metrics._base import Metric
from agent_eval.run._outcomes import build_samples, skip_fields
from agent_eval.run._rendering import RenderCache

if TYPE_CHECKING:
    from rich.table import Table

__all__ = ["OUTPUT_TOKENS_PER_CALL", "RunPlan", "plan_run"]

OUTPUT_TOKENS_PER_CALL = 80
"""Estimated completion tokens per judge call (a short reason plus the structured fields)."""


@dataclass(kw_only=True)
class RunPlan:
    """The plan of one metric x formatter over a set of conversations.

    Attributes:
        metric / formatter: Identities (``goal_accuracy@1``, ``ragas-pretty@1``).
        judge_model: The judge model, ``None`` when none is configured.
        conversations: Conversations in the input.
        units: Units of those conversations (the conversations themselves, or their turns'
            answers for answer metrics).
        to_score: Units that would be scored (sent to the judge, for judged metrics).
        skipped: Units that would be skipped, by reason.
        judge_calls: Judge calls when nothing fails (``to_score`` x calls per unit; 0 for
            judge-free metrics).
        prompt_tokens: Estimated prompt tokens of those calls (o200k).
        output_tokens: Estimated completion tokens (:data:`OUTPUT_TOKENS_PER_CALL` per call).
        cost_usd: Estimated USD, ``None`` when the model's price is unknown or no judge is set.
        judge_free: The metric calls no judge.
        priced_as: The model the cost was estimated for when no judge is configured (the
            default judge), ``None`` otherwise.

    """

    metric: str
    formatter: str
    judge_model: str | None
    conversations: int = 0
    units: int = 0
    to_score: int = 0
    skipped: Counter[str] = field(default_factory=Counter)
    judge_calls: int = 0
    prompt_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = None
    judge_free: bool = False
    priced_as: str | None = None

    def table(self) -> Table:
        """The plan as a two-column rich table."""
        from rich.markup import escape  # rich only where the plan is printed
        from rich.table import Table

        table = Table(
            title="scoring plan (no judge called)", show_header=False, title_justify="left"
        )
        table.add_column("what", style="bold")
        table.add_column("value")
        skipped = ", ".join(f"{k}: {v}" for k, v in sorted(self.skipped.items()))
        cost = "n/a (no price for this judge)" if self.cost_usd is None else usd_text(self.cost_usd)
        if self.cost_usd is not None and self.priced_as is not None:
            cost += f" at {self.priced_as} prices (the default judge; none configured)"
        judge = self.judge_model or "(none configured)"
        if self.judge_free:
            judge = "none needed (judge-free metric)"
        rows = [
            ("metric", self.metric),
            ("formatter", self.formatter),
            ("judge", judge),
            ("conversations", str(self.conversations)),
            ("units", str(self.units)),
            ("to score", str(self.to_score)),
            ("skipped", f"{sum(self.skipped.values())}" + (f" ({skipped})" if skipped else "")),
            ("judge calls", str(self.judge_calls)),
            ("prompt tokens", f"{self.prompt_tokens:,} (o200k estimate)"),
            ("output tokens", f"{self.output_tokens:,} (estimate, {OUTPUT_TOKENS_PER_CALL}/call)"),
            ("estimated cost", cost),
        ]
        for what, value in rows:
            table.add_row(what, escape(value))  # ids such as NAME@1[k=v]: not markup
        return table


def plan_run(
    traces: Iterable[AgentTrace],
    *,
    metric: Metric,
    formatter: Formatter[Any],
    judge_model: str | None = None,
    references: Mapping[str, str] | None = None,
    max_context_tokens: int | None = None,
    prices: PriceTable | None = None,
    default_model: str | None = None,
    renderings: RenderCache | None = None,
) -> RunPlan:
    """Plan ``metric`` with ``formatter`` over ``traces`` (renders each; calls no judge).

    A conversation whose rendering fails is counted as one skipped unit (``formatter_error``),
    as the engine would record it as an error. Judge-free metrics plan no calls and cost 0.
    With ``judge_model`` ``None``, the cost is estimated for ``default_model`` (the judge a
    run would use once a key is set) and the plan names it (:attr:`RunPlan.priced_as`).
    ``renderings`` shares the renderings with the rest of the run (each trace rendered once
    per formatter); a cache of its own when ``None``.
    """
    cache = renderings if renderings is not None else RenderCache()
    plan = RunPlan(metric=metric.id, formatter=formatter.identity, judge_model=judge_model)
    plan.judge_free = not metric.requires_judge
    if not metric.uses_formatter:
        plan.formatter = "none"
    for trace in traces:
        plan.conversations += 1
        try:
            text = cache.render(trace, formatter) if metric.uses_formatter else ""
            samples = build_samples(trace, metric, formatter, references or {}, conversation=text)
        except Exception:  # the engine records the same failure as an error row per unit
            plan.units += 1
            plan.skipped["formatter_error"] += 1
            continue
        for sample in samples:
            plan.units += 1
            skip = skip_fields(metric, sample, max_context_tokens)
            if skip is not None:
                plan.skipped[skip["error_type"]] += 1
                continue
            plan.to_score += 1
            if metric.requires_judge:
                plan.prompt_tokens += metric.planned_prompt_tokens(sample)
    plan.judge_calls = plan.to_score * metric.judge_calls if metric.requires_judge else 0
    plan.output_tokens = plan.judge_calls * OUTPUT_TOKENS_PER_CALL
    priced = judge_model or default_model
    if priced is not None and metric.requires_judge:
        table = prices or PriceTable()
        plan.cost_usd = table.cost(priced, plan.prompt_tokens, plan.output_tokens)
        plan.priced_as = None if judge_model is not None else priced
    elif not metric.requires_judge:
        plan.cost_usd = 0.0
    return plan
