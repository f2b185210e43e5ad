"""Price table, judge cost by metric/formatter/model, and the agent's own usage."""

from __future__ import annotations

import pytest
from genai_prices import Usage, calc_price

from agent_eval._costs import (
    Price,
    PriceTable,
    agent_usage,
    judge_usage,
    price_source,
    usage_table,
)
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, ModelUsage
from agent_eval.errors import ConfigError


def row(
    metric: str,
    formatter: str,
    model: str,
    tokens: tuple[int, int],
    attempts: int = 2,
    status: str = "ok",
) -> MetricResult:
    ok = status == "ok"
    return MetricResult(
        run_id="r",
        conversation_id="c",
        metric=metric,
        formatter=formatter,
        formatter_fingerprint="f" * 64,
        prompt_sha256="p" * 64,
        judge_model=model,
        status=status,
        verdict="1" if ok else None,
        score=1.0 if ok else None,
        error_type=None if ok else "judge_unavailable",
        input_tokens=tokens[0],
        output_tokens=tokens[1],
        attempts=attempts,
        started_at="2026-01-01T00:00:00Z",
    )


def test_price_cost_is_usd_per_million_tokens() -> None:
    assert Price(input=2.0, output=8.0).cost(1_000_000, 500_000) == pytest.approx(6.0)
    assert Price(input=0.15, output=0.6).cost(1000, 100) == pytest.approx(0.00021)


def library_rates(model: str) -> tuple[float, float]:
    """USD per 1M input / output tokens of ``model``, asked of genai-prices directly."""
    priced = calc_price(Usage(input_tokens=1_000_000, output_tokens=1_000_000), model)
    return float(priced.input_price), float(priced.output_price)


@pytest.mark.parametrize(
    "model",
    ["gpt-4o-mini", "gpt-4o", "gpt-4o-2024-05-13", "o3", "o3-mini", "gpt-5", "gpt-5-pro"],
)
def test_prices_are_genai_prices_for_the_exact_model_id(model: str) -> None:
    price = PriceTable().price(model)
    assert price is not None
    assert (price.input, price.output) == pytest.approx(library_rates(model))
    assert price.source.startswith("genai-prices ")


def test_sibling_models_and_snapshots_are_not_priced_by_prefix() -> None:
    table = PriceTable()
    for model, prefix in [
        ("o3-mini", "o3"),
        ("gpt-5-pro", "gpt-5"),
        ("gpt-4o-2024-05-13", "gpt-4o"),
    ]:
        own, shorter = table.price(model), table.price(prefix)
        assert own is not None and shorter is not None
        assert (own.input, own.output) != (shorter.input, shorter.output), model
    # a dated snapshot that the database maps to its family keeps the family's price
    assert table.price("gpt-4o-mini-2024-07-18") == table.price("gpt-4o-mini")


@pytest.mark.parametrize("model", ["llama3.1:8b", "gpt-4o-mini-my-finetune", "gpt-4o2", "none"])
def test_unknown_models_have_no_price_never_a_guess(model: str) -> None:
    table = PriceTable()
    assert table.price(model) is None
    assert table.cost(model, 10, 10) is None


def test_unknown_model_prints_na_in_the_usage_table() -> None:
    from rich.console import Console

    lines = judge_usage([row("goal_accuracy@1", "json@1", "my-local-judge", (10, 5))], PriceTable())
    console = Console(width=200, record=True)
    console.print(usage_table(lines, []))
    text = console.export_text()
    assert "n/a" in text and "$0.0000 " not in text.split("judge total")[0]


def test_config_overrides_come_before_the_database() -> None:
    table = PriceTable.from_config(
        {"gpt-4o-mini": {"input": 1, "output": 2}, "llama3.1:8b": {"input": 0, "output": 0}}
    )
    assert table.price("gpt-4o-mini") == Price(input=1, output=2)
    assert table.cost("llama3.1:8b", 10**6, 10**6) == 0.0
    gpt41 = table.price("gpt-4.1")
    assert gpt41 is not None and (gpt41.input, gpt41.output) == pytest.approx(
        library_rates("gpt-4.1")
    )


def test_price_source_names_the_database_version_and_overrides() -> None:
    from importlib.metadata import version

    table = PriceTable.from_config({"my-judge": {"input": 1, "output": 2}})
    source = price_source(table, ["gpt-4o-mini", "my-judge", "unknown-model"])
    assert source["database"] == "genai-prices"
    assert source["version"] == version("genai-prices")
    assert source["auto_update"] is False
    assert source["overrides"] == ["my-judge"]
    mini = source["models"]["gpt-4o-mini"]
    assert (mini["input"], mini["output"]) == pytest.approx(library_rates("gpt-4o-mini"))
    assert "openai gpt-4o-mini" in mini["source"]
    assert source["models"]["my-judge"] == {"input": 1.0, "output": 2.0, "source": "config"}
    assert source["models"]["unknown-model"] is None


@pytest.mark.parametrize(
    "entry", [{"input": 1}, {"input": -1, "output": 1}, {"in": 1, "output": 1}, "cheap"]
)
def test_bad_price_config_is_a_config_error_naming_the_model(entry: object) -> None:
    with pytest.raises(ConfigError, match=r'\[prices\."my-model"\]'):
        PriceTable.from_config({"my-model": entry})


def test_judge_usage_groups_by_metric_formatter_and_model() -> None:
    rows = [
        row("goal_accuracy@1", "transcript@1", "gpt-4o-mini", (1000, 100)),
        row("goal_accuracy@1", "transcript@1", "gpt-4o-mini", (3000, 300), status="error"),
        row("goal_accuracy@1", "json@1", "gpt-4o-mini", (500, 50)),
        row("goal_accuracy@1", "json@1", "local", (500, 50), attempts=0),
    ]
    lines = judge_usage(rows, PriceTable())
    assert [line.key for line in lines] == [
        ("goal_accuracy@1", "json@1", "gpt-4o-mini"),
        ("goal_accuracy@1", "json@1", "local"),
        ("goal_accuracy@1", "transcript@1", "gpt-4o-mini"),
    ]
    transcript = lines[2]
    assert (transcript.rows, transcript.calls) == (2, 4)
    assert (transcript.input_tokens, transcript.output_tokens) == (4000, 400)
    rate_in, rate_out = library_rates("gpt-4o-mini")
    assert transcript.cost_usd == pytest.approx((4000 * rate_in + 400 * rate_out) / 1e6)
    assert lines[1].cost_usd is None


def test_agent_usage_is_summed_per_model_from_traces() -> None:
    traces = [
        AgentTrace(
            conversation_id="a",
            usage=(
                ModelUsage(model="gpt-4o", input_tokens=100, output_tokens=10, calls=2),
                ModelUsage(model="gpt-4o-mini", input_tokens=5, output_tokens=1, calls=1),
            ),
        ),
        AgentTrace(
            conversation_id="b",
            usage=(ModelUsage(model="gpt-4o", input_tokens=200, output_tokens=20, calls=3),),
        ),
        AgentTrace(conversation_id="c"),
    ]
    lines = agent_usage(traces, PriceTable())
    assert [line.model for line in lines] == ["gpt-4o", "gpt-4o-mini"]
    assert (lines[0].rows, lines[0].calls, lines[0].input_tokens) == (2, 5, 300)
    rate_in, rate_out = library_rates("gpt-4o")
    assert lines[0].cost_usd == pytest.approx((300 * rate_in + 30 * rate_out) / 1e6)


def _rendered(judge: list[MetricResult], agent: tuple[AgentTrace, ...] = ()) -> str:
    from rich.console import Console

    prices = PriceTable.from_config({"priced-judge": {"input": 1000, "output": 2000}})
    console = Console(width=250, record=True)
    console.print(usage_table(judge_usage(judge, prices), agent_usage(agent, prices)))
    return " ".join(console.export_text().split())


def _estimated(result: MetricResult, tokens_in: int, tokens_out: int) -> MetricResult:
    return result.model_copy(
        update={"usage_known": False, "estimated_input_tokens": tokens_in,
                "estimated_output_tokens": tokens_out}
    )  # fmt: skip


def test_judge_free_rows_say_no_judge_and_are_no_part_of_the_total() -> None:
    """Regression: judge-free rows showed model none / cost n/a and a total of "$0.0000 + n/a"."""
    text = _rendered([row("tool_call_accuracy@1", "none", "none", (0, 0), attempts=0)])
    assert "│ judge │ tool_call_accuracy@1 │ none │ no judge │ 1 │ 0 │ 0 │ 0 │ no judge │" in text
    assert "judge total none (no judge called);" in text
    assert "n/a" not in text.replace("n/a = no price", "")


def test_nothing_priced_totals_na_alone() -> None:
    """Regression: an unpriced (estimated) judge totalled "~$0.0000 + n/a"."""
    unpriced = _estimated(row("goal_accuracy@1", "json@1", "my-local-judge", (0, 0)), 500, 40)
    agent = AgentTrace(conversation_id="c", usage=(ModelUsage(model="my-agent", calls=1,
                       input_tokens=10, output_tokens=2),))  # fmt: skip
    text = _rendered([unpriced, row("loops@1", "none", "none", (0, 0), attempts=0)], (agent,))
    assert "judge total n/a; agent total n/a (recorded in the spans)" in text
    assert "$0.0000" not in text


def test_a_total_is_over_the_priced_lines_and_names_the_unpriced() -> None:
    rows = [
        row("goal_accuracy@1", "json@1", "priced-judge", (1000, 100)),  # $1 + $0.2
        row("goal_accuracy@1", "transcript@1", "my-local-judge", (10, 5)),
        row("loops@1", "none", "none", (0, 0), attempts=0),
    ]
    text = _rendered(rows)
    assert "judge total $1.2000 + n/a (no price: my-local-judge);" in text
    estimated = _estimated(row("goal_accuracy@1", "json@1", "priced-judge", (0, 0)), 1000, 100)
    assert "judge total ~$1.2000;" in _rendered([estimated])
