"""Terminal tables: content, and data never read as rich markup."""

from __future__ import annotations

from collections.abc import Callable

from rich.console import Console

from agent_eval._result import MetricResult
from agent_eval.analysis._calibration import calibrate
from agent_eval.analysis._paired import compare_formatters
from agent_eval.analysis._stability import measure_stability
from agent_eval.report._terminal import calibration_table, comparison_tables, stability_tables


def _text(renderable: object) -> str:
    console = Console(width=200, record=True, color_system=None)
    console.print(renderable)
    return console.export_text()


def test_comparison_lists_flips_with_both_reasons(make_result: Callable[..., MetricResult]) -> None:
    rows = [make_result("[bold]c1[/bold]", "1", reason="A says [red]yes[/red]")]
    rows.append(make_result("[bold]c1[/bold]", "0", formatter="json@1", reason="B says no"))
    text = _text(comparison_tables(compare_formatters(rows)))
    assert "Flipped: transcript@1 (A) vs json@1 (B)" in text
    assert "[bold]c1[/bold]" in text  # shown literally, not as markup
    assert "A says [red]yes[/red]" in text and "B says no" in text


def test_calibration_and_stability_tables(make_result: Callable[..., MetricResult]) -> None:
    text = _text(calibration_table(calibrate({"a": 1, "b": 0}, {"a": 1, "b": 1})))
    assert "1 of 2 (accuracy 0.500)" in text and "disagreements" in text and "b" in text
    rows = [make_result("c", v, repeat=k) for k, v in enumerate("101")]
    text = _text(stability_tables(measure_stability(rows)))
    assert "flip rate 1.000 (1 of 1)" in text


def test_negative_zero_prints_as_zero() -> None:
    from rich.console import Console

    from agent_eval.analysis._calibration import calibrate
    from agent_eval.report._terminal import calibration_table, fixed, usd

    assert [fixed(-0.0), fixed(-1.6e-8), fixed(-0.0004), fixed(-0.0006)] == [
        "0.000",
        "0.000",
        "0.000",
        "-0.001",
    ]
    assert (fixed(None), usd(-0.0), fixed(0.5, 2)) == ("n/a", "$0.0000", "0.50")
    # a constant verdict: kappa 0, and statsmodels' standard error a rounding error away from
    # its exact 0 (a low end of about -1.6e-8): no interval, the reason instead (trial7 #16)
    cal = calibrate(dict.fromkeys("abcde", 1), {"a": 1, "b": 0, "c": 0, "d": 1, "e": 1})
    assert cal.kappa_ci_low is None and cal.kappa == 0.0
    console = Console(record=True, width=200)
    console.print(calibration_table(cal))
    text = console.export_text()
    assert (
        "0.000 [interval undefined: the verdicts gave the same outcome (1) to all 5 items "
        "(the large-sample standard error is 0)]" in text
    )
    assert "-0.000" not in text


def test_the_variants_add_up_to_the_totals_with_replaced_rows(
    make_result: Callable[..., MetricResult],
) -> None:
    """s4 "not done": the per-variant table counted only current rows, the totals replaced too."""
    from agent_eval._costs import PriceTable
    from agent_eval.report._model import build_report

    rows = [make_result(c, "1") for c in "ab"] + [
        make_result(c, "0", formatter="json@1") for c in "ab"
    ]
    budget_skip = {"status": "skipped", "error_type": "budget", "error_message": "budget"}
    replaced = [make_result("a", None, input_tokens=400, output_tokens=20, **budget_skip)]
    report = build_report(rows, superseded=replaced, pricing=PriceTable().cost)
    assert report.comparison is not None
    variants = {v.variant: v for v in report.comparison.variants}
    first = variants["transcript@1"]
    assert (first.input_tokens, first.output_tokens, first.n_replaced) == (2400, 120, 1)
    assert sum(v.input_tokens for v in variants.values()) == report.summary.input_tokens == 4400
    assert sum(v.output_tokens for v in variants.values()) == report.summary.output_tokens == 220
    costs = [v.cost_usd for v in variants.values()]
    assert report.summary.cost_usd is not None and None not in costs
    assert abs(sum(c or 0.0 for c in costs) - report.summary.cost_usd) < 1e-12
    text = _text(comparison_tables(report.comparison))
    assert "2400/120, incl. 1 replaced rows" in text
