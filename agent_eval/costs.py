"""Token and cost accounting: a price table, judge cost by metric/formatter/model, agent usage.

Prices are USD per million tokens, input and output separately. :data:`PRESET_PRICES` holds
OpenAI's list prices (standard tier, text tokens) as published on
https://platform.openai.com/docs/pricing, checked against several copies of that page in 2026
(the GPT-4.1, GPT-4o, o-series and GPT-5 families). They go stale: override or add models in
``agent-eval.toml``::

    [prices."gpt-4o-mini"]
    input = 0.15    # USD per 1M input tokens
    output = 0.60   # USD per 1M output tokens

A dated snapshot name (``gpt-4o-mini-2024-07-18``) uses the price of its longest preset or
configured prefix. A model with no known price has cost ``None`` (shown as ``n/a``), never 0.

The judge's usage (what scoring cost) and the agent's own usage (what the recorded
conversations cost, read by ingest from ``gen_ai.usage.*`` / ``llm.token_count.*`` into
:attr:`AgentTrace.usage <agent_eval.trace.AgentTrace.usage>`) are always reported apart.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

from pydantic import BaseModel, ConfigDict, Field, ValidationError
from rich.markup import escape
from rich.table import Table

from agent_eval.errors import ConfigError
from agent_eval.result import MetricResult
from agent_eval.trace import AgentTrace

__all__ = [
    "PRESET_PRICES",
    "Price",
    "PriceTable",
    "UsageLine",
    "agent_usage",
    "judge_usage",
    "stage_table",
    "stage_usage",
    "usage_table",
]


class Price(BaseModel):
    """The price of one model.

    Attributes:
        input: USD per million input (prompt) tokens.
        output: USD per million output (completion) tokens.

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the given token counts."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


PRESET_PRICES: Mapping[str, Price] = {
    "gpt-4o": Price(input=2.50, output=10.00),
    "gpt-4o-mini": Price(input=0.15, output=0.60),
    "gpt-4.1": Price(input=2.00, output=8.00),
    "gpt-4.1-mini": Price(input=0.40, output=1.60),
    "gpt-4.1-nano": Price(input=0.10, output=0.40),
    "o3": Price(input=2.00, output=8.00),
    "o4-mini": Price(input=1.10, output=4.40),
    "gpt-5": Price(input=1.25, output=10.00),
    "gpt-5-mini": Price(input=0.25, output=2.00),
    "gpt-5-nano": Price(input=0.05, output=0.40),
}
"""OpenAI list prices, USD per 1M tokens (standard tier; see the module docstring)."""


class PriceTable:
    """Model name -> :class:`Price`, the presets overridden by configuration.

    Args:
        overrides: ``{model: Price}`` that replace or extend the presets.
        presets: The base table; :data:`PRESET_PRICES` unless given.

    """

    def __init__(
        self,
        overrides: Mapping[str, Price] | None = None,
        presets: Mapping[str, Price] = PRESET_PRICES,
    ) -> None:
        self._prices = {**presets, **(overrides or {})}
        self._by_length = sorted(self._prices, key=len, reverse=True)

    @classmethod
    def from_config(cls, table: Mapping[str, object] | None) -> PriceTable:
        """Build from the ``[prices]`` table of ``agent-eval.toml``.

        Args:
            table: ``{model: {"input": usd_per_mtok, "output": usd_per_mtok}}``.

        Raises:
            ConfigError: an entry is not a table of two non-negative numbers.

        """
        overrides: dict[str, Price] = {}
        for model, entry in (table or {}).items():
            try:
                overrides[model] = Price.model_validate(entry)
            except ValidationError as exc:
                raise ConfigError(
                    f'[prices."{model}"] in the config: expected input = <USD per 1M tokens> '
                    f"and output = <USD per 1M tokens>, got {entry!r} "
                    f"({exc.errors()[0]['msg']})"
                ) from exc
        return cls(overrides)

    def price(self, model: str) -> Price | None:
        """The price of ``model``: exact name, else the longest known prefix, else ``None``."""
        if model in self._prices:
            return self._prices[model]
        for known in self._by_length:
            if model.startswith(known + "-"):
                return self._prices[known]
        return None

    def cost(self, model: str, input_tokens: int, output_tokens: int) -> float | None:
        """USD for the given usage of ``model``; ``None`` when its price is unknown."""
        price = self.price(model)
        return None if price is None else price.cost(input_tokens, output_tokens)


@dataclass(slots=True)
class UsageLine:
    """Summed usage of one group (a metric/formatter/judge model, or an agent model).

    Attributes:
        key: The group, e.g. ``("goal_accuracy@1", "transcript@1", "gpt-4o-mini")`` or
            ``("gpt-4o",)`` for agent usage.
        model: The model whose price applies.
        rows: Result rows (judge usage) or conversations (agent usage) counted.
        calls: Judge requests (attempts) or agent LLM calls.
        input_tokens: Input tokens, summed.
        output_tokens: Output tokens, summed.
        cost_usd: USD at the price table, ``None`` when the model's price is unknown.

    """

    key: tuple[str, ...]
    model: str
    rows: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = field(default=None)

    def add(self, calls: int, input_tokens: int, output_tokens: int) -> None:
        """Count one more row."""
        self.rows += 1
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens


def _priced(lines: Iterable[UsageLine], prices: PriceTable) -> list[UsageLine]:
    out = sorted(lines, key=lambda line: line.key)
    for line in out:
        line.cost_usd = prices.cost(line.model, line.input_tokens, line.output_tokens)
    return out


def judge_usage(results: Iterable[MetricResult], prices: PriceTable) -> list[UsageLine]:
    """Judge tokens and cost by (metric, formatter, judge model), from result rows.

    Rows carry the requests (``attempts``, retries included) and tokens their judge calls
    spent in the run that wrote them; calls answered from the judge-call cache count zero.

    Returns:
        One line per group, sorted by key.

    """
    groups: dict[tuple[str, ...], UsageLine] = {}
    for row in results:
        key = (row.metric, row.formatter, row.judge_model)
        line = groups.setdefault(key, UsageLine(key, row.judge_model))
        line.add(row.attempts, row.input_tokens, row.output_tokens)
    return _priced(groups.values(), prices)


def stage_usage(results: Iterable[MetricResult], prices: PriceTable) -> list[UsageLine]:
    """Judge tokens and cost by (metric, stage, judge model), for metrics that name stages.

    Read from each row's ``details["stages"]`` (``{stage: {calls, input_tokens, output_tokens,
    attempts}}``, written by multi-stage metrics such as ``faithfulness@1``: ``decompose``,
    ``verify``); rows without it are not counted. ``rows`` counts the rows where the stage ran.

    Returns:
        One line per group, sorted by key; empty when no row names stages.

    """
    groups: dict[tuple[str, ...], UsageLine] = {}
    for row in results:
        stages = row.details.get("stages")
        if not isinstance(stages, dict):
            continue
        for stage, usage in stages.items():
            if not isinstance(usage, dict):
                continue
            key = (row.metric, stage, row.judge_model)
            line = groups.setdefault(key, UsageLine(key, row.judge_model))
            line.add(
                _int(usage.get("attempts")),
                _int(usage.get("input_tokens")),
                _int(usage.get("output_tokens")),
            )
    return _priced(groups.values(), prices)


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stage_table(lines: list[UsageLine]) -> Table:
    """Judge usage by metric and stage (from :func:`stage_usage`) as a table."""
    table = Table(title="judge tokens and cost by stage (USD)", title_justify="left")
    for column in ("metric", "stage", "model", "rows", "requests", "input", "output", "cost"):
        table.add_column(column, justify="right" if column[0] in "rioc" else "left")
    for line in lines:
        table.add_row(*map(escape, line.key), *_numbers(line))
    table.caption = f"total {_total(lines)}"
    return table


def agent_usage(traces: Iterable[AgentTrace], prices: PriceTable) -> list[UsageLine]:
    """The agent's own token usage and cost by model, from ``AgentTrace.usage``.

    Returns:
        One line per model the agent used, sorted by model; ``rows`` counts conversations.

    """
    groups: dict[tuple[str, ...], UsageLine] = {}
    for trace in traces:
        for usage in trace.usage:
            line = groups.setdefault((usage.model,), UsageLine((usage.model,), usage.model))
            line.add(usage.calls, usage.input_tokens, usage.output_tokens)
    return _priced(groups.values(), prices)


def _usd(cost: float | None) -> str:
    return "n/a" if cost is None else f"${cost:.4f}"


def _total(lines: list[UsageLine]) -> str:
    costs = [line.cost_usd for line in lines]
    known = sum(c for c in costs if c is not None)
    return _usd(known) + (" + n/a" if None in costs else "")


def _numbers(line: UsageLine) -> tuple[str, ...]:
    counts = (line.rows, line.calls, line.input_tokens, line.output_tokens)
    return (*(str(n) for n in counts), _usd(line.cost_usd))


def usage_table(judge: list[UsageLine], agent: list[UsageLine]) -> Table:
    """Judge usage by metric/formatter/model and, apart, the agent's own usage, as one table."""
    table = Table(title="tokens and cost (USD; n/a = no price for the model)", title_justify="left")
    for column in ("who", "metric", "formatter", "model", "rows", "requests", "input", "output"):
        table.add_column(column, justify="right" if column[0] in "rio" else "left")
    table.add_column("cost", justify="right")
    for line in judge:
        table.add_row("judge", *map(escape, line.key), *_numbers(line))
    for line in agent:
        table.add_row("agent", "", "", escape(line.model), *_numbers(line))
    table.caption = (
        f"judge total {_total(judge)}; agent total {_total(agent)} (recorded in the spans)"
    )
    return table
