"""What the HTML report shows, computed from result rows: :class:`ReportData` and its builder.

:func:`build_report` takes a run's rows (and optionally a second run's, ``--compare``), the
stored renderings and optional labels, and derives every view the data supports:

- the run summary: counts by status, mean score with its 95% Wilson interval, judge tokens and
  cost, and the configuration identities (provenance) of the rows;
- one table row per result of repeat 0, with the conversation as the judge saw it;
- a comparison view when the rows hold more than one variant (formatter, judge, metric or run);
- a stability view for each variant with repeats;
- a calibration view for each variant when labels are given.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from agent_eval.analysis.binary_stats import wilson_interval
from agent_eval.analysis.calibration import Calibration, calibrate_results
from agent_eval.analysis.paired import Pricing, VariantComparison, compare_variants
from agent_eval.analysis.selection import ConfigurationIdentity, group_by
from agent_eval.analysis.stability import Stability, measure_stability
from agent_eval.report.renderings import RenderingKey, tokens_by_formatter
from agent_eval.result import MetricResult

__all__ = [
    "ConversationRow",
    "ReportData",
    "RunInfo",
    "RunSummary",
    "build_report",
    "variant_key",
]


class RunSummary(BaseModel):
    """Counts, mean score (95% Wilson interval), judge tokens and cost over repeat-0 rows."""

    model_config = ConfigDict(frozen=True)

    run_ids: list[str]
    n_results: int
    status_counts: dict[str, int]
    mean_score: float | None
    ci_low: float | None
    ci_high: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    identities: list[ConfigurationIdentity]


class RunInfo(BaseModel):
    """A run's record from the store: id, start time and command line (secrets removed)."""

    model_config = ConfigDict(frozen=True)

    run_id: str
    started_at: str
    command: str


class ConversationRow(BaseModel):
    """One result in the conversations table, with the text the judge saw (when known)."""

    model_config = ConfigDict(frozen=True)

    variant: str
    result: MetricResult
    rendering: str | None


class ReportData(BaseModel):
    """Everything the report template renders."""

    model_config = ConfigDict(frozen=True)

    title: str
    summary: RunSummary
    runs: list[RunInfo] = []
    rows: list[ConversationRow]
    comparison: VariantComparison | None = None
    stability: dict[str, Stability] = {}
    calibration: dict[str, Calibration] = {}


def variant_key(results: Sequence[MetricResult]) -> Callable[[MetricResult], str]:
    """A key naming each row's variant by the parts that vary: formatter, judge, metric, run."""
    varying = [
        field
        for field in ("formatter", "judge_model", "metric", "run_id")
        if len({getattr(r, field) for r in results}) > 1
    ]
    parts = varying if "formatter" in varying else ["formatter", *varying]
    return lambda r: " · ".join(str(getattr(r, p)) for p in parts)


def _summary(rows: Sequence[MetricResult], pricing: Pricing | None) -> RunSummary:
    first = [r for r in rows if r.repeat == 0]
    scores = [r.score for r in first if r.score is not None]
    ci = wilson_interval(int(sum(scores)), len(scores))
    costs = [
        pricing(m, sum(r.input_tokens for r in g), sum(r.output_tokens for r in g))
        if pricing
        else None
        for m, g in group_by(rows, lambda r: r.judge_model).items()
    ]
    return RunSummary(
        run_ids=sorted({r.run_id for r in rows}),
        n_results=len(first),
        status_counts=dict(Counter(r.status for r in first)),
        mean_score=sum(scores) / len(scores) if scores else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        input_tokens=sum(r.input_tokens for r in rows),
        output_tokens=sum(r.output_tokens for r in rows),
        cost_usd=None if not costs or None in costs else sum(c or 0.0 for c in costs),
        identities=sorted({ConfigurationIdentity.of(r) for r in rows}, key=str),
    )


def _rendered_tokens(
    texts: Mapping[RenderingKey, str], rows: Sequence[ConversationRow]
) -> dict[str, int]:
    """Token totals per formatter, only for formatters whose every row has a rendering."""
    complete = {r.result.formatter for r in rows} - {
        r.result.formatter for r in rows if r.rendering is None
    }
    wanted = {(r.result.conversation_id, r.result.formatter) for r in rows}
    totals = tokens_by_formatter({k: v for k, v in texts.items() if k in wanted})
    return {f: n for f, n in totals.items() if f in complete}


def build_report(
    results: Sequence[MetricResult],
    *,
    renderings: Mapping[RenderingKey, str] | None = None,
    labels: Mapping[str, int] | None = None,
    pricing: Pricing | None = None,
    title: str = "agent-eval report",
    runs: Sequence[RunInfo] = (),
) -> ReportData:
    """Derive every view the rows support (see the module docstring).

    Args:
        results: All rows to report on (one run, or several runs to compare).
        renderings: ``{(conversation_id, formatter): text}`` for the collapsible blocks.
        labels: ``{conversation_id: 0|1}``; enables the calibration view.
        pricing: Price function for judge cost (e.g. ``PriceTable.cost``).
        title: The page title.
        runs: The runs' records (command lines) for the provenance table.

    """
    key = variant_key(results)
    groups = group_by(results, key)
    texts = renderings or {}
    rows = [
        ConversationRow(
            variant=key(r), result=r, rendering=texts.get((r.conversation_id, r.formatter))
        )
        for r in results
        if r.repeat == 0
    ]
    return ReportData(
        title=title,
        summary=_summary(results, pricing),
        runs=list(runs),
        rows=rows,
        comparison=compare_variants(
            groups, labels=labels, pricing=pricing, rendered_tokens=_rendered_tokens(texts, rows)
        )
        if len(groups) > 1
        else None,
        stability={v: measure_stability(g) for v, g in groups.items() if any(r.repeat for r in g)},
        calibration={v: calibrate_results(g, labels) for v, g in groups.items() if labels}
        if labels
        else {},
    )
