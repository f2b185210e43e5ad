"""Rich tables for the terminal: calibration, formatter comparison and stability summaries.

Values from the data (conversation ids, formatter names) are escaped so that rich never reads
them as console markup.
"""

from __future__ import annotations

from collections import Counter
from typing import TYPE_CHECKING

from rich.console import Group, RenderableType
from rich.markup import escape
from rich.table import Table

from agent_eval._terminal_text import escape_control

if TYPE_CHECKING:  # annotations only: the statistics libraries load when the analyses run
    from agent_eval.analysis._calibration import Calibration
    from agent_eval.analysis._claim_calibration import ClaimCalibration
    from agent_eval.analysis._ordinal import OrdinalCalibration
    from agent_eval.analysis._paired import PairComparison, VariantComparison, VariantSummary
    from agent_eval.analysis._stability import ConversationStability, Stability

__all__ = [
    "cache_caption",
    "calibration_table",
    "claim_calibration_tables",
    "comparison_tables",
    "fixed",
    "ordinal_table",
    "stability_tables",
    "usd",
]


def fixed(value: float | None, digits: int = 3) -> str:
    """``value`` with ``digits`` decimals, ``"n/a"`` for ``None``; never ``-0.000``.

    A value that rounds to zero (``-1.6e-8``, ``-0.0``) prints as ``0.000``.
    """
    if value is None:
        return "n/a"
    return f"{round(value, digits) + 0.0:.{digits}f}"  # + 0.0 turns -0.0 into 0.0


def usd(value: float | None) -> str:
    """A cost in US dollars with 4 decimals (``"$0.0123"``), ``"n/a"`` for ``None``.

    Below $0.0001 (and above 0) 6 decimals, so a priced tiny run never reads ``$0.0000``.
    """
    if value is not None and 0 < value < 0.0001:
        return f"${fixed(value, 6)}"
    return "n/a" if value is None else f"${fixed(value, 4)}"


def calibration_table(cal: Calibration) -> Table:
    """Accuracy, kappa [95% CI], confusion matrix, failure precision/recall, disagreements."""
    table = Table(title="Calibration against labels", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    if cal.identity is not None:
        table.add_row("applies to", escape(str(cal.identity)))
    table.add_row("agreement", f"{cal.n_agree} of {cal.n} (accuracy {fixed(cal.accuracy)})")
    table.add_row(
        "Cohen's kappa [95% CI]",
        f"{fixed(cal.kappa)} [{fixed(cal.kappa_ci_low)}, {fixed(cal.kappa_ci_high)}]"
        if cal.kappa_undefined is None
        else escape(f"{fixed(cal.kappa)} [interval undefined: {cal.kappa_undefined}]"),
    )
    (tn, fp), (fn, tp) = cal.confusion
    table.add_row("confusion (label\\verdict)", f"0: [{tn} {fp}]   1: [{fn} {tp}]")
    table.add_row(
        "failure precision / recall",
        f"{fixed(cal.failure_precision)} / {fixed(cal.failure_recall)}",
    )
    table.add_row("disagreements", escape(", ".join(cal.disagreements)) or "none")
    if cal.unlabelled or cal.unpredicted:
        table.add_row(
            "unmatched",
            f"{len(cal.unlabelled)} verdict(s) without a label, "
            f"{len(cal.unpredicted)} label(s) without a verdict" + escape(_not_scored(cal)),
        )
    return table


def _not_scored(cal: Calibration) -> str:
    """``" (3 the run skipped: no_answer 1, no_context 2)"``: labelled units not scored ok."""
    if not cal.not_scored:
        return ""
    reasons = Counter(cal.not_scored.values())
    text = ", ".join(f"{reason} {n}" for reason, n in sorted(reasons.items()))
    return f" ({len(cal.not_scored)} the run did not score: {text})"


def comparison_tables(cmp: VariantComparison) -> RenderableType:
    """One table of variants and one of pairs (with the flipped conversation ids)."""
    variants = Table(title="Variants", title_justify="left")
    columns = ("variant", "ok", "error", "skipped", "mean [95% CI]", "tokens in/out", "cost")
    for name in (*columns, "rendered tokens"):
        variants.add_column(name)
    labelled = any(v.n_labelled for v in cmp.variants)
    if labelled:
        variants.add_column("label acc")
        variants.add_column("label kappa")
    for v in cmp.variants:
        cells = [
            escape(v.variant),
            str(v.n_ok),
            str(v.n_error),
            str(v.n_skipped),
            f"{fixed(v.mean_score)} [{fixed(v.ci_low)}, {fixed(v.ci_high)}]",
            *_usage_cells(v),
            "n/a" if v.rendered_tokens is None else str(v.rendered_tokens),
        ]
        if labelled:
            cells += [fixed(v.label_accuracy), fixed(v.label_kappa)]
        variants.add_row(*cells)
    pairs = Table(title="Pairs", title_justify="left")
    for name in ("A", "B", "paired", "agree", "1→0", "0→1", "kappa", "McNemar p", "flipped"):
        pairs.add_column(name)
    for p in cmp.pairs:
        pairs.add_row(
            escape(p.variant_a),
            escape(p.variant_b),
            str(p.n_paired),
            f"{p.n_agree} ({fixed(p.agreement, 2)})",
            str(p.flips_a_pass_b_fail),
            str(p.flips_a_fail_b_pass),
            fixed(p.kappa),
            fixed(p.mcnemar_p, 4),
            escape(", ".join(f.conversation_id for f in p.flipped)),
        )
    return Group(variants, pairs, *(_flipped_table(p) for p in cmp.pairs if p.flipped))


def _usage_cells(v: VariantSummary) -> tuple[str, str]:
    """``tokens in/out`` and ``cost`` of a variant, saying ``cached`` and ``~`` (estimated).

    All calls cached: ``cached (12 of 12 calls)`` and ``$0 (cached)``; some: the tokens with
    ``, 988 of 1000 cached``; a row without a usage report marks both cells ``~`` / ``est.``;
    rows a later invocation replaced (counted in) are named: ``, incl. 4 replaced rows``.
    """
    if v.judge_calls and v.cached_calls == v.judge_calls:
        return f"cached ({v.cached_calls} of {v.judge_calls} calls)", "$0 (cached)"
    mark = "~" if v.usage_unknown else ""
    tokens = f"{mark}{v.input_tokens}/{mark}{v.output_tokens}"
    if v.cached_calls:
        tokens += f", {v.cached_calls} of {v.judge_calls} cached"
    if v.n_replaced:
        tokens += f", incl. {v.n_replaced} replaced rows"
    cost = usd(v.cost_usd)
    if mark and v.cost_usd is not None:
        cost = f"~{cost} est."
    return tokens, cost


def _flipped_table(pair: PairComparison, width: int = 120) -> Table:
    """The flipped conversations of one pair with both verdicts and both reasons."""
    table = Table(
        title=f"Flipped: {escape(pair.variant_a)} (A) vs {escape(pair.variant_b)} (B)",
        title_justify="left",
    )
    for name in ("conversation", "A", "reason A", "B", "reason B"):
        table.add_column(name, overflow="fold")
    for f in pair.flipped:
        table.add_row(
            escape(escape_control(f.conversation_id)),
            f.verdict_a,
            escape(escape_control((f.reason_a or "")[:width])),
            f.verdict_b,
            escape(escape_control((f.reason_b or "")[:width])),
        )
    return table


def stability_tables(st: Stability) -> RenderableType:
    """Overall stability line plus one row per conversation (per unit, for atom metrics)."""
    if st.n_atoms is not None:
        return _atom_stability_table(st)
    table = Table(
        title=(
            f"Stability over {st.repeats} repeats: flip rate {fixed(st.flip_rate)} "
            f"({st.n_flipping} of {st.n_conversations}), Fleiss' kappa {fixed(st.fleiss_kappa)} "
            f"(n={st.n_fleiss}); starts at goal inference {st.stage_counts['goal_inference']}, "
            f"at comparison {st.stage_counts['comparison']}{_skipped_units(st)}"
        ),
        title_justify="left",
        caption=cache_caption(st),
    )
    for name in ("conversation", "1", "0", "not ok", "majority", "varies at"):
        table.add_column(name)
    for c in st.conversations:
        table.add_row(
            escape(c.conversation_id),
            str(c.n_pass),
            str(c.n_fail),
            _not_ok(c),
            c.majority or "tie",
            c.varies_at or "",
        )
    return table


def _skipped_units(st: Stability) -> str:
    """``"; 3 unit(s) skipped in every repeat (no_answer 1, no_context 2)"``, or ``""``."""
    if not st.skipped_units:
        return ""
    reasons = ", ".join(f"{reason} {n}" for reason, n in st.skipped_units.items())
    return f"; {sum(st.skipped_units.values())} unit(s) skipped in every repeat ({reasons})"


def _not_ok(c: ConversationStability) -> str:
    """``"3 (skipped: no_context 3)"``: the repeats that were not ``ok``, with their reasons."""
    if not c.not_ok_reasons:
        return str(c.n_not_ok)
    reasons = ", ".join(f"{reason} {n}" for reason, n in c.not_ok_reasons.items())
    return f"{c.n_not_ok} ({escape(reasons)})"


def cache_caption(st: Stability) -> str | None:
    """The judge calls of a stability run and how many the cache answered; ``None`` if none.

    ``"judge calls: 50, 10 of them from the judge-call cache (at 0 tokens and $0 in this run);
    unit repeats: 2 of 10 answered wholly from the cache"``: judge calls and unit repeats (one
    unit scored once, skipped ones included) are counted apart, each named.
    """
    if not st.judge_calls:
        return None
    if not st.cached_calls:
        return f"judge calls: {st.judge_calls}, none cached"
    rows = sum(c.n_pass + c.n_fail + c.n_not_ok for c in st.conversations)
    return (
        f"judge calls: {st.judge_calls}, {st.cached_calls} of them from the judge-call cache "
        f"(at 0 tokens and $0 in this run); unit repeats: {st.cached_rows} of {rows} answered "
        "wholly from the cache"
    )


def _atom_stability_table(st: Stability) -> RenderableType:
    """Stability of an atom metric: per-score and per-atom flip rates, one row per unit."""
    atom_units = sum(c.scores is not None for c in st.conversations)
    table = Table(
        title=(
            f"Stability over {st.repeats} repeats: score flip rate {fixed(st.flip_rate)} "
            f"({st.n_flipping} of {st.n_conversations} units{_skipped_units(st)}); atom flip rate "
            f"{fixed(st.atom_flip_rate)} ({st.n_atoms_flipping} of {st.n_atoms} atoms), "
            f"Fleiss' kappa over atoms {fixed(st.atom_fleiss_kappa)} (n={st.n_atom_fleiss}); "
            f"units with pinned atoms {st.units_pinned} of {atom_units}; starts at "
            f"decomposition {st.stage_counts.get('decomposition', 0)}, at verification "
            f"{st.stage_counts.get('verification', 0)}"
        ),
        title_justify="left",
        caption=cache_caption(st),
    )
    for name in ("unit", "scores", "atoms flipping", "pinned", "not ok", "varies at"):
        table.add_column(name)
    for c in st.conversations:
        table.add_row(
            escape(c.conversation_id),
            " ".join(f"{s:.2f}" for s in c.scores or ()),
            f"{c.n_atoms_flipping} of {c.n_atoms}" if c.n_atoms is not None else "",
            "yes" if c.atoms_pinned else "no" if c.scores is not None else "",
            _not_ok(c),
            c.varies_at or "",
        )
    return table


def ordinal_table(cal: OrdinalCalibration) -> Table:
    """Spearman and Kendall [95% CI] of scores against ordinal ratings."""
    table = Table(title="Calibration against ordinal ratings", show_header=False,
                  title_justify="left")  # fmt: skip
    table.add_column(style="bold")
    table.add_column()
    if cal.identity is not None:
        table.add_row("applies to", escape(str(cal.identity)))
    table.add_row("units", str(cal.n))
    table.add_row(
        "Spearman's rho [95% CI]",
        f"{fixed(cal.spearman)} [{fixed(cal.spearman_ci_low)}, {fixed(cal.spearman_ci_high)}]"
        f" (p {fixed(cal.spearman_p)})",
    )
    table.add_row(
        "Kendall's tau-b [95% CI]",
        f"{fixed(cal.kendall)} [{fixed(cal.kendall_ci_low)}, {fixed(cal.kendall_ci_high)}]"
        f" (p {fixed(cal.kendall_p)})",
    )
    table.add_row("ratings", ", ".join(f"{k}: {v}" for k, v in cal.ratings.items()) or "none")
    if cal.unlabelled or cal.unpredicted:
        table.add_row(
            "unmatched",
            f"{len(cal.unlabelled)} score(s) without a rating, "
            f"{len(cal.unpredicted)} rating(s) without a score",
        )
    return table


def claim_calibration_tables(cal: ClaimCalibration) -> RenderableType:
    """How many labelled claims matched an atom, then the binary agreement over the matches."""
    table = Table(title="Claim matching", show_header=False, title_justify="left")
    table.add_column(style="bold")
    table.add_column()
    table.add_row("units", str(cal.n_units))
    table.add_row(
        "matched",
        f"{cal.n_matched} pairs of {cal.n_labelled} labelled claims and {cal.n_atoms} atoms "
        f"(similarity >= {cal.min_similarity:g}, mean {fixed(cal.mean_similarity)})",
    )
    return Group(table, calibration_table(cal.binary))
