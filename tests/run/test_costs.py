"""Price table, judge cost by metric/formatter/model, and the agent's own usage."""

from __future__ import annotations

import pytest

from agent_eval.costs import PRESET_PRICES, Price, PriceTable, agent_usage, judge_usage
from agent_eval.errors import ConfigError
from agent_eval.result import MetricResult
from agent_eval.trace import AgentTrace, ModelUsage


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


def test_presets_lookup_by_exact_name_then_longest_prefix() -> None:
    table = PriceTable()
    assert table.price("gpt-4o") == PRESET_PRICES["gpt-4o"]
    assert table.price("gpt-4o-mini-2024-07-18") == PRESET_PRICES["gpt-4o-mini"]
    assert table.price("gpt-4o-2024-08-06") == PRESET_PRICES["gpt-4o"]
    assert table.price("gpt-4o2") is None
    assert table.cost("llama3.1:8b", 10, 10) is None


def test_config_overrides_and_extends_presets() -> None:
    table = PriceTable.from_config(
        {"gpt-4o-mini": {"input": 1, "output": 2}, "llama3.1:8b": {"input": 0, "output": 0}}
    )
    assert table.price("gpt-4o-mini") == Price(input=1, output=2)
    assert table.cost("llama3.1:8b", 10**6, 10**6) == 0.0
    assert table.price("gpt-4.1") == PRESET_PRICES["gpt-4.1"]


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
    assert transcript.cost_usd == pytest.approx((4000 * 0.15 + 400 * 0.6) / 1e6)
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
    assert lines[0].cost_usd == pytest.approx((300 * 2.5 + 30 * 10) / 1e6)
