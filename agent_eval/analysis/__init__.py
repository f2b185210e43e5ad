"""Paired formatter comparison, judge stability, calibration against labels, and CI gates.

Each concept lives in its own module; this package re-exports the public names, importing a
module only when one of its names is first used (scipy and numpy load slowly).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.analysis._binary_stats import (
        cohen_kappa,
        kappa_interval,
        mcnemar_p,
        table_2x2,
        wilson_interval,
    )
    from agent_eval.analysis._calibration import (
        Calibration,
        calibrate,
        calibrate_results,
    )
    from agent_eval.analysis._gates import (
        Gate,
        GateCount,
        GateOutcome,
        GateStatistic,
        evaluate_gates,
        load_gates,
        parse_gate,
    )
    from agent_eval.analysis._labels import (
        LABELS_NAME,
        VALUE_FIELDS,
        labels_from_traces,
        parse_binary,
        read_binary_file,
        write_labels,
    )
    from agent_eval.analysis._paired import (
        FlippedConversation,
        PairComparison,
        Pricing,
        VariantComparison,
        VariantSummary,
        compare_formatters,
        compare_pair,
        compare_variants,
        summarize_variant,
    )
    from agent_eval.analysis._scoring import score_repeats, score_variants
    from agent_eval.analysis._selection import (
        ConfigurationIdentity,
        group_by,
        identity_of,
        verdicts,
    )
    from agent_eval.analysis._stability import (
        ConversationStability,
        Stability,
        VariationStage,
        measure_stability,
    )

__all__ = [
    "LABELS_NAME",
    "VALUE_FIELDS",
    "Calibration",
    "ConfigurationIdentity",
    "ConversationStability",
    "FlippedConversation",
    "Gate",
    "GateCount",
    "GateOutcome",
    "GateStatistic",
    "PairComparison",
    "Pricing",
    "Stability",
    "VariantComparison",
    "VariantSummary",
    "VariationStage",
    "calibrate",
    "calibrate_results",
    "cohen_kappa",
    "compare_formatters",
    "compare_pair",
    "compare_variants",
    "evaluate_gates",
    "group_by",
    "identity_of",
    "kappa_interval",
    "labels_from_traces",
    "load_gates",
    "mcnemar_p",
    "measure_stability",
    "parse_binary",
    "parse_gate",
    "read_binary_file",
    "score_repeats",
    "score_variants",
    "summarize_variant",
    "table_2x2",
    "verdicts",
    "wilson_interval",
    "write_labels",
]

_HOME = {
    "LABELS_NAME": "agent_eval.analysis._labels",
    "Calibration": "agent_eval.analysis._calibration",
    "ConfigurationIdentity": "agent_eval.analysis._selection",
    "ConversationStability": "agent_eval.analysis._stability",
    "FlippedConversation": "agent_eval.analysis._paired",
    "Gate": "agent_eval.analysis._gates",
    "GateCount": "agent_eval.analysis._gates",
    "GateOutcome": "agent_eval.analysis._gates",
    "GateStatistic": "agent_eval.analysis._gates",
    "PairComparison": "agent_eval.analysis._paired",
    "Pricing": "agent_eval.analysis._paired",
    "Stability": "agent_eval.analysis._stability",
    "VALUE_FIELDS": "agent_eval.analysis._labels",
    "VariantComparison": "agent_eval.analysis._paired",
    "VariantSummary": "agent_eval.analysis._paired",
    "VariationStage": "agent_eval.analysis._stability",
    "calibrate": "agent_eval.analysis._calibration",
    "calibrate_results": "agent_eval.analysis._calibration",
    "cohen_kappa": "agent_eval.analysis._binary_stats",
    "compare_formatters": "agent_eval.analysis._paired",
    "compare_pair": "agent_eval.analysis._paired",
    "compare_variants": "agent_eval.analysis._paired",
    "evaluate_gates": "agent_eval.analysis._gates",
    "group_by": "agent_eval.analysis._selection",
    "identity_of": "agent_eval.analysis._selection",
    "kappa_interval": "agent_eval.analysis._binary_stats",
    "labels_from_traces": "agent_eval.analysis._labels",
    "load_gates": "agent_eval.analysis._gates",
    "mcnemar_p": "agent_eval.analysis._binary_stats",
    "measure_stability": "agent_eval.analysis._stability",
    "parse_binary": "agent_eval.analysis._labels",
    "parse_gate": "agent_eval.analysis._gates",
    "read_binary_file": "agent_eval.analysis._labels",
    "score_repeats": "agent_eval.analysis._scoring",
    "score_variants": "agent_eval.analysis._scoring",
    "summarize_variant": "agent_eval.analysis._paired",
    "table_2x2": "agent_eval.analysis._binary_stats",
    "verdicts": "agent_eval.analysis._selection",
    "wilson_interval": "agent_eval.analysis._binary_stats",
    "write_labels": "agent_eval.analysis._labels",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
