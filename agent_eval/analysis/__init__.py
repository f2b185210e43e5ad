"""Paired formatter comparison, judge stability, calibration against labels, and CI gates.

Each concept lives in its own module; this package re-exports the public names.
"""

from agent_eval.analysis.binary_stats import (
    cohen_kappa,
    kappa_interval,
    mcnemar_p,
    table_2x2,
    wilson_interval,
)
from agent_eval.analysis.calibration import Calibration, calibrate, calibrate_results
from agent_eval.analysis.gates import (
    Gate,
    GateCount,
    GateOutcome,
    GateStatistic,
    evaluate_gates,
    load_gates,
    parse_gate,
)
from agent_eval.analysis.labels import (
    VALUE_FIELDS,
    labels_from_traces,
    parse_binary,
    read_binary_file,
)
from agent_eval.analysis.paired import (
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
from agent_eval.analysis.selection import ConfigurationIdentity, group_by, identity_of, verdicts
from agent_eval.analysis.stability import (
    ConversationStability,
    Stability,
    VariationStage,
    stability,
)

__all__ = [
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
    "parse_binary",
    "parse_gate",
    "read_binary_file",
    "stability",
    "summarize_variant",
    "table_2x2",
    "verdicts",
    "wilson_interval",
]
