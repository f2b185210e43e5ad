"""The report's charts as inline SVG (:mod:`agent_eval.report._svg`): one function per chart.

Every function returns SVG markup, or ``None`` when the data gives nothing to draw (the page
then says so in words, never an empty axis). Every colour is named in the chart's legend.

- :func:`score_plot`: repeat-0 scores per variant: verdict 0 / 1, or ten bins for fractional
  scores;
- :func:`status_plot`: repeat-0 rows by status per variant, stacked;
- :func:`tokens_plot`, :func:`latency_plot`: judge tokens and judge latency per conversation
  (repeat 0), as histograms per variant; rows answered from the cache are left out (they made
  no call) and counted in the title;
- :func:`flips_plot`, :func:`cost_plot`: a comparison's flips per pair and cost per variant;
- :func:`stability_plot`: conversations by the number of repeats with verdict 1;
- :func:`confusion_plot`: verdicts against labels.
"""

from __future__ import annotations

import math
from collections.abc import Mapping, Sequence

from markupsafe import Markup

from agent_eval._result import MetricResult
from agent_eval.report._model import is_cached
from agent_eval.report._svg import Series, bar_chart, nice_ticks

__all__ = [
    "confusion_plot",
    "cost_plot",
    "flips_plot",
    "latency_plot",
    "score_plot",
    "stability_plot",
    "status_plot",
    "tokens_plot",
]

PASS, FAIL, MIXED, SKIPPED, NEUTRAL = "#2e7d32", "#c62828", "#ef6c00", "#9e9d24", "#1565c0"
PALETTE = ("#1565c0", "#ef6c00", "#6a1b9a", "#00838f", "#ad1457", "#558b2f", "#4e342e", "#546e7a")

Groups = Mapping[str, Sequence[MetricResult]]


def _colour(i: int) -> str:
    return PALETTE[i % len(PALETTE)]


def _first(groups: Groups) -> dict[str, list[MetricResult]]:
    return {v: [r for r in rows if r.repeat == 0] for v, rows in groups.items()}


def score_plot(groups: Groups) -> Markup | None:
    """Repeat-0 ``ok`` scores per variant: bars for verdict 0 and 1, or ten bins over [0, 1]."""
    first = _first(groups)
    scores = {v: [r.score for r in rows if r.score is not None] for v, rows in first.items()}
    binary = all(
        r.verdict in ("0", "1") for rows in first.values() for r in rows if r.status == "ok"
    )
    if binary:
        categories = ["verdict 0 (fail)", "verdict 1 (pass)"]
        series = [
            Series(v, _colour(i), [sum(s == 0.0 for s in xs), sum(s == 1.0 for s in xs)])
            for i, (v, xs) in enumerate(scores.items())
        ]
    else:
        categories = [f"{k / 10:.1f}–{(k + 1) / 10:.1f}" for k in range(10)]
        series = [
            Series(v, _colour(i), [sum(min(int(s * 10), 9) == k for s in xs) for k in range(10)])
            for i, (v, xs) in enumerate(scores.items())
        ]
    return bar_chart(
        "Scores (repeat 0, ok rows)",
        categories,
        series,
        value_label="results",
        category_label="" if binary else "score",
    )


def status_plot(groups: Groups) -> Markup | None:
    """Repeat-0 rows by status (ok, skipped, error), one stacked bar per variant."""
    first = _first(groups)
    variants = list(first)
    series = [
        Series(status, colour, [sum(r.status == status for r in first[v]) for v in variants])
        for status, colour in (("ok", PASS), ("skipped", SKIPPED), ("error", FAIL))
    ]
    return bar_chart(
        "Results by status (repeat 0)",
        variants,
        [s for s in series if any(s.values)],
        value_label="results",
        stacked=True,
        horizontal=True,
    )


def _short(value: float) -> str:
    if value >= 10_000:
        return f"{value / 1000:.0f}k"
    if value >= 1000:
        return f"{value / 1000:.1f}".rstrip("0").rstrip(".") + "k"
    return f"{value:g}"


def _histogram(
    title: str, values: Mapping[str, Sequence[float]], unit: str, *, integer: bool
) -> Markup | None:
    flat = [x for xs in values.values() for x in xs]
    if not flat or max(flat) <= 0:
        return None
    top = max(flat)
    edges = nice_ticks(top * 1.0001, integer=integer)
    if len(edges) < 5:  # too coarse: halve the step
        step = edges[1] / 2 if not integer else max(1.0, math.floor(edges[1] / 2))
        edges = [round(i * step, 10) for i in range(math.ceil(top * 1.0001 / step) + 1)]
    bins = len(edges) - 1
    categories = [f"{_short(edges[k])}–{_short(edges[k + 1])}" for k in range(bins)]

    def count(xs: Sequence[float], k: int) -> int:
        return sum(edges[k] <= x < edges[k + 1] or (k == bins - 1 and x == edges[-1]) for x in xs)

    series = [
        Series(v, _colour(i), [count(xs, k) for k in range(bins)])
        for i, (v, xs) in enumerate(values.items())
    ]
    return bar_chart(title, categories, series, value_label="results", category_label=unit)


def _called(groups: Groups) -> tuple[dict[str, list[MetricResult]], int]:
    """Repeat-0 rows that made judge calls, per variant, and the number of cached rows."""
    first = _first(groups)
    called = {v: [r for r in rows if r.attempts > 0] for v, rows in first.items()}
    cached = sum(is_cached(r) for rows in first.values() for r in rows)
    return called, cached


def _note(cached: int) -> str:
    return f"; {cached} cached row(s) made no call" if cached else ""


def tokens_plot(groups: Groups) -> Markup | None:
    """Judge tokens (input + output) per conversation, repeat 0, cached rows left out."""
    called, cached = _called(groups)
    values = {
        v: [float(r.input_tokens + r.output_tokens) for r in rows] for v, rows in called.items()
    }
    return _histogram(
        "Judge tokens per conversation" + _note(cached), values, "tokens (in + out)", integer=True
    )


def latency_plot(groups: Groups) -> Markup | None:
    """Judge wall time per conversation in seconds, repeat 0, cached rows left out."""
    called, cached = _called(groups)
    values = {v: [r.latency_ms / 1000 for r in rows] for v, rows in called.items()}
    return _histogram(
        "Judge latency per conversation" + _note(cached), values, "seconds", integer=False
    )


def flips_plot(pairs: Sequence[tuple[str, int, int]]) -> Markup | None:
    """Flips each way per variant pair: ``(pair name, 1 → 0 flips, 0 → 1 flips)``."""
    return bar_chart(
        "Flipped verdicts per pair (A → B)",
        [name for name, _, _ in pairs],
        [
            Series("1 → 0 (A passes, B fails)", FAIL, [a for _, a, _ in pairs]),
            Series("0 → 1 (A fails, B passes)", PASS, [b for _, _, b in pairs]),
        ],
        value_label="conversations",
        horizontal=True,
    )


def cost_plot(variants: Sequence[tuple[str, float | None, int]]) -> Markup | None:
    """Judge cost per variant in USD, or judge tokens when a price is unknown.

    Args:
        variants: ``(variant, cost in USD or None, judge tokens in + out)``.

    """
    priced = all(cost is not None for _, cost, _ in variants)
    values = [(cost or 0.0) if priced else float(tokens) for _, cost, tokens in variants]
    label = "judge cost (USD)" if priced else "judge tokens (no price known)"
    return bar_chart(
        "Judge cost per variant" if priced else "Judge tokens per variant",
        [v for v, _, _ in variants],
        [Series(label, NEUTRAL, values)],
        value_label=label,
        integer=not priced,
        horizontal=True,
    )


def stability_plot(counts: Sequence[int]) -> Markup | None:
    """Conversations by repeats with verdict 1: ``counts[k]`` conversations had ``k`` of K."""
    k = len(counts) - 1
    categories = [str(i) for i in range(k + 1)]

    def only(pick: int | None) -> list[float]:
        return [
            float(c) if (pick is None and 0 < i < k) or i == pick else 0.0
            for i, c in enumerate(counts)
        ]

    series = [
        Series(f"unanimous 0 (0 of {k})", FAIL, only(0)),
        Series("split verdicts", MIXED, only(None)),
        Series(f"unanimous 1 ({k} of {k})", PASS, only(k)),
    ]
    return bar_chart(
        "Conversations by repeats with verdict 1",
        categories,
        series,
        value_label="conversations",
        category_label=f"repeats with verdict 1 (of {k}, all ok)",
        stacked=True,
    )


def confusion_plot(confusion: Sequence[Sequence[int]]) -> Markup | None:
    """Verdicts against labels: per label, conversations the judge agreed or disagreed on."""
    (tn, fp), (fn, tp) = confusion
    return bar_chart(
        "Judge verdicts against labels",
        ["label 0 (fail)", "label 1 (pass)"],
        [
            Series("agrees with the label", PASS, [tn, tp]),
            Series("disagrees (verdict is the other)", FAIL, [fp, fn]),
        ],
        value_label="conversations",
        stacked=True,
        horizontal=True,
    )
