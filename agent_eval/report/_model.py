"""What the HTML report shows, computed from result rows: :class:`ReportData` and its builder.

:func:`build_report` takes a run's rows (and optionally a second run's, ``--compare``), the
stored renderings and conversations, and optional labels, and derives every view the data
supports:

- the run summary, each figure counting one thing: conversations, variants and repeats; result
  rows of repeat 0 by status, and of all repeats; mean score of repeat 0 with its 95% Wilson
  interval (binary verdicts) or the plain mean (fractional scores); judge tokens and cost over
  all rows, with the rows answered from the judge-call cache counted apart;
- errors grouped by (status, type) with counts and the conversations they hit;
- one results-table row per result of repeat 0, with its label and agreement with it;
- one view per conversation: every result of every variant and repeat with all its inputs
  (reference, labels, inferred goal and end state, raw reply, atoms), the structured transcript
  when the conversation is known (stored by the run, or from ``--inputs``), and each rendering
  exactly as the judge saw it;
- a comparison view when the rows hold more than one variant (formatter, judge, metric or run),
  a stability view (all repeats side by side) for each variant with repeats, and a calibration
  view for each variant when labels are given;
- the agent's views when conversations are known: each conversation's trajectory
  (:mod:`agent_eval.report._trajectory`), failures per tool and per error type and verdicts
  against conversation shape (:mod:`agent_eval.report._agent_views`), readable names for
  conversations without an id, and, when given, each metric's history across runs of the same
  inputs (:mod:`agent_eval.report._history`). Conversations are listed by start time when every
  one has span times, else by id.

The statistics modules (scipy) are imported only for the views that need them.
"""

from __future__ import annotations

import hashlib
import math
from collections import Counter
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from statistics import NormalDist
from typing import TYPE_CHECKING, Literal

from pydantic import BaseModel, ConfigDict, JsonValue

from agent_eval._costs import NO_JUDGE
from agent_eval._natural_order import natural_key
from agent_eval._result import CONVERSATION_UNIT, MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.analysis._selection import ConfigurationIdentity
from agent_eval.analysis._steering import SteeredUnit, steered_units
from agent_eval.report._agent_views import (
    ErrorTypeFailures,
    ShapeView,
    ToolFailures,
    display_name,
    shape_views,
    start_time,
    tool_failures,
)
from agent_eval.report._trajectory import Trajectory, trajectory
from agent_eval.run._outcomes import NO_FORMATTER

if TYPE_CHECKING:
    from agent_eval.analysis._calibration import Calibration
    from agent_eval.analysis._paired import Pricing, VariantComparison
    from agent_eval.analysis._stability import Stability
    from agent_eval.report._history import HistoryPoint
    from agent_eval.run._artifacts import RenderingKey

__all__ = [
    "ConfigurationIdentity",
    "ConversationRow",
    "ConversationView",
    "ErrorGroup",
    "ReportData",
    "RunInfo",
    "RunSummary",
    "StabilityView",
    "anchor",
    "build_report",
    "is_cached",
    "natural_key",
    "variant_key",
]

Agreement = Literal["agree", "disagree", "unlabelled", "not scored"]


class RunSummary(BaseModel):
    """The run's figures, each counting one thing (see the module docstring).

    Attributes:
        n_conversations: Distinct conversation ids.
        n_variants: Distinct variants (formatter, judge, metric, run).
        repeats: The largest number of repeats of one (conversation, variant).
        n_results: Rows of repeat 0 (one per unit and variant; a unit is the conversation or
            one of its turns).
        status_counts: Rows of repeat 0 by status.
        n_rows: All rows, every repeat.
        status_counts_all: All rows by status.
        mean_score: Mean score (in [0, 1]) of the ``ok`` rows of repeat 0; ``None`` when the
            rows are of several metrics (their scores answer different questions) or of several
            variants (a compare run: pooled, each conversation would count once per variant).
        metric_means: Mean score of the ``ok`` rows of repeat 0 per metric.
        variant_means: Mean score of the ``ok`` rows of repeat 0 per variant, in the
            comparison's order (set when the rows hold more than one variant; the page shows
            them instead of ``metric_means`` when there are more variants than metrics).
        ci_low / ci_high: Its 95% Wilson interval (Wilson 1927) when every verdict is binary
            (``"0"``/``"1"``); ``None`` for fractional scores (from atoms).
        input_tokens / output_tokens: Judge tokens over all rows, retries included, and over
            the rows they replaced (``n_superseded``); a row whose usage was not reported
            counts its estimate (:attr:`MetricResult.best_tokens`).
        n_usage_unknown: Rows (replaced ones included) whose usage was not reported (their
            tokens are estimates).
        n_superseded: Rows a later invocation of the run replaced (``--resume`` of units
            skipped on the budget, ``--retry-errors``;
            :func:`~agent_eval.run._store.load_superseded`): not shown, but their judge calls
            were made, so their tokens and cost are in the totals.
        n_cached: Rows of all repeats whose every judge reply came from the judge-call cache.
        cost_usd: Judge cost over all rows and the rows they replaced, ``None`` when the price
            of a model that was sent a call is unknown; $0 for a model whose every call came
            from the judge-call cache, and for judge-free metrics (no judge called), as in the
            terminal's usage table.

    """

    model_config = ConfigDict(frozen=True)

    run_ids: list[str]
    n_conversations: int
    n_variants: int
    repeats: int
    n_results: int
    status_counts: dict[str, int]
    n_rows: int
    status_counts_all: dict[str, int]
    mean_score: float | None
    metric_means: dict[str, float] = {}
    variant_means: dict[str, float] = {}
    ci_low: float | None
    ci_high: float | None
    input_tokens: int
    output_tokens: int
    n_cached: int
    cost_usd: float | None
    identities: list[ConfigurationIdentity]
    n_usage_unknown: int = 0
    n_superseded: int = 0


class RunInfo(BaseModel):
    """A run's record from the store: id, start time and command line (secrets removed).

    ``record`` is its reproducibility record flattened to dotted keys
    (:func:`agent_eval.run._record.flatten`), each value as text.
    """

    model_config = ConfigDict(frozen=True)

    run_id: str
    started_at: str
    command: str
    record: dict[str, str] = {}


class ConversationRow(BaseModel):
    """One result of repeat 0 in the results table.

    Attributes:
        variant: The variant's name (see :func:`variant_key`).
        result: The row.
        label: The conversation's binary label, when labels are known.
        agreement: The verdict against the label: ``agree``/``disagree``, ``unlabelled``, or
            ``not scored`` (the row is not ``ok``, or its verdict is not binary).
        cached: Every judge reply of the row came from the judge-call cache (:func:`is_cached`).

    """

    model_config = ConfigDict(frozen=True)

    variant: str
    result: MetricResult
    label: int | None = None
    agreement: Agreement = "unlabelled"
    cached: bool = False


class RenderingView(BaseModel):
    """A conversation as the judge saw it under one formatter (cut at the page's limit).

    Attributes:
        formatter: The formatter identity; several, joined by ``", "``, when they rendered the
            conversation to the same text (shown once).
        text: The text shown.
        omitted: Characters cut off the end (the full text is in ``renderings.jsonl``).

    """

    model_config = ConfigDict(frozen=True)

    formatter: str
    text: str
    omitted: int = 0


class ConversationView(BaseModel):
    """Everything the report knows about one conversation.

    Attributes:
        conversation_id: The id.
        label: Its binary label, when labels are known.
        labels: The labels the conversation itself carries (e.g. tau-bench rewards), verbatim.
        reference: The reference the rows used, else the one the conversation carries.
        trace: The normalized conversation, when the run stored it or ``--inputs`` gave it.
        renderings: One per formatter the rows name, when stored or re-rendered.
        results: Every result row of the conversation: the conversation unit first, then turns
            in order; within a unit, variants in report order, then repeats.
        name: What the page calls it: the id, or for a conversation without one its first
            user message and a short id (:func:`~agent_eval.report._agent_views.display_name`).
        trajectory: Its steps as a timeline, when the conversation is known.
        start_ns: When its first span started (Unix ns), when it has span times.

    """

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    name: str = ""
    trajectory: Trajectory | None = None
    start_ns: int | None = None
    label: int | None = None
    labels: dict[str, JsonValue] = {}
    reference: str | None = None
    trace: AgentTrace | None = None
    renderings: list[RenderingView] = []
    results: list[ConversationRow] = []


class ErrorGroup(BaseModel):
    """Rows (all repeats) that are not ``ok``, grouped by status and error type."""

    model_config = ConfigDict(frozen=True)

    status: str
    error_type: str
    count: int
    conversation_ids: list[str]
    example: str


@dataclass(frozen=True)
class StabilityView:
    """One variant's stability, with every repeat's row per conversation side by side.

    Attributes:
        stability: The statistics (:func:`agent_eval.analysis._stability.measure_stability`).
        repeats: ``{conversation_id: [row of repeat 0, row of repeat 1, ...]}`` (``None`` for a
            repeat with no row).

    """

    stability: Stability
    repeats: dict[str, list[MetricResult | None]]


@dataclass(frozen=True)
class ReportData:
    """Everything the report template renders.

    A dataclass, not a pydantic model, so that building one does not import the statistics
    modules behind its comparison, stability and calibration views when a run has none.
    """

    title: str
    summary: RunSummary
    rows: list[ConversationRow]
    runs: list[RunInfo] = field(default_factory=list)
    conversations: list[ConversationView] = field(default_factory=list)
    errors: list[ErrorGroup] = field(default_factory=list)
    steering: list[SteeredUnit] = field(default_factory=list)
    """Units whose content tries to steer the judge (:mod:`agent_eval.analysis._steering`)."""
    comparison: VariantComparison | None = None
    stability: dict[str, StabilityView] = field(default_factory=dict)
    calibration: dict[str, Calibration] = field(default_factory=dict)
    labelled: bool = False
    subjects: dict[str, str] = field(default_factory=dict)
    """``{subject: conversation_id}``: what a subject id (``c1/turn:2``) links to."""
    units: bool = False
    """Some rows score a unit other than the whole conversation (show the unit column)."""
    rendering_limit: int = 0
    """Characters of each rendering the page keeps (see :func:`rendering_limit`)."""
    names: dict[str, str] = field(default_factory=dict)
    """``{conversation_id: readable name}`` of the conversations named other than by their id."""
    tools: list[ToolFailures] = field(default_factory=list)
    """Calls and failures per tool over the known conversations, most failures first."""
    error_types: list[ErrorTypeFailures] = field(default_factory=list)
    """The known conversations' span errors and flagged tool results by error type."""
    shapes: list[ShapeView] = field(default_factory=list)
    """Each variant's scores against conversation shape."""
    history: dict[str, list[HistoryPoint]] = field(default_factory=dict)
    """``{metric: one point per run}`` across runs of the same inputs, when asked for."""
    agent_views: bool = True
    """Whether the page shows the agent's views (off: the page as before issue 31)."""

    @property
    def renderings_bounded(self) -> bool:
        """Whether renderings are cut below :data:`RENDERING_LIMIT` to bound the page."""
        return 0 < self.rendering_limit < RENDERING_LIMIT


def anchor(conversation_id: str) -> str:
    """The HTML id of a conversation's section: ``c-`` and 12 hex of the id's sha256."""
    return "c-" + hashlib.sha256(conversation_id.encode("utf-8")).hexdigest()[:12]


def is_cached(r: MetricResult) -> bool:
    """The row made no judge request: an ``ok`` row with 0 attempts was answered from the cache.

    ``attempts`` counts the HTTP requests (or local generations) a row made, and a cached reply
    makes none (:class:`agent_eval.judges._base.JudgeReply`). Rows of judge-free metrics
    (``judge_model == "none"``) make none either, and are not cached. Rows that count their
    judge calls (``judge_calls``, written since agent-eval records cache hits per row) are
    cached when every call was (:attr:`MetricResult.is_cached`).
    """
    if r.judge_calls:
        return r.status == "ok" and r.is_cached
    return r.status == "ok" and r.attempts == 0 and r.judge_model != NO_FORMATTER


def variant_key(results: Sequence[MetricResult]) -> Callable[[MetricResult], str]:
    """A key naming each row's variant by the parts that vary: formatter, judge, metric, run."""
    varying = [
        part
        for part in ("formatter", "judge_model", "metric", "run_id")
        if len({getattr(r, part) for r in results}) > 1
    ]
    parts = varying if "formatter" in varying else ["formatter", *varying]
    return lambda r: " · ".join(str(getattr(r, p)) for p in parts)


def _comparable(groups: Mapping[str, list[MetricResult]]) -> dict[str, list[MetricResult]]:
    """The variants a paired comparison may pair: those of one binary metric.

    Variants of different metrics answer different questions, and the paired statistics
    (agreement, kappa, McNemar) need binary verdicts: of the binary metrics with two or more
    variants, the one with the most variants is compared (ties: the first by name).
    """
    by_metric: dict[str, dict[str, list[MetricResult]]] = {}
    for name, rows in groups.items():
        metrics = {r.metric for r in rows}
        binary = all(r.verdict in ("0", "1") for r in rows if r.status == "ok")
        if len(metrics) == 1 and binary:
            by_metric.setdefault(metrics.pop(), {})[name] = rows
    candidates = sorted(by_metric.items(), key=lambda item: (-len(item[1]), item[0]))
    return candidates[0][1] if candidates and len(candidates[0][1]) > 1 else {}


def _wilson(successes: int, n: int) -> tuple[float, float] | None:
    """Wilson score interval at 95% (Wilson 1927), the closed form; ``None`` for ``n == 0``."""
    if n == 0:
        return None
    z = NormalDist().inv_cdf(0.975)
    p = successes / n
    centre = (p + z * z / (2 * n)) / (1 + z * z / n)
    half = z / (1 + z * z / n) * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n))
    return max(0.0, centre - half), min(1.0, centre + half)


def _judge_free(model: str, rows: Sequence[MetricResult]) -> bool:
    """Rows of judge-free metrics: judge model ``"none"`` and no judge call asked."""
    return model == NO_JUDGE and not any(r.attempts or r.judge_calls for r in rows)


def _model_cost(model: str, rows: Sequence[MetricResult], pricing: Pricing | None) -> float | None:
    """USD the rows of one judge model spent; $0 when every call came from the cache.

    The terminal's usage table (:mod:`agent_eval._costs`) counts a group answered wholly from
    the judge-call cache as $0 whatever its price; so does the report. ``None`` when the
    model's price is unknown and some call was sent.
    """
    judge_calls = sum(r.judge_calls for r in rows)
    if judge_calls and sum(r.cached_calls for r in rows) == judge_calls:
        return 0.0
    if pricing is None:
        return None
    return pricing(model, sum(r.best_tokens[0] for r in rows), sum(r.best_tokens[1] for r in rows))


def _summary(
    rows: Sequence[MetricResult],
    key: Callable[[MetricResult], str],
    pricing: Pricing | None,
    superseded: Sequence[MetricResult] = (),
) -> RunSummary:
    first = [r for r in rows if r.repeat == 0]
    scores = [r.score for r in first if r.score is not None]
    binary = all(r.verdict in ("0", "1") for r in first if r.status == "ok")
    by_metric: dict[str, list[float]] = {}
    for r in first:
        if r.score is not None:
            by_metric.setdefault(r.metric, []).append(r.score)
    by_variant: dict[str, list[float]] = {}
    for r in first:
        if r.score is not None:
            by_variant.setdefault(key(r), []).append(r.score)
    single = len({r.metric for r in first}) <= 1 and len({key(r) for r in first}) <= 1
    ci = _wilson(int(sum(scores)), len(scores)) if binary and single else None
    spent = [*rows, *superseded]  # every row whose judge calls were made
    by_model: dict[str, list[MetricResult]] = {}
    for r in spent:
        by_model.setdefault(r.judge_model, []).append(r)
    costs = [_model_cost(m, g, pricing) for m, g in by_model.items() if not _judge_free(m, g)]
    per_unit = Counter((r.subject, key(r)) for r in rows)
    return RunSummary(
        run_ids=sorted({r.run_id for r in rows}, key=natural_key),
        n_conversations=len({r.conversation_id for r in rows}),
        n_variants=len({key(r) for r in rows}),
        repeats=max(per_unit.values(), default=0),
        n_results=len(first),
        status_counts=dict(Counter(r.status for r in first)),
        n_rows=len(rows),
        status_counts_all=dict(Counter(r.status for r in rows)),
        mean_score=sum(scores) / len(scores) if scores and single else None,
        metric_means={m: sum(v) / len(v) for m, v in sorted(by_metric.items())},
        variant_means={v: sum(x) / len(x) for v, x in by_variant.items()}
        if len(by_variant) > 1
        else {},
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        input_tokens=sum(r.best_tokens[0] for r in spent),
        output_tokens=sum(r.best_tokens[1] for r in spent),
        n_usage_unknown=sum(not r.usage_known for r in spent),
        n_superseded=len(superseded),
        n_cached=sum(is_cached(r) for r in rows),
        cost_usd=None if None in costs else sum(c or 0.0 for c in costs),
        identities=sorted({ConfigurationIdentity.of(r) for r in rows}, key=str),
    )


def _errors(rows: Sequence[MetricResult]) -> list[ErrorGroup]:
    groups: dict[tuple[str, str], list[MetricResult]] = {}
    for r in rows:
        if r.status != "ok":
            groups.setdefault((r.status, r.error_type or "unknown"), []).append(r)
    return sorted(
        (
            ErrorGroup(
                status=status,
                error_type=error_type,
                count=len(g),
                conversation_ids=sorted({r.conversation_id for r in g}, key=natural_key),
                example=next((r.error_message for r in g if r.error_message), ""),
            )
            for (status, error_type), g in groups.items()
        ),
        key=lambda e: (-e.count, e.status, e.error_type),
    )


def _agreement(r: MetricResult, label: int | None) -> Agreement:
    if r.status != "ok" or r.verdict not in ("0", "1"):
        return "not scored"
    if label is None:
        return "unlabelled"
    return "agree" if int(r.score or 0) == label else "disagree"


def _rendered_tokens(
    texts: Mapping[RenderingKey, str], rows: Sequence[ConversationRow]
) -> dict[str, int]:
    """Token totals per formatter, only for formatters whose every row has a rendering."""
    from agent_eval.run._artifacts import tokens_by_formatter

    keys = {(r.result.conversation_id, r.result.formatter) for r in rows}
    complete = {r.result.formatter for r in rows} - {f for c, f in keys if (c, f) not in texts}
    totals = tokens_by_formatter({k: v for k, v in texts.items() if k in keys})
    return {f: n for f, n in totals.items() if f in complete}


RENDERING_LIMIT = 200_000
"""Characters of one rendering shown in the page; the rest is counted in a note."""
RENDERINGS_BUDGET = 10_000_000
"""Characters of renderings one page holds at most (about 10 MB): past it, every rendering is
cut to an equal share (at least :data:`RENDERING_FLOOR`), so a 3 x 5,000 compare stays a page
a browser opens. The structured transcript of each conversation is shown whole either way."""
RENDERING_FLOOR = 500
"""Characters of a rendering shown however many renderings the page holds."""


def rendering_limit(lengths: Sequence[int], budget: int = RENDERINGS_BUDGET) -> int:
    """Characters of each rendering a page shows, given the lengths of the distinct ones.

    Returns:
        :data:`RENDERING_LIMIT` when everything fits ``budget`` after that cut; else an equal
        share of ``budget`` per rendering, at least :data:`RENDERING_FLOOR`.

    """
    if sum(min(n, RENDERING_LIMIT) for n in lengths) <= budget:
        return RENDERING_LIMIT
    return max(RENDERING_FLOOR, min(RENDERING_LIMIT, budget // len(lengths)))


def _distinct_renderings(
    cid: str, formatters: Iterable[str], texts: Mapping[RenderingKey, str]
) -> dict[str, list[str]]:
    """``{text: [formatters]}``: renderings of ``cid``, identical texts once."""
    by_text: dict[str, list[str]] = {}
    for f in formatters:
        if (cid, f) in texts:
            by_text.setdefault(texts[(cid, f)], []).append(f)
    return by_text


def _conversation_views(
    rows: Sequence[ConversationRow],
    all_rows: Sequence[ConversationRow],
    texts: Mapping[RenderingKey, str],
    traces: Mapping[str, AgentTrace],
    labels: Mapping[str, int],
    *,
    limit: int = RENDERING_LIMIT,
    agent: bool = True,
) -> list[ConversationView]:
    by_id: dict[str, list[ConversationRow]] = {}
    for row in all_rows:
        by_id.setdefault(row.result.conversation_id, []).append(row)
    order = {v: i for i, v in enumerate(dict.fromkeys(r.variant for r in rows))}
    views = []
    for cid in _conversation_order(by_id, traces):
        results = sorted(
            by_id[cid],
            key=lambda x: (
                x.result.unit_id != CONVERSATION_UNIT,
                natural_key(x.result.unit_id),
                order.get(x.variant, 0),
                x.result.repeat,
            ),
        )
        trace = traces.get(cid)
        formatters = dict.fromkeys(x.result.formatter for x in results)
        renderings = [
            RenderingView(
                formatter=", ".join(names), text=text[:limit], omitted=max(0, len(text) - limit)
            )
            for text, names in _distinct_renderings(cid, formatters, texts).items()
        ]
        reference = next((x.result.reference for x in results if x.result.reference), None)
        views.append(
            ConversationView(
                conversation_id=cid,
                name=display_name(cid, trace),
                trajectory=trajectory(trace) if trace is not None and agent else None,
                start_ns=start_time(trace),
                label=labels.get(cid),
                labels=dict(trace.labels) if trace else {},
                reference=reference or (trace.reference if trace else None),
                trace=trace,
                renderings=renderings,
                results=results,
            )
        )
    return views


def _conversation_order(ids: Iterable[str], traces: Mapping[str, AgentTrace]) -> list[str]:
    """By start time when every conversation has span times (ties by id), else by id."""
    starts = {cid: start_time(traces.get(cid)) for cid in ids}
    if starts and all(t is not None for t in starts.values()):
        return sorted(starts, key=lambda cid: (starts[cid] or 0, natural_key(cid)))
    return sorted(starts, key=natural_key)


def _stability(groups: Mapping[str, Sequence[MetricResult]]) -> dict[str, StabilityView]:
    views: dict[str, StabilityView] = {}
    for variant, g in groups.items():
        if not any(r.repeat for r in g):
            continue
        from agent_eval.analysis._stability import measure_stability

        st = measure_stability(g)
        k = max(r.repeat for r in g) + 1
        repeats: dict[str, list[MetricResult | None]] = {}
        for r in g:
            slots = repeats.setdefault(r.subject, [None] * k)
            slots[r.repeat] = r
        st = st.model_copy(
            update={
                "conversations": sorted(
                    st.conversations, key=lambda c: natural_key(c.conversation_id)
                )
            }
        )
        views[variant] = StabilityView(stability=st, repeats=repeats)
    return views


def build_report(
    results: Sequence[MetricResult],
    *,
    renderings: Mapping[RenderingKey, str] | None = None,
    traces: Mapping[str, AgentTrace] | None = None,
    labels: Mapping[str, int] | None = None,
    pricing: Pricing | None = None,
    title: str = "agent-eval report",
    runs: Sequence[RunInfo] = (),
    rendering_budget: int = RENDERINGS_BUDGET,
    superseded: Sequence[MetricResult] = (),
    history: Mapping[str, list[HistoryPoint]] | None = None,
    agent_views: bool = True,
) -> ReportData:
    """Derive every view the rows support (see the module docstring).

    Args:
        results: All rows to report on (one run, or several runs to compare).
        renderings: ``{(conversation_id, formatter): text}``, the judge's view of each.
        traces: ``{conversation_id: AgentTrace}`` for the structured transcripts.
        labels: ``{conversation_id: 0|1}``; enables agreement and the calibration view.
        pricing: Price function for judge cost (e.g. ``PriceTable.cost``).
        title: The page title.
        runs: The runs' records (command lines) for the provenance table.
        rendering_budget: Characters of renderings the page holds at most
            (:func:`rendering_limit`); identical renderings of a conversation count once.
        superseded: The rows later rows of the same key replaced
            (:func:`~agent_eval.run._store.load_superseded`): only their judge tokens and cost
            count, in the summary's totals.
        history: Each metric's mean per run across runs of the same inputs
            (:func:`~agent_eval.report._history.history_points`).
        agent_views: Compute the agent's views (trajectories, tool failures, verdicts against
            shape, history); ``False`` gives the page as it was before them (a baseline).

    """
    key = variant_key(results)
    order = _formatter_order(runs)
    results = sorted(results, key=lambda r: order.get(r.formatter, len(order)))  # stable
    groups: dict[str, list[MetricResult]] = {}
    for r in results:
        groups.setdefault(key(r), []).append(r)
    texts = renderings or {}
    truth = labels or {}

    def row(r: MetricResult) -> ConversationRow:
        label = truth.get(r.subject)
        return ConversationRow(
            variant=key(r),
            result=r,
            label=label,
            agreement=_agreement(r, label),
            cached=is_cached(r),
        )

    all_rows = [row(r) for r in results]
    rows = sorted(
        (x for x in all_rows if x.result.repeat == 0),
        key=lambda x: (natural_key(x.result.conversation_id), natural_key(x.result.unit_id)),
    )
    comparison = None
    comparable = _comparable(groups)
    if len(comparable) > 1:
        from agent_eval.analysis._paired import compare_variants

        comparison = compare_variants(
            comparable,
            labels=labels,
            pricing=pricing,
            rendered_tokens=_rendered_tokens(texts, rows),
        )
        comparison = _with_replaced(comparison, comparable, superseded, key, pricing)
    calibration: dict[str, Calibration] = {}
    if labels:
        from agent_eval.analysis._calibration import calibrate_results

        calibration = {v: calibrate_results(g, labels) for v, g in groups.items()}
    limit = rendering_limit(_shown_lengths(all_rows, texts), rendering_budget)
    scored = {r.conversation_id for r in results}
    known = {cid: t for cid, t in (traces or {}).items() if cid in scored}
    conversations = _conversation_views(
        rows, all_rows, texts, known, truth, limit=limit, agent=agent_views
    )
    tools, error_types = tool_failures(known) if agent_views else ([], [])
    return ReportData(
        title=title,
        summary=_summary(results, key, pricing, superseded),
        runs=list(runs),
        rows=rows,
        conversations=conversations,
        errors=_errors(results),
        steering=steered_units(results),
        comparison=comparison,
        stability=_stability(groups),
        calibration=calibration,
        labelled=bool(labels),
        subjects={r.subject: r.conversation_id for r in results},
        units=any(r.unit_id != CONVERSATION_UNIT for r in results),
        rendering_limit=limit,
        names={c.conversation_id: c.name for c in conversations if c.name != c.conversation_id},
        tools=tools,
        error_types=error_types,
        shapes=shape_views([(r.variant, r.result) for r in rows], known) if agent_views else [],
        history=dict(history or {}) if agent_views else {},
        agent_views=agent_views,
    )


def _with_replaced(
    comparison: VariantComparison,
    groups: Mapping[str, Sequence[MetricResult]],
    superseded: Sequence[MetricResult],
    key: Callable[[MetricResult], str],
    pricing: Pricing | None,
) -> VariantComparison:
    """``comparison`` with each variant's replaced rows in its tokens, calls and cost.

    The summary's totals count the rows later rows replaced; so does each variant's line
    (repeat 0, as the comparison counts), so that the variants add up to them.
    """
    replaced: dict[str, list[MetricResult]] = {}
    for r in superseded:
        if r.repeat == 0:
            replaced.setdefault(key(r), []).append(r)
    if not replaced:
        return comparison
    variants = []
    for v in comparison.variants:
        extra = replaced.get(v.variant, [])
        if not extra:
            variants.append(v)
            continue
        spent = [r for r in groups.get(v.variant, ()) if r.repeat == 0] + extra
        by_model: dict[str, list[MetricResult]] = {}
        for r in spent:
            by_model.setdefault(r.judge_model, []).append(r)
        costs = [_model_cost(m, g, pricing) for m, g in by_model.items() if not _judge_free(m, g)]
        update = {
            "input_tokens": v.input_tokens + sum(r.best_tokens[0] for r in extra),
            "output_tokens": v.output_tokens + sum(r.best_tokens[1] for r in extra),
            "judge_calls": v.judge_calls + sum(r.judge_calls for r in extra),
            "cached_calls": v.cached_calls + sum(r.cached_calls for r in extra),
            "usage_unknown": v.usage_unknown + sum(not r.usage_known for r in extra),
            "n_replaced": len(extra),
            "cost_usd": None if None in costs or pricing is None else sum(c or 0.0 for c in costs),
        }
        variants.append(v.model_copy(update=update))
    return comparison.model_copy(update={"variants": variants})


def _formatter_order(runs: Sequence[RunInfo]) -> dict[str, int]:
    """Each formatter's position in the ``--formatters`` list a compare run was given.

    The run record keeps it (``request.formatters[i]``); variants follow it, so the report
    pairs A and B as ``compare`` printed them. Empty for runs without such a list.
    """
    order: dict[str, int] = {}
    for run in runs:
        listed = sorted(
            (int(k[len(_FORMATTERS) : -1]), v)
            for k, v in run.record.items()
            if k.startswith(_FORMATTERS) and k.endswith("]") and k[len(_FORMATTERS) : -1].isdigit()
        )
        for _, formatter in listed:
            order.setdefault(formatter, len(order))
    return order


_FORMATTERS = "request.formatters["


def _shown_lengths(rows: Sequence[ConversationRow], texts: Mapping[RenderingKey, str]) -> list[int]:
    """Lengths of the distinct renderings the page shows (one per conversation and text)."""
    by_id: dict[str, dict[str, None]] = {}
    for row in rows:
        by_id.setdefault(row.result.conversation_id, {})[row.result.formatter] = None
    return [
        len(text)
        for cid, formatters in by_id.items()
        for text in _distinct_renderings(cid, formatters, texts)
    ]
