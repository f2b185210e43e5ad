"""The public face of every public package is pinned: each package's ``__all__`` is exactly
these names and each resolves (the top level is pinned by ``test_public_api.py``); the public
modules are exactly these (every other module is private, ``_``-prefixed, or a deprecated
alias); and every public name has a docstring, as the API reference shows it. A name added or
removed from a face is a deliberate API change: update the pin in the same commit."""

from __future__ import annotations

import importlib
from pathlib import Path

import griffe
import pytest

FACES: dict[str, frozenset[str]] = {
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
    "agent_eval.cli": frozenset(
        {
            "app",
            "main",
        }
    ),
    "agent_eval.config": frozenset(
        {
            "DEFAULT_CONFIG_NAME",
            "DEFAULT_FORMATTER",
            "JudgeTable",
            "RAGAS_PARITY",
            "ScoreConfig",
            "load_config",
            "read_toml",
            "redact_url",
        }
    ),
    "agent_eval.errors": frozenset(
        {
            "AgentEvalError",
            "BudgetExhausted",
            "ConfigError",
            "CriteriaError",
            "DecodeError",
            "FormatterLockError",
            "InputError",
            "InvalidSpanError",
            "JudgeContextLengthError",
            "JudgeError",
            "JudgeNotConfiguredError",
            "JudgeOutputError",
            "JudgeTransportError",
            "MissingDependencyError",
            "NoConversationError",
            "OutputError",
            "StoreError",
            "UnknownFormatError",
            "UnknownPluginError",
        }
    ),
    "agent_eval.export": frozenset(
        {
            "ExportReport",
            "export_annotations",
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
            "boundary_digest",
            "check_lock",
            "default_lock_path",
            "fingerprint",
            "format_identity",
            "formatter_class",
            "formatters",
            "get_formatter",
            "load_formatters",
            "one_line",
            "parse_identity",
            "probe_renderings",
            "probe_set",
            "quote_lines",
            "register",
            "update_lock",
            "verify_lock",
        }
    ),
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
            "conversation_order",
            "detect_container",
            "ingest",
            "input_files",
            "input_stem",
            "install",
            "merge_reports",
            "open_input",
            "read_input",
            "trace_pieces",
        }
    ),
    "agent_eval.ingest.containers": frozenset(
        {
            "Container",
            "Passage",
            "RagTurn",
            "RecordsUsed",
            "Skipped",
            "containers",
            "rag_trace",
        }
    ),
    "agent_eval.ingest.conventions": frozenset(
        {
            "Convention",
            "conventions",
            "strip_inline_data",
        }
    ),
    "agent_eval.judges": frozenset(
        {
            "InstructorJudge",
            "Judge",
            "JudgeReply",
            "JudgeRequest",
            "LangChainJudge",
            "LlamaCppJudge",
            "OpenAIClientJudge",
            "OpenAIJudge",
            "judges",
        }
    ),
    "agent_eval.live": frozenset(
        {
            "Receiver",
            "ReceiverLimits",
        }
    ),
    "agent_eval.metrics": frozenset(
        {
            "CallTally",
            "Groundedness",
            "JudgeFreeMetric",
            "Metric",
            "MetricInput",
            "MetricOutcome",
            "MetricParams",
            "build_metric",
            "metric_versions",
            "metrics",
        }
    ),
    "agent_eval.otel": frozenset(
        {
            "EvaluationEvents",
            "EventReport",
            "OtlpJsonFileExporter",
            "SpanTarget",
            "conversation_target",
            "otlp_exporter",
        }
    ),
    "agent_eval.pytest_plugin": frozenset(
        {
            "AgentSpans",
            "JudgeSettings",
            "JudgeUnreachable",
            "agent_spans",
        }
    ),
    "agent_eval.rag": frozenset(
        {
            "Agreement",
            "PolicyOutcome",
            "RagPolicy",
            "TurnVerdict",
            "apply_policy",
            "load_policy",
            "reviewer_agreement",
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
    "agent_eval.run": frozenset(
        {
            "Engine",
            "RunSession",
            "RunSpend",
            "SessionHooks",
            "read_conversations",
            "read_renderings",
        }
    ),
    "agent_eval.run.cluster": frozenset(
        {
            "RayExecutor",
            "RayOptions",
            "require_ray",
        }
    ),
    "agent_eval.steering": frozenset(
        {
            "STEERING_KINDS",
            "SteeringFlag",
            "SteeringKind",
            "detect",
            "detect_text",
            "unit_flags",
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


PUBLIC_MODULES = frozenset({"agent_eval", *FACES})
"""Every module whose path has no ``_``-prefixed part and is not a deprecated alias."""

ROOT = Path(__file__).resolve().parents[1]


def _module_names() -> dict[str, Path]:
    package = ROOT / "agent_eval"
    found = {}
    for path in package.rglob("*.py"):
        parts = path.relative_to(ROOT).with_suffix("").parts
        found[".".join(parts[:-1] if parts[-1] == "__init__" else parts)] = path
    return found


def test_the_public_modules_are_exactly_the_faces() -> None:
    public = {
        name
        for name, path in _module_names().items()
        if not any(p.startswith("_") for p in name.split(".")[1:])
        and "privatize: deprecated alias" not in path.read_text(encoding="utf-8")
    }
    assert public == PUBLIC_MODULES


@pytest.fixture(scope="module")
def package() -> griffe.Module:
    """The package as the API reference reads it (griffe, mkdocstrings' loader)."""
    loaded = griffe.load(
        "agent_eval", search_paths=[str(ROOT)], resolve_aliases=True, resolve_external=False
    )
    assert isinstance(loaded, griffe.Module)
    return loaded


@pytest.mark.parametrize("face", sorted(PUBLIC_MODULES))
def test_every_public_name_has_a_docstring(face: str, package: griffe.Module) -> None:
    module = importlib.import_module(face)
    found = package if face == "agent_eval" else package[face.removeprefix("agent_eval.")]
    assert found.docstring is not None, face
    undocumented = [
        name
        for name in module.__all__
        if name != "__version__"
        and ((doc := found[name].docstring) is None or not doc.value.strip())
    ]
    assert undocumented == [], face
