"""Token and cost accounting: model prices, judge cost by metric/formatter/model, agent usage.

Prices are USD per million tokens, input and output separately. They come from
`genai-prices <https://github.com/pydantic/genai-prices>`_, the price database maintained by
Pydantic (the one pydantic-ai and Logfire use), as bundled with the installed package: a model
id is matched by that database's own rules, which know exact ids and dated snapshots
(``gpt-4o-mini-2024-07-18`` is ``gpt-4o-mini``; ``gpt-4o-2024-05-13`` has its own price;
``o3-mini`` is not ``o3``; ``gpt-5-pro`` is not ``gpt-5``), and find the provider from the model
id. The bundled snapshot is all that is read: genai-prices can fetch newer prices from GitHub
(``genai_prices.UpdatePrices``), and agent-eval never starts that, so pricing makes no network
connection. Upgrade ``genai-prices`` for newer prices; :func:`price_source` names the version
that priced a run (the run record keeps it).

Prices are read at the base tier: genai-prices is asked the price of a 1,000-token prompt and
a 1,000-token completion and the per-million rate is derived from that, because the summed
usage of a run is not one request (a long-context tier applies per request). Cached-input and
other special rates are not used: the judge's usage counts plain prompt and completion tokens.

``[prices]`` in ``agent-eval.toml`` comes first, for models the database lacks (a self-hosted
judge, a fine-tune) or a negotiated price::

    [prices."gpt-4o-mini"]
    input = 0.15    # USD per 1M input tokens
    output = 0.60   # USD per 1M output tokens

A model with no known price has cost ``None`` (shown as ``n/a``), never 0 and never a guess.

The judge's usage (what scoring cost) and the agent's own usage (what the recorded
conversations cost, read by ingest from ``gen_ai.usage.*`` / ``llm.token_count.*`` into
:attr:`AgentTrace.usage <agent_eval._trace.AgentTrace.usage>`) are always reported apart. Rows
whose judge usage was not reported (``usage_known`` False) are priced at their estimate and
marked ``~`` / estimated; calls answered from the judge-call cache cost nothing in this run and
are counted as cached.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Iterator, Mapping
from contextlib import contextmanager, suppress
from dataclasses import dataclass, field
from decimal import Decimal
from functools import lru_cache
from importlib import metadata
from typing import TYPE_CHECKING, Any, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError

if TYPE_CHECKING:
    from rich.table import Table

__all__ = [
    "NO_JUDGE",
    "PRICE_DATABASE",
    "AgentUsageGroups",
    "JudgeUsageGroups",
    "Price",
    "PriceMemo",
    "PriceTable",
    "UsageLine",
    "agent_usage",
    "calls_cell",
    "database_price",
    "judge_usage",
    "price_source",
    "remembered_prices",
    "shown_cost",
    "stage_table",
    "stage_tokens",
    "stage_usage",
    "usage_table",
    "usd_text",
]

PRICE_DATABASE = "genai-prices"
"""The distribution whose bundled price data prices models not in ``[prices]``."""

NO_JUDGE = "none"
"""The judge model recorded by rows of judge-free metrics (they call no judge, cost nothing)."""

_PROBE_TOKENS = 1000
_PROVIDER_IDS = {"gemini": "google", "genai": "google", "vertexai": "google", "bedrock": "aws"}
_PROVIDER_IDS |= {"azure_openai": "azure", "xai": "x-ai", "fireworks": "fireworks"}
"""instructor's provider names (``PROVIDER/MODEL`` judges) -> genai-prices provider ids, where
they differ (``anthropic``, ``openai``, ``mistral``, ``cohere``, ``groq``... are the same)."""
"""Tokens of the probe request whose price gives the per-million rate (base tier)."""


class Price(BaseModel):
    """The price of one model.

    Attributes:
        input: USD per million input (prompt) tokens.
        output: USD per million output (completion) tokens.
        source: Where the price comes from: ``config`` (``[prices]``) or
            ``genai-prices <version>`` (with the database's model id and provider).

    """

    model_config = ConfigDict(frozen=True, extra="forbid")

    input: float = Field(ge=0)
    output: float = Field(ge=0)
    source: str = Field(default="config", exclude=True)

    def cost(self, input_tokens: int, output_tokens: int) -> float:
        """USD for the given token counts."""
        return (input_tokens * self.input + output_tokens * self.output) / 1_000_000


def _database_version() -> str | None:
    try:
        return metadata.version(PRICE_DATABASE)
    except metadata.PackageNotFoundError:  # pragma: no cover - a declared dependency
        return None


class PriceMemo(Protocol):
    """Prices looked up in the database by an earlier run, kept per database release.

    The bundled data of one genai-prices release never changes (it is never updated at run
    time), so a price found once for ``(release, model)`` is the price that release gives;
    keeping it lets a later run skip importing genai-prices (0.1-0.4 s of a cached re-run).
    :class:`agent_eval.run._cache.CachedPrices` keeps them in the judge-call cache file.
    """

    def recall(self, release: str, model: str) -> tuple[bool, dict[str, Any] | None]:
        """``(True, price fields or None for "no price")`` when kept, else ``(False, None)``."""
        ...

    def keep(self, release: str, model: str, price: dict[str, Any] | None) -> None:
        """Keep the price (``input``, ``output``, ``source``) or ``None`` of ``model``."""
        ...


_memos: list[PriceMemo] = []


@contextmanager
def remembered_prices(memo: PriceMemo | None) -> Iterator[None]:
    """Within the block, :func:`database_price` reads and keeps its prices in ``memo``.

    ``None`` leaves lookups as they are (``--no-cache``). Blocks nest; the innermost wins.
    """
    if memo is None:
        yield
        return
    _memos.append(memo)
    try:
        yield
    finally:
        _memos.remove(memo)


@lru_cache(maxsize=256)
def database_price(model: str) -> Price | None:
    """The price of ``model`` in the bundled genai-prices data; ``None`` when it has none.

    The provider is found from the model id (``provider_id`` is not given); no network is
    used (the auto-update of genai-prices is never started). Each model is looked up once per
    process; inside :func:`remembered_prices` a price kept by an earlier run of the same
    genai-prices release is used instead, so genai-prices is not imported at all.
    """
    if not _memos:
        return _looked_up(model)
    memo, release = _memos[-1], f"{PRICE_DATABASE} {_database_version()}"
    try:
        kept, fields = memo.recall(release, model)
    except Exception:  # a memo that cannot be read costs the shortcut, never the price
        kept, fields = False, None
    if kept:
        return None if fields is None else Price(**fields)
    price = _looked_up(model)
    with suppress(Exception):  # likewise: the price is still right, only not kept
        memo.keep(release, model, None if price is None else _fields(price))
    return price


def _fields(price: Price) -> dict[str, Any]:
    return {"input": price.input, "output": price.output, "source": price.source}


def _looked_up(model: str) -> Price | None:
    """:func:`database_price` asked of genai-prices itself.

    A ``PROVIDER/MODEL`` id that genai-prices does not know as a whole (the ``instructor``
    judge's ``anthropic/claude-3-5-haiku-latest``) is priced as ``MODEL`` of that provider. The
    import of genai-prices (0.15-0.4 s measured by bench/usage_accounting.py) happens on the
    first call.
    """
    from genai_prices import Usage, calc_price

    provider, sep, name = model.partition("/")
    asked = (
        [(model, None), (name, _PROVIDER_IDS.get(provider, provider))] if sep else [(model, None)]
    )
    for model_ref, provider_id in asked:
        try:
            probe_in = calc_price(
                Usage(input_tokens=_PROBE_TOKENS, output_tokens=0),
                model_ref,
                provider_id=provider_id,
            )
            probe_out = calc_price(
                Usage(input_tokens=0, output_tokens=_PROBE_TOKENS),
                model_ref,
                provider_id=provider_id,
            )
        except LookupError:
            continue
        break
    else:
        return None
    per_million = Decimal(1_000_000 // _PROBE_TOKENS)
    return Price(
        input=float(probe_in.input_price * per_million),
        output=float(probe_out.output_price * per_million),
        source=f"{PRICE_DATABASE} {_database_version()} ({probe_in.provider.id} "
        f"{probe_in.model.id})",
    )


def price_source(prices: PriceTable, models: Iterable[str] = ()) -> dict[str, Any]:
    """What priced a run, for its reproducibility record (JSON-able).

    Returns:
        ``{"database": "genai-prices", "version": "0.2.3", "auto_update": False,
        "overrides": [models in [prices]], "models": {model: {"input", "output", "source"}
        or None}}`` for the given ``models``.

    """
    priced: dict[str, Any] = {}
    for model in models:
        price = prices.price(model)
        priced[model] = None if price is None else {**price.model_dump(), "source": price.source}
    return {
        "database": PRICE_DATABASE,
        "version": _database_version(),
        "auto_update": False,
        "overrides": sorted(prices.overrides),
        "models": priced,
    }


class PriceTable:
    """Model name -> :class:`Price`: ``[prices]`` overrides first, then genai-prices.

    Args:
        overrides: ``{model: Price}`` from the configuration; an exact model id each.
        database: Look models up in genai-prices when not overridden (``False``: overrides
            only, e.g. to test the ``n/a`` path).

    """

    def __init__(
        self, overrides: Mapping[str, Price] | None = None, *, database: bool = True
    ) -> None:
        self.overrides = dict(overrides or {})
        self.database = database

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
        """The price of ``model``: its ``[prices]`` entry, else genai-prices, else ``None``."""
        if model in self.overrides:
            return self.overrides[model]
        if not self.database or not model or model == "none":
            return None
        return database_price(model)

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
        input_tokens: Input tokens, summed: as reported, and the estimate for rows whose
            usage was not reported (see ``estimated_rows``).
        output_tokens: Output tokens, summed, likewise.
        cost_usd: USD at the price table, ``None`` when the model's price is unknown.
        judge_calls: Judge calls asked (cached or not); 0 for agent usage.
        cached_calls: Of those, calls answered from the judge-call cache (free in this run).
        estimated_rows: Rows whose usage was not reported, so that the tokens and cost
            include an estimate (:attr:`MetricResult.usage_known`).
        replaced_rows: Of ``rows``, rows a later invocation of the run replaced (``--resume``
            of budget skips or interrupted units, ``--retry-errors``): their calls were made,
            so they count.

    """

    key: tuple[str, ...]
    model: str
    rows: int = 0
    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    cost_usd: float | None = field(default=None)
    judge_calls: int = 0
    cached_calls: int = 0
    estimated_rows: int = 0
    replaced_rows: int = 0

    def add(self, calls: int, input_tokens: int, output_tokens: int) -> None:
        """Count one more row."""
        self.rows += 1
        self.calls += calls
        self.input_tokens += input_tokens
        self.output_tokens += output_tokens

    def add_row(self, row: MetricResult) -> None:
        """Count one result row: its requests, best token counts, calls and cached calls."""
        tokens_in, tokens_out = row.best_tokens
        self.add(row.attempts, tokens_in, tokens_out)
        self.judge_calls += row.judge_calls
        self.cached_calls += row.cached_calls
        self.estimated_rows += int(not row.usage_known)

    @property
    def judge_free(self) -> bool:
        """A judge line of judge-free metrics: judge model ``"none"``, no call asked."""
        return self.model == NO_JUDGE and not self.calls and not self.judge_calls

    @property
    def all_cached(self) -> bool:
        """Every judge call of the group was answered from the judge-call cache."""
        return self.judge_calls > 0 and self.cached_calls == self.judge_calls


def shown_cost(line: UsageLine) -> float | None:
    """The USD the usage table's cost cell of ``line`` shows, as a number.

    ``None`` for a judge-free line (``no judge``: no judge called) and for a model with no
    price (``n/a``); ``0.0`` when every call was answered from the judge-call cache (``$0
    (cached)``, whatever the price); else :attr:`UsageLine.cost_usd`, an estimate when
    ``line.estimated_rows`` (``~ est.``).
    """
    if line.judge_free:
        return None
    if line.all_cached:
        return 0.0
    return line.cost_usd


def _priced(lines: Iterable[UsageLine], prices: PriceTable) -> list[UsageLine]:
    out = sorted(lines, key=lambda line: line.key)
    for line in out:
        line.cost_usd = prices.cost(line.model, line.input_tokens, line.output_tokens)
    return out


class JudgeUsageGroups:
    """Judge usage lines counted row by row, no row kept (:func:`judge_usage` in a stream).

    With ``by_stage`` it is :func:`stage_usage` in a stream.

    Args:
        by_stage: Group by ``(metric, stage, judge model)`` from each row's
            ``details["stages"]`` (:func:`stage_usage`) instead of by ``(metric, formatter,
            judge model)`` (:func:`judge_usage`).

    Feed the current rows with :meth:`add` and the rows they replaced with
    ``add(row, replaced=True)``, in any order; :meth:`lines` prices and sorts the groups.
    """

    def __init__(self, *, by_stage: bool = False) -> None:
        self.by_stage = by_stage
        self._groups: dict[tuple[str, ...], UsageLine] = {}
        self._replaced_stages: Counter[tuple[str, ...]] = Counter()
        """Stage groups named by replaced rows (counted in the groups that exist at the end)."""

    def add(self, row: MetricResult, *, replaced: bool = False) -> None:
        """Count ``row``: a current row, or (``replaced``) one a later row replaced."""
        if self.by_stage:
            self._add_stages(row, replaced=replaced)
            return
        key = (row.metric, row.formatter, row.judge_model)
        line = self._groups.get(key)
        if line is None:
            line = self._groups[key] = UsageLine(key, row.judge_model)
        line.add_row(row)
        line.replaced_rows += replaced

    def _add_stages(self, row: MetricResult, *, replaced: bool) -> None:
        stages = row.details.get("stages")
        if not isinstance(stages, dict):
            return
        for stage, usage in stages.items():
            key = (row.metric, stage, row.judge_model)
            if replaced:
                self._replaced_stages[key] += 1
            if not isinstance(usage, dict):
                continue
            line = self._groups.setdefault(key, UsageLine(key, row.judge_model))
            tokens_in, tokens_out, estimated = stage_tokens(usage, row.usage_known)
            line.add(_int(usage.get("attempts")), tokens_in, tokens_out)
            line.judge_calls += _int(usage.get("calls"))
            line.cached_calls += _int(usage.get("cached_calls"))
            line.estimated_rows += int(estimated)

    def lines(self, prices: PriceTable) -> list[UsageLine]:
        """One priced line per group, sorted by key."""
        if self.by_stage:
            for key, line in self._groups.items():
                line.replaced_rows = self._replaced_stages[key]
        return _priced(self._groups.values(), prices)


def _grouped(
    groups: JudgeUsageGroups,
    results: Iterable[MetricResult],
    replaced: Iterable[MetricResult],
    prices: PriceTable,
) -> list[UsageLine]:
    for row in results:
        groups.add(row)
    for row in replaced:
        groups.add(row, replaced=True)
    return groups.lines(prices)


def judge_usage(
    results: Iterable[MetricResult],
    prices: PriceTable,
    replaced: Iterable[MetricResult] = (),
) -> list[UsageLine]:
    """Judge tokens and cost by (metric, formatter, judge model), from result rows.

    Rows carry the requests (``attempts``, retries included) and tokens their judge calls
    spent in the run that wrote them; calls answered from the judge-call cache count zero and
    are counted in ``cached_calls``. A row without a usage report adds its estimate
    (``estimated_rows``). ``replaced`` rows (those later rows of the same key replaced,
    :func:`~agent_eval.run._store.load_superseded`) count like the others and in
    ``replaced_rows``, so the lines add up to the run's whole spend. Both are consumed once,
    streaming (:class:`JudgeUsageGroups`).

    Returns:
        One line per group, sorted by key.

    """
    return _grouped(JudgeUsageGroups(), results, replaced, prices)


def stage_usage(
    results: Iterable[MetricResult],
    prices: PriceTable,
    replaced: Iterable[MetricResult] = (),
) -> list[UsageLine]:
    """Judge tokens and cost by (metric, stage, judge model), for metrics that name stages.

    Read from each row's ``details["stages"]`` (``{stage: {calls, input_tokens, output_tokens,
    attempts, cached_calls}}``, written by multi-stage metrics such as ``faithfulness@1``:
    ``decompose``, ``verify``); rows without it are not counted. ``rows`` counts the rows where
    the stage ran. A stage whose calls had no usage report (``usage_known`` False in its
    counts) adds its estimate and counts in ``estimated_rows``, so the stages of a row add up
    to its :attr:`MetricResult.best_tokens <agent_eval._result.MetricResult.best_tokens>`
    (:func:`stage_tokens`).

    ``replaced`` rows count as in :func:`judge_usage` (and in ``replaced_rows``). Both are
    consumed once, streaming (:class:`JudgeUsageGroups` with ``by_stage``).

    Returns:
        One line per group, sorted by key; empty when no row names stages.

    """
    return _grouped(JudgeUsageGroups(by_stage=True), results, replaced, prices)


def stage_tokens(
    usage: Mapping[str, object], row_usage_known: bool = True
) -> tuple[int, int, bool]:
    """``(input, output, estimated)`` tokens of one stage's counts in ``details["stages"]``.

    A stage with ``usage_known`` False gives its estimate (never below the reported counts)
    and ``estimated`` True. Counts written before stages carried their own estimate (no
    ``usage_known`` key) are as reported, marked estimated when the row's usage is unknown
    (``row_usage_known`` False): a lower bound.
    """
    tokens_in, tokens_out = _int(usage.get("input_tokens")), _int(usage.get("output_tokens"))
    known = usage.get("usage_known")
    if known is None:
        return tokens_in, tokens_out, not row_usage_known
    if known is not False:
        return tokens_in, tokens_out, False
    return (
        max(tokens_in, _int(usage.get("estimated_input_tokens"))),
        max(tokens_out, _int(usage.get("estimated_output_tokens"))),
        True,
    )


def _int(value: object) -> int:
    return value if isinstance(value, int) and not isinstance(value, bool) else 0


def stage_table(lines: list[UsageLine]) -> Table:
    """Judge usage by metric and stage (from :func:`stage_usage`) as a table."""
    from rich.markup import escape  # rich only where a table is printed
    from rich.table import Table

    table = Table(title="judge tokens and cost by stage (USD)", title_justify="left")
    for column in ("metric", "stage", "model", "rows", "requests", "input", "output", "cost"):
        table.add_column(column, justify="right" if column[0] in "rioc" else "left")
    for line in lines:
        table.add_row(*map(escape, line.key), *_numbers(line))
    table.caption = f"total {_total(lines)}" + _legend(lines)
    return table


class AgentUsageGroups:
    """The agent's usage lines counted conversation by conversation (no conversation kept).

    :func:`agent_usage` in a stream: a pass over the conversations made for something else
    counts them on the way.
    """

    def __init__(self) -> None:
        self._groups: dict[tuple[str, ...], UsageLine] = {}

    def add(self, trace: AgentTrace) -> None:
        """Count ``trace``'s ``AgentTrace.usage``, per model."""
        for usage in trace.usage:
            line = self._groups.setdefault((usage.model,), UsageLine((usage.model,), usage.model))
            line.add(usage.calls, usage.input_tokens, usage.output_tokens)

    def lines(self, prices: PriceTable) -> list[UsageLine]:
        """One priced line per model, sorted by model."""
        return _priced(self._groups.values(), prices)


def agent_usage(traces: Iterable[AgentTrace], prices: PriceTable) -> list[UsageLine]:
    """The agent's own token usage and cost by model, from ``AgentTrace.usage``.

    Returns:
        One line per model the agent used, sorted by model; ``rows`` counts conversations.

    """
    groups = AgentUsageGroups()
    for trace in traces:
        groups.add(trace)
    return groups.lines(prices)


def usd_text(cost: float | None) -> str:
    """USD with 4 decimals, 6 below $0.0001 (so a priced tiny run never reads ``$0.0000``).

    ``None`` (no price) is ``"n/a"``; exactly 0 is ``"$0.0000"``.
    """
    if cost is None:
        return "n/a"
    return f"${cost:.6f}" if 0 < cost < 0.0001 else f"${cost:.4f}"


_usd = usd_text


def _total(lines: list[UsageLine]) -> str:
    """The sum over the priced lines; ``n/a`` alone when none is priced.

    Judge-free lines are left out (no judge was called); a line answered wholly from the
    cache costs $0 whatever its price. Unpriced lines beside priced ones are named after the
    sum (``$0.0123 + n/a (no price: my-judge)``), never counted as $0.
    """
    called = [line for line in lines if not line.judge_free]
    if not called:
        return "none (no judge called)" if lines else "none recorded"
    priced = [line for line in called if line.cost_usd is not None or line.all_cached]
    unpriced = sorted({line.model for line in called if line not in priced})
    if not priced:
        return "n/a"
    estimated = "~" if any(line.estimated_rows and not line.all_cached for line in priced) else ""
    total = estimated + _usd(sum(line.cost_usd or 0.0 for line in priced if not line.all_cached))
    return total + (f" + n/a (no price: {', '.join(unpriced)})" if unpriced else "")


def calls_cell(requests: int, judge_calls: int, cached_calls: int) -> str:
    """The requests of a usage line with its cache hits.

    ``"14"`` with no cache hit, ``"12 (988 of 1000 calls cached)"`` with some, ``"0 (all 1000
    calls cached)"`` when every call was answered from the judge-call cache.
    """
    if not cached_calls:
        return str(requests)
    if cached_calls == judge_calls:
        return f"{requests} (all {judge_calls} calls cached)"
    return f"{requests} ({cached_calls} of {judge_calls} calls cached)"


def rows_cell(line: UsageLine) -> str:
    """``"27"``, or ``"54 (27 replaced)"`` when a later invocation replaced some of the rows."""
    if not line.replaced_rows:
        return str(line.rows)
    return f"{line.rows} ({line.replaced_rows} replaced)"


def _numbers(line: UsageLine) -> tuple[str, ...]:
    requests = calls_cell(line.calls, line.judge_calls, line.cached_calls)
    rows = rows_cell(line)
    if line.judge_free:
        return (rows, requests, "0", "0", "no judge")
    if line.all_cached:
        return (rows, requests, "cached", "cached", "$0 (cached)")
    mark = "~" if line.estimated_rows else ""
    cost = _usd(line.cost_usd)
    if mark and line.cost_usd is not None:
        cost = f"~{cost} est."
    return (
        rows,
        requests,
        f"{mark}{line.input_tokens}",
        f"{mark}{line.output_tokens}",
        cost,
    )


def _legend(lines: list[UsageLine]) -> str:
    notes = []
    estimated = sum(line.estimated_rows for line in lines)
    if estimated:
        notes.append(
            f"~ = estimated: {estimated} row(s) had no usage report from the endpoint "
            "(o200k count of their requests and replies)"
        )
    if any(line.cached_calls for line in lines):
        notes.append("cached calls cost nothing in this run")
    replaced = sum(line.replaced_rows for line in lines)
    if replaced:
        notes.append(
            f"rows include {replaced} a later invocation replaced (--resume, --retry-errors): "
            "their calls were made, so they count"
        )
    return "".join(f"; {note}" for note in notes)


def usage_table(judge: list[UsageLine], agent: list[UsageLine]) -> Table:
    """Judge usage by metric/formatter/model and, apart, the agent's own usage, as one table."""
    from rich.markup import escape  # rich only where a table is printed
    from rich.table import Table

    table = Table(title="tokens and cost (USD; n/a = no price for the model)", title_justify="left")
    for column in ("who", "metric", "formatter", "model", "rows", "requests", "input", "output"):
        table.add_column(column, justify="right" if column[0] in "rio" else "left")
    table.add_column("cost", justify="right")
    for line in judge:
        key = (*line.key[:2], "no judge") if line.judge_free else line.key
        table.add_row("judge", *map(escape, key), *_numbers(line))
    for line in agent:
        table.add_row("agent", "", "", escape(line.model), *_numbers(line))
    table.caption = (
        f"judge total {_total(judge)}; agent total {_total(agent)} (recorded in the spans)"
        + _legend(judge)
    )
    return table
