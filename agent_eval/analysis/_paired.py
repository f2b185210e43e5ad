"""Paired comparison of formatter variants: whether the rendering changes the verdict.

The same conversations are scored once per variant (usually one formatter each, same metric,
prompts and judge). For every variant: counts by status, mean score with a 95% Wilson interval,
judge tokens and cost, and (with labels) accuracy and Cohen's kappa against them. For every pair
of variants, on the conversations both scored ``ok``: agreement, flips each way, Cohen's kappa,
the exact McNemar p-value and the flipped conversations with both reasons. Statistics come from
:mod:`agent_eval.analysis._binary_stats` (short formulas and scipy).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from itertools import combinations

from pydantic import BaseModel, ConfigDict

from agent_eval._result import MetricResult
from agent_eval.analysis._binary_stats import cohen_kappa, mcnemar_p, wilson_interval
from agent_eval.analysis._selection import group_by, verdicts

__all__ = [
    "FlippedConversation",
    "PairComparison",
    "Pricing",
    "VariantComparison",
    "VariantSummary",
    "compare_formatters",
    "compare_pair",
    "compare_variants",
    "summarize_variant",
]

Pricing = Callable[[str, int, int], float | None]
"""``(judge_model, input_tokens, output_tokens) -> USD``, or ``None`` when the price is unknown."""


class VariantSummary(BaseModel):
    """One variant's results: counts, mean score (95% Wilson interval), tokens, cost, labels.

    ``input_tokens``/``output_tokens``/``cost_usd`` are what the judge calls of this run cost:
    a reply from the judge-call cache costs nothing, so a variant scored after another that
    shared its cache can look cheaper. ``rendered_tokens`` (o200k tokens of the conversations
    as this variant's formatter renders them, when known) compares the variants' prompt sizes
    independently of the cache. ``judge_calls`` / ``cached_calls`` count the judge calls and
    those answered from the cache; ``usage_unknown`` counts rows whose usage the endpoint did
    not report, whose tokens (and so the cost) are then the estimate of
    :attr:`MetricResult.best_tokens <agent_eval._result.MetricResult.best_tokens>`.
    ``n_replaced`` counts rows a later invocation of the run replaced (``--resume``,
    ``--retry-errors``) whose calls the tokens, calls and cost include (the report adds them,
    so that its variants add up to its totals).
    """

    model_config = ConfigDict(frozen=True)

    variant: str
    formatter: str
    formatter_fingerprint: str
    judge_model: str
    n_ok: int
    n_error: int
    n_skipped: int
    n_pass: int
    mean_score: float | None
    ci_low: float | None
    ci_high: float | None
    input_tokens: int
    output_tokens: int
    cost_usd: float | None
    rendered_tokens: int | None = None
    judge_calls: int = 0
    cached_calls: int = 0
    usage_unknown: int = 0
    n_replaced: int = 0
    n_labelled: int = 0
    label_agree: int = 0
    label_accuracy: float | None = None
    label_kappa: float | None = None


class FlippedConversation(BaseModel):
    """A conversation whose verdict differs between the two variants of a pair."""

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    verdict_a: str
    verdict_b: str
    reason_a: str | None
    reason_b: str | None


class PairComparison(BaseModel):
    """Two variants on the conversations both scored ``ok``.

    ``flips_a_pass_b_fail`` counts verdict 1 under ``a`` and 0 under ``b``; the other way round
    is ``flips_a_fail_b_pass``. ``mcnemar_p`` is the exact two-sided p-value.
    """

    model_config = ConfigDict(frozen=True)

    variant_a: str
    variant_b: str
    n_paired: int
    n_agree: int
    agreement: float | None
    flips_a_pass_b_fail: int
    flips_a_fail_b_pass: int
    kappa: float | None
    mcnemar_p: float
    flipped: list[FlippedConversation]


class VariantComparison(BaseModel):
    """The per-variant summaries and every pair, in the order the variants were given."""

    model_config = ConfigDict(frozen=True)

    variants: list[VariantSummary]
    pairs: list[PairComparison]


def summarize_variant(
    variant: str,
    results: Sequence[MetricResult],
    *,
    labels: Mapping[str, int] | None = None,
    pricing: Pricing | None = None,
    rendered_tokens: Mapping[str, int] | None = None,
) -> VariantSummary:
    """Summarize one variant's result rows (repeat 0 only).

    ``rendered_tokens`` maps a formatter identity to its rendered-conversation token total.
    """
    rows = [r for r in results if r.repeat == 0]
    scored = verdicts(rows)
    n_pass = sum(scored.values())
    ci = wilson_interval(n_pass, len(scored))
    tokens_in = sum(r.best_tokens[0] for r in rows)
    tokens_out = sum(r.best_tokens[1] for r in rows)
    first = rows[0] if rows else None
    summary = VariantSummary(
        variant=variant,
        formatter=first.formatter if first else "",
        formatter_fingerprint=first.formatter_fingerprint if first else "",
        judge_model=first.judge_model if first else "",
        n_ok=len(scored),
        n_error=sum(r.status == "error" for r in rows),
        n_skipped=sum(r.status == "skipped" for r in rows),
        n_pass=n_pass,
        mean_score=n_pass / len(scored) if scored else None,
        ci_low=ci[0] if ci else None,
        ci_high=ci[1] if ci else None,
        input_tokens=tokens_in,
        output_tokens=tokens_out,
        cost_usd=_cost(rows, pricing),
        rendered_tokens=(rendered_tokens or {}).get(first.formatter) if first else None,
        judge_calls=sum(r.judge_calls for r in rows),
        cached_calls=sum(r.cached_calls for r in rows),
        usage_unknown=sum(not r.usage_known for r in rows),
    )
    return _with_labels(summary, scored, labels) if labels else summary


def _cost(rows: Sequence[MetricResult], pricing: Pricing | None) -> float | None:
    if pricing is None:
        return None
    total = 0.0
    for model, group in group_by(rows, lambda r: r.judge_model).items():
        price = pricing(
            model, sum(r.best_tokens[0] for r in group), sum(r.best_tokens[1] for r in group)
        )
        if price is None:
            return None
        total += price
    return total


def _with_labels(
    summary: VariantSummary, scored: Mapping[str, int], labels: Mapping[str, int]
) -> VariantSummary:
    common = sorted(set(scored) & set(labels))
    truth, pred = [labels[c] for c in common], [scored[c] for c in common]
    agree = sum(t == p for t, p in zip(truth, pred, strict=True))
    return summary.model_copy(
        update={
            "n_labelled": len(common),
            "label_agree": agree,
            "label_accuracy": agree / len(common) if common else None,
            "label_kappa": cohen_kappa(truth, pred),
        }
    )


def compare_pair(
    name_a: str, rows_a: Sequence[MetricResult], name_b: str, rows_b: Sequence[MetricResult]
) -> PairComparison:
    """Compare two variants on the conversations both scored ``ok`` (repeat 0)."""
    va, vb = verdicts(rows_a), verdicts(rows_b)
    common = [c for c in va if c in vb]
    a, b = [va[c] for c in common], [vb[c] for c in common]
    reasons_a = {r.subject: r.reason for r in rows_a if r.repeat == 0}
    reasons_b = {r.subject: r.reason for r in rows_b if r.repeat == 0}
    flipped = [
        FlippedConversation(
            conversation_id=c,
            verdict_a=str(va[c]),
            verdict_b=str(vb[c]),
            reason_a=reasons_a.get(c),
            reason_b=reasons_b.get(c),
        )
        for c in common
        if va[c] != vb[c]
    ]
    n_agree = len(common) - len(flipped)
    return PairComparison(
        variant_a=name_a,
        variant_b=name_b,
        n_paired=len(common),
        n_agree=n_agree,
        agreement=n_agree / len(common) if common else None,
        flips_a_pass_b_fail=sum(f.verdict_a == "1" for f in flipped),
        flips_a_fail_b_pass=sum(f.verdict_a == "0" for f in flipped),
        kappa=cohen_kappa(a, b),
        mcnemar_p=mcnemar_p(a, b),
        flipped=flipped,
    )


def compare_variants(
    groups: Mapping[str, Sequence[MetricResult]],
    *,
    labels: Mapping[str, int] | None = None,
    pricing: Pricing | None = None,
    rendered_tokens: Mapping[str, int] | None = None,
) -> VariantComparison:
    """Summarize every variant and compare every pair.

    Args:
        groups: ``{variant name: its result rows}``, e.g. rows grouped by formatter.
        labels: Optional ``{conversation_id: 0|1}`` for accuracy and kappa against labels.
        pricing: Optional price function for the cost per variant.
        rendered_tokens: Optional ``{formatter identity: rendered-conversation tokens}``.

    """
    return VariantComparison(
        variants=[
            summarize_variant(
                n, rows, labels=labels, pricing=pricing, rendered_tokens=rendered_tokens
            )
            for n, rows in groups.items()
        ],
        pairs=[compare_pair(a, groups[a], b, groups[b]) for a, b in combinations(groups, 2)],
    )


def compare_formatters(
    results: Sequence[MetricResult],
    *,
    labels: Mapping[str, int] | None = None,
    pricing: Pricing | None = None,
    rendered_tokens: Mapping[str, int] | None = None,
) -> VariantComparison:
    """:func:`compare_variants` with the rows grouped by formatter (``name@version[params]``)."""
    return compare_variants(
        group_by(results, lambda r: r.formatter),
        labels=labels,
        pricing=pricing,
        rendered_tokens=rendered_tokens,
    )
