"""A small SVG bar-chart writer for the HTML report: inline ``<svg>`` markup, no library.

The report's charts are all bar charts (counts per category, histograms over bins, stacked
statuses), so one function draws them: :func:`bar_chart`, vertical or horizontal, with series
grouped side by side or stacked. Every colour has a legend entry; the value axis starts at 0
and ends at a "nice" round number (steps of 1, 2 or 5 times a power of ten; integers only for
counts), so a chart never shows a meaningless range. A chart with nothing to draw (no category,
or every value 0) is ``None``: the caller says "no data" in words instead.

All text is escaped with :func:`markupsafe.escape`; the markup uses presentation attributes only
(no ``style`` attribute, no script, no external reference), so it passes the report's
Content-Security-Policy unchanged.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass

from markupsafe import Markup, escape

__all__ = ["Series", "bar_chart", "nice_ticks"]

_FONT = 'font-family="system-ui, sans-serif"'
_CHAR_PX = 6.2  # average glyph width at 11px, for fitting labels
_TEXT = "#333"
_GRID = "#e3e3e3"


@dataclass(frozen=True)
class Series:
    """One coloured series: its legend name, fill colour and one value per category."""

    name: str
    colour: str
    values: Sequence[float]


@dataclass(frozen=True)
class _Chart:
    title: str
    categories: Sequence[str]
    series: Sequence[Series]
    ticks: list[float]
    value_label: str
    category_label: str
    stacked: bool
    width: int


def nice_ticks(top: float, *, integer: bool) -> list[float]:
    """Axis ticks from 0 to a round number >= ``top``: at most 6 steps of 1, 2 or 5 x 10^k.

    Args:
        top: The largest value to show (> 0).
        integer: Counts: steps are whole numbers (at least 1).

    Raises:
        ValueError: ``top`` is not a positive finite number.

    """
    if not (math.isfinite(top) and top > 0):
        raise ValueError(f"the axis needs a positive maximum, got {top!r}")
    raw = top / 5
    power = 10 ** math.floor(math.log10(raw))
    step = next(m * power for m in (1, 2, 5, 10) if m * power >= raw)
    if integer:
        step = max(1.0, float(math.ceil(step)))
    n = math.ceil(top / step - 1e-9)
    return [round(i * step, 10) for i in range(n + 1)]


def _fmt(value: float) -> str:
    if value == int(value):
        return f"{int(value):,}"
    return f"{value:.4g}"


def _fit(text: str, width_px: float) -> str:
    """``text`` cut with an ellipsis to fit ``width_px`` at the label font size."""
    limit = max(3, int(width_px / _CHAR_PX))
    return text if len(text) <= limit else text[: limit - 1] + "…"


def _legend(
    series: Sequence[Series], x0: float, y0: float, width: float
) -> tuple[list[str], float]:
    """Legend items laid out left to right, wrapping; returns the parts and the height used."""
    parts: list[str] = []
    x, y = x0, y0
    for s in series:
        label = _fit(s.name, 260)
        item = 18 + len(label) * _CHAR_PX + 14
        if x + item > x0 + width and x > x0:
            x, y = x0, y + 16
        parts.append(
            f'<rect x="{x:.1f}" y="{y - 9:.1f}" width="11" height="11" fill="{s.colour}">'
            f"<title>{escape(s.name)}</title></rect>"
            f'<text x="{x + 15:.1f}" y="{y:.1f}" font-size="11" fill="{_TEXT}">'
            f"{escape(label)}</text>"
        )
        x += item
    return parts, y - y0 + 16


def bar_chart(
    title: str,
    categories: Sequence[str],
    series: Sequence[Series],
    *,
    value_label: str,
    category_label: str = "",
    integer: bool = True,
    stacked: bool = False,
    horizontal: bool = False,
    width: int = 560,
) -> Markup | None:
    """An SVG bar chart, or ``None`` when there is nothing to draw.

    Args:
        title: Shown above the chart and as the SVG's accessible name.
        categories: One label per bar (group).
        series: Each with one value per category; one legend entry per series.
        value_label: The value axis's title.
        category_label: The category axis's title ("" for none).
        integer: Values are counts (whole-number ticks).
        stacked: Stack the series in one bar per category instead of side by side.
        horizontal: Bars grow to the right, categories down the left (for long names).
        width: Width in CSS pixels.

    Raises:
        ValueError: A series has a value count different from the categories', or a negative
            or non-finite value.

    """
    for s in series:
        if len(s.values) != len(categories):
            raise ValueError(f"series {s.name!r}: {len(s.values)} values, {len(categories)} bars")
        if any(not math.isfinite(v) or v < 0 for v in s.values):
            raise ValueError(f"series {s.name!r}: bar values must be finite and >= 0")
    if not categories or not series:
        return None
    totals = [
        sum(s.values[i] for s in series) if stacked else max(s.values[i] for s in series)
        for i in range(len(categories))
    ]
    if max(totals) <= 0:
        return None
    ticks = nice_ticks(max(totals), integer=integer)
    chart = _Chart(title, categories, series, ticks, value_label, category_label, stacked, width)
    return _horizontal(chart) if horizontal else _vertical(chart)


def _frame(title: str, width: float, height: float, body: list[str]) -> Markup:
    head = (
        f'<svg class="plot" xmlns="http://www.w3.org/2000/svg" role="img" '
        f'width="{width:.0f}" height="{height:.0f}" viewBox="0 0 {width:.0f} {height:.0f}" '
        f'aria-label="{escape(title)}" {_FONT}><title>{escape(title)}</title>'
        f'<text x="4" y="16" font-size="13" font-weight="600" fill="{_TEXT}">'
        f"{escape(_fit(title, width))}</text>"
    )
    return Markup(head + "".join(body) + "</svg>")  # every text part is escaped


def _bars(
    series: Sequence[Series], i: int, stacked: bool
) -> list[tuple[Series, float, float, int]]:
    """(series, start, end, slot) of category ``i``'s bars, in value units."""
    out: list[tuple[Series, float, float, int]] = []
    base = 0.0
    for k, s in enumerate(series):
        v = s.values[i]
        if stacked:
            if v > 0:
                out.append((s, base, base + v, 0))
            base += v
        else:
            out.append((s, 0.0, v, k))
    return out


def _tip(category: str, s: Series, value: float, many: bool) -> str:
    name = f"{category} · {s.name}" if many else category
    return f"<title>{escape(name)}: {escape(_fmt(value))}</title>"


def _vertical(c: _Chart) -> Markup:
    title, categories, series, ticks = c.title, c.categories, c.series, c.ticks
    value_label, category_label, stacked, width = (
        c.value_label,
        c.category_label,
        c.stacked,
        c.width,
    )
    left, right = 14 + 7 * max(len(_fmt(t)) for t in ticks) + 16, 10
    legend, legend_h = _legend(series, left, 36, width - left - right)
    top = 36 + legend_h
    plot_h = 170
    bottom = 46 if category_label else 30
    height = top + plot_h + bottom
    plot_w = width - left - right
    scale = plot_h / ticks[-1]
    body = list(legend)
    for t in ticks:
        y = top + plot_h - t * scale
        body.append(
            f'<line x1="{left}" x2="{left + plot_w}" y1="{y:.1f}" y2="{y:.1f}" stroke="{_GRID}"/>'
            f'<text x="{left - 5}" y="{y + 4:.1f}" font-size="11" text-anchor="end" '
            f'fill="{_TEXT}">{_fmt(t)}</text>'
        )
    slot = plot_w / len(categories)
    per = 1 if stacked else len(series)
    bar_w = min(48.0, slot * 0.8 / per)
    for i, category in enumerate(categories):
        x0 = left + i * slot + (slot - bar_w * per) / 2
        for s, start, end, k in _bars(series, i, stacked):
            if end <= start:
                continue
            y = top + plot_h - end * scale
            h = max((end - start) * scale, 0.5)
            body.append(
                f'<rect x="{x0 + k * bar_w:.1f}" y="{y:.1f}" width="{bar_w - 1:.1f}" '
                f'height="{h:.1f}" fill="{s.colour}">'
                f"{_tip(category, s, end - start, len(series) > 1)}</rect>"
            )
        body.append(
            f'<text x="{left + (i + 0.5) * slot:.1f}" y="{top + plot_h + 15}" font-size="11" '
            f'text-anchor="middle" fill="{_TEXT}">{escape(_fit(category, slot))}'
            f"<title>{escape(category)}</title></text>"
        )
    body.append(
        f'<line x1="{left}" x2="{left + plot_w}" y1="{top + plot_h}" y2="{top + plot_h}" '
        f'stroke="#888"/>'
        f'<text x="12" y="{top + plot_h / 2:.1f}" font-size="11" text-anchor="middle" '
        f'fill="{_TEXT}" transform="rotate(-90 12 {top + plot_h / 2:.1f})">'
        f"{escape(value_label)}</text>"
    )
    if category_label:
        body.append(
            f'<text x="{left + plot_w / 2:.1f}" y="{height - 8}" font-size="11" '
            f'text-anchor="middle" fill="{_TEXT}">{escape(category_label)}</text>'
        )
    return _frame(title, width, height, body)


def _horizontal(c: _Chart) -> Markup:
    title, categories, series, ticks = c.title, c.categories, c.series, c.ticks
    value_label, category_label, stacked, width = (
        c.value_label,
        c.category_label,
        c.stacked,
        c.width,
    )
    longest = max(len(name) for name in categories)
    left = min(240.0, 12 + longest * _CHAR_PX)
    right = 14 + 3.5 * len(_fmt(ticks[-1]))
    legend, legend_h = _legend(series, 4, 36, width - 8)
    top = 36 + legend_h
    per = 1 if stacked else len(series)
    bar_h = 16.0
    slot = bar_h * per + 10
    plot_h = slot * len(categories)
    plot_w = width - left - right
    height = top + plot_h + 40
    scale = plot_w / ticks[-1]
    body = list(legend)
    for t in ticks:
        x = left + t * scale
        body.append(
            f'<line x1="{x:.1f}" x2="{x:.1f}" y1="{top}" y2="{top + plot_h:.1f}" stroke="{_GRID}"/>'
            f'<text x="{x:.1f}" y="{top + plot_h + 14:.1f}" font-size="11" text-anchor="middle" '
            f'fill="{_TEXT}">{_fmt(t)}</text>'
        )
    for i, category in enumerate(categories):
        y0 = top + i * slot + 5
        for s, start, end, k in _bars(series, i, stacked):
            if end <= start:
                continue
            w = max((end - start) * scale, 0.5)
            body.append(
                f'<rect x="{left + start * scale:.1f}" y="{y0 + k * bar_h:.1f}" width="{w:.1f}" '
                f'height="{bar_h - 1:.1f}" fill="{s.colour}">'
                f"{_tip(category, s, end - start, len(series) > 1)}</rect>"
            )
        body.append(
            f'<text x="{left - 6:.1f}" y="{y0 + bar_h * per / 2 + 4:.1f}" font-size="11" '
            f'text-anchor="end" fill="{_TEXT}">{escape(_fit(category, left - 10))}'
            f"<title>{escape(category)}</title></text>"
        )
    body.append(
        f'<line x1="{left:.1f}" x2="{left:.1f}" y1="{top}" y2="{top + plot_h:.1f}" stroke="#888"/>'
        f'<text x="{left + plot_w / 2:.1f}" y="{height - 6:.1f}" font-size="11" '
        f'text-anchor="middle" fill="{_TEXT}">{escape(value_label)}</text>'
    )
    if category_label:
        body.append(
            f'<text x="{left - 6:.1f}" y="{top - 4}" font-size="11" text-anchor="end" '
            f'fill="#666">{escape(category_label)}</text>'
        )
    return _frame(title, width, height, body)
