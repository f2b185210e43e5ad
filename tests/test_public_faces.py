"""The public face of every public package is pinned: each package's ``__all__`` is exactly
these names and each resolves (the top level is pinned by ``test_public_api.py``). A name added
or removed from a face is a deliberate API change: update the pin in the same commit."""

from __future__ import annotations

import importlib

import pytest

FACES: dict[str, frozenset[str]] = {
    "agent_eval.ingest": frozenset(
        {
            "Container",
            "ContainerItem",
            "FileReport",
            "IngestReport",
            "IngestRun",
            "InputPart",
            "LogRecord",
            "RecordsUsed",
            "Skipped",
            "SourceLocation",
            "SpanEvent",
            "SpanRecord",
            "TraceParts",
            "TracePiece",
            "assemble_conversations",
            "assemble_trace",
            "containers",
            "detect_container",
            "ingest",
            "input_files",
            "merge_reports",
            "open_input",
            "read_input",
            "trace_pieces",
        }
    ),
    "agent_eval.run": frozenset(
        {
            "RunSession",
            "RunSpend",
            "SessionHooks",
        }
    ),
    "agent_eval.metrics": frozenset(
        {
            "CallTally",
            "Metric",
            "MetricInput",
            "MetricOutcome",
            "metrics",
        }
    ),
    "agent_eval.judges": frozenset(
        {
            "Judge",
            "JudgeReply",
            "JudgeRequest",
            "judges",
        }
    ),
    "agent_eval.formatting": frozenset(
        {
            "ENTRY_POINT_GROUP",
            "FINGERPRINT_SCHEME",
            "Formatter",
            "FormatterParams",
            "FormatterSpec",
            "LockReport",
            "NoParams",
            "PROBE_SET_VERSION",
            "check_lock",
            "default_lock_path",
            "fingerprint",
            "format_identity",
            "formatter_class",
            "formatters",
            "get_formatter",
            "load_formatters",
            "parse_identity",
            "probe_renderings",
            "probe_set",
            "register",
            "update_lock",
            "verify_lock",
        }
    ),
    "agent_eval.analysis": frozenset(
        {
            "Calibration",
            "ConfigurationIdentity",
            "ConversationStability",
            "FlippedConversation",
            "Gate",
            "GateCount",
            "GateOutcome",
            "GateStatistic",
            "LABELS_NAME",
            "PairComparison",
            "Pricing",
            "Stability",
            "VALUE_FIELDS",
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
        }
    ),
    "agent_eval.report": frozenset(
        {
            "CONVERSATIONS_NAME",
            "ConversationRow",
            "RENDERINGS_NAME",
            "ReportData",
            "RunInfo",
            "RunSummary",
            "build_report",
            "content_security_policy",
            "read_conversations",
            "read_renderings",
            "render_all",
            "render_html",
            "tokens_by_formatter",
            "write_conversations",
            "write_html",
            "write_renderings",
        }
    ),
    "agent_eval.testing": frozenset(
        {
            "ClaimScript",
            "DEFAULT_FAULTS",
            "FakeModelServer",
            "Hang",
            "HttpError",
            "INVALID_VERDICTS",
            "InvalidVerdict",
            "MalformedJSON",
            "NO_USAGE",
            "RecordedRequest",
            "Rule",
            "Structured",
            "Text",
            "ToolCall",
            "ToolCalls",
            "Usage",
        }
    ),
}


@pytest.mark.parametrize("package", sorted(FACES))
def test_the_public_face_of_each_package_is_pinned(package: str) -> None:
    module = importlib.import_module(package)
    assert len(module.__all__) == len(set(module.__all__)), package
    assert set(module.__all__) == FACES[package]
    for name in module.__all__:
        assert getattr(module, name) is not None, f"{package}.{name}"
