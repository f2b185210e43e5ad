"""Plots for the HTML report, drawn with matplotlib's Agg backend as inline PNG data URIs.

Each function returns ``"data:image/png;base64,..."`` for an ``<img src>``, so the report needs
no network request and no script. Figures are built with :class:`matplotlib.figure.Figure`
directly (no pyplot global state), and PNG metadata is dropped so output is reproducible.
Labels taken from the data (formatter names, conversation ids) are drawn with
``parse_math=False``, so a ``$`` in them is text, not mathtext.
"""

from __future__ import annotations

import base64
import io
from collections.abc import Sequence

from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure
from matplotlib.ticker import MaxNLocator

from agent_eval.analysis.paired import PairComparison, VariantSummary
from agent_eval.analysis.stability import Stability

__all__ = ["confusion_plot", "cost_plot", "flips_plot", "stability_plot"]

_PASS, _FAIL = "#2e7d32", "#c62828"


def _data_uri(fig: Figure) -> str:
    FigureCanvasAgg(fig)
    buffer = io.BytesIO()
    fig.savefig(buffer, format="png", dpi=96, bbox_inches="tight", metadata={"Software": None})
    return "data:image/png;base64," + base64.b64encode(buffer.getvalue()).decode("ascii")


def confusion_plot(confusion: Sequence[Sequence[int]]) -> str:
    """Confusion matrix heat map; rows are labels (0, 1), columns judge verdicts (0, 1)."""
    fig = Figure(figsize=(3.4, 3.0))
    ax = fig.add_subplot()
    ax.imshow(confusion, cmap="Blues")
    for i in (0, 1):
        for j in (0, 1):
            ax.text(j, i, str(confusion[i][j]), ha="center", va="center", fontsize=14)
    ax.set_xticks([0, 1], ["verdict 0", "verdict 1"])
    ax.set_yticks([0, 1], ["label 0", "label 1"])
    ax.set_title("Judge vs labels")
    return _data_uri(fig)


def flips_plot(pairs: Sequence[PairComparison]) -> str:
    """Flips each way per formatter pair, as grouped horizontal bars."""
    fig = Figure(figsize=(6.0, 0.6 + 0.6 * len(pairs)))
    ax = fig.add_subplot()
    names = [f"{p.variant_a}\nvs {p.variant_b}" for p in pairs]
    rows = range(len(pairs))
    ax.barh(
        [r - 0.2 for r in rows],
        [p.flips_a_pass_b_fail for p in pairs],
        0.4,
        color=_FAIL,
        label="1 → 0",
    )
    ax.barh(
        [r + 0.2 for r in rows],
        [p.flips_a_fail_b_pass for p in pairs],
        0.4,
        color=_PASS,
        label="0 → 1",
    )
    ax.set_yticks(list(rows), names, fontsize=8, parse_math=False)
    ax.invert_yaxis()
    ax.set_xlabel("flipped conversations")
    ax.xaxis.set_major_locator(MaxNLocator(integer=True))
    ax.legend(fontsize=8)
    return _data_uri(fig)


def cost_plot(variants: Sequence[VariantSummary]) -> str:
    """Judge cost per variant in USD, or judge tokens when a price is unknown."""
    priced = all(v.cost_usd is not None for v in variants)
    values = [(v.cost_usd or 0.0) if priced else v.input_tokens + v.output_tokens for v in variants]
    fig = Figure(figsize=(6.0, 0.6 + 0.5 * len(variants)))
    ax = fig.add_subplot()
    ax.barh(range(len(variants)), values, color="#1565c0")
    ax.set_yticks(range(len(variants)), [v.variant for v in variants], fontsize=8, parse_math=False)
    ax.invert_yaxis()
    ax.set_xlabel("judge cost (USD)" if priced else "judge tokens (no price known)")
    ax.xaxis.set_major_locator(MaxNLocator(4))
    return _data_uri(fig)


def stability_plot(result: Stability) -> str:
    """Conversations by how many of the K repeats gave verdict 1 (0..K); the ends are unanimous."""
    k = result.repeats
    counts = [sum(c.n_pass == j for c in result.conversations) for j in range(k + 1)]
    colours = [_FAIL, *["#ef6c00"] * (k - 1), _PASS] if k >= 1 else [_FAIL]
    fig = Figure(figsize=(5.0, 2.8))
    ax = fig.add_subplot()
    ax.bar(range(k + 1), counts, color=colours[: k + 1])
    ax.set_xticks(range(k + 1))
    ax.set_xlabel(f"repeats with verdict 1 (of {k})")
    ax.set_ylabel("conversations")
    ax.yaxis.set_major_locator(MaxNLocator(integer=True))
    return _data_uri(fig)
