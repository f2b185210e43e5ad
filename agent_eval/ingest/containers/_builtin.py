"""The built-in containers, declared: what ordering and help texts need, importing none of them.

Each class here is the :class:`~agent_eval.ingest.containers._base.DeferredContainer` that the
``agent_eval.containers`` entry point of a built-in container names (``pyproject.toml``): its
``name``, ``description``, ``priority`` and ``json_keys``, and the implementation (a subclass,
in its own module, that defines ``sniff`` and ``read``), imported when ``--format auto`` first
asks it or ``--format NAME`` reads with it. Third-party containers may do the same.
"""

from __future__ import annotations

from typing import ClassVar

from agent_eval.ingest.containers._base import DeferredContainer

__all__ = [
    "Begin",
    "ExpertQA",
    "FaithDialAudit",
    "Jaeger",
    "Langfuse",
    "Mtrag",
    "MtragHumanEval",
    "MtragUn",
    "OpenAICassette",
    "OpenAIMessages",
    "OtlpJson",
    "OtlpProto",
    "Phoenix",
    "PythonConsole",
    "RagJsonl",
    "ReadableSpan",
    "SpanAttributes",
    "Tau2Bench",
    "TauBench",
    "Tempo",
    "TraceJsonl",
]


class OtlpJson(DeferredContainer):
    """OTLP/JSON export requests: one object per file, or JSON Lines (Collector file exporter)."""

    name: ClassVar[str] = "otlp-json"
    description: ClassVar[str] = (
        "OTLP/JSON ExportTraceServiceRequest / ExportLogsServiceRequest, one object per file "
        "or one per line (OpenTelemetry Collector file exporter); bare ResourceSpans/Logs per "
        "line (Java logging-otlp exporter)"
    )
    priority: ClassVar[int] = 20
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {
            "resourceSpans",
            "resource_spans",
            "resourceLogs",
            "resource_logs",
            "scopeSpans",
            "scope_spans",
            "scopeLogs",
            "scope_logs",
        }
    )
    implementation: ClassVar[str] = "agent_eval.ingest.containers._otlp_json:OtlpJsonContainer"


class OtlpProto(DeferredContainer):
    """A binary OTLP export request (traces or logs), as the OTLP/HTTP protobuf body."""

    name: ClassVar[str] = "otlp-proto"
    description: ClassVar[str] = (
        "binary OTLP ExportTraceServiceRequest / ExportLogsServiceRequest (protobuf)"
    )
    priority: ClassVar[int] = 90
    """A weak signature (three bytes), so every text format is asked first."""
    implementation: ClassVar[str] = "agent_eval.ingest.containers._otlp_proto:OtlpProtoContainer"


class TraceJsonl(DeferredContainer):
    """agent-eval's own AgentTrace JSON Lines (the output of ``agent-eval ingest``)."""

    name: ClassVar[str] = "agent-trace-jsonl"
    description: ClassVar[str] = "AgentTrace JSON Lines written by `agent-eval ingest`"
    priority: ClassVar[int] = 10
    json_keys: ClassVar[frozenset[str]] = frozenset({"schema_version"})
    implementation: ClassVar[str] = "agent_eval.ingest.containers._trace_jsonl:TraceJsonlContainer"
    whole_conversations: ClassVar[bool] = True


class SpanAttributes(DeferredContainer):
    """One JSON object of span attributes -> one synthetic span with content-derived ids."""

    name: ClassVar[str] = "span-attributes"
    description: ClassVar[str] = (
        "a JSON object that is the flat attribute map of one span (convention test fixtures)"
    )
    priority: ClassVar[int] = 150
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._span_attributes:SpanAttributesContainer"
    )


class OpenAIMessages(DeferredContainer):
    """OpenAI chat message lists, with optional conversation id, reference and labels."""

    name: ClassVar[str] = "openai-messages"
    description: ClassVar[str] = "OpenAI-style chat messages (a list, {messages}, or JSON Lines)"
    priority: ClassVar[int] = 120
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._chat_messages:OpenAIMessagesContainer"
    )
    whole_conversations: ClassVar[bool] = True


class TauBench(DeferredContainer):
    """tau-bench result records with ``traj`` transcripts, rewards and task instructions."""

    name: ClassVar[str] = "tau-bench"
    description: ClassVar[str] = "tau-bench trajectories (task_id, reward, info.task, traj)"
    priority: ClassVar[int] = 30
    json_keys: ClassVar[frozenset[str]] = frozenset({"task_id", "traj", "reward", "trial"})
    implementation: ClassVar[str] = "agent_eval.ingest.containers._tau_bench:TauBenchContainer"
    whole_conversations: ClassVar[bool] = True


class Tau2Bench(DeferredContainer):
    """tau2-bench simulation results, joined to their tasks for references."""

    name: ClassVar[str] = "tau2-bench"
    description: ClassVar[str] = "tau2-bench results (timestamp, info, tasks, simulations)"
    priority: ClassVar[int] = 30
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"agent_info", "user_info", "simulations", "tasks"}
    )
    implementation: ClassVar[str] = "agent_eval.ingest.containers._tau2_bench:Tau2BenchContainer"
    whole_conversations: ClassVar[bool] = True


class Jaeger(DeferredContainer):
    """Reads a Jaeger UI/query-API JSON export (one or many traces)."""

    name: ClassVar[str] = "jaeger"
    description: ClassVar[str] = "Jaeger UI JSON export ({data: [{traceID, spans, processes}]})"
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"traceID", "spanID", "operationName", "processes"}
    )
    implementation: ClassVar[str] = "agent_eval.ingest.containers._jaeger:JaegerContainer"


class Tempo(DeferredContainer):
    """Reads a Grafana Tempo JSON trace export (``batches``)."""

    name: ClassVar[str] = "tempo"
    description: ClassVar[str] = (
        "Grafana Tempo trace export ({batches: [...]}, or the /api/v2/traces envelope "
        "{trace: {resourceSpans}, metrics})"
    )
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"batches", "trace", "metrics", "instrumentationLibrarySpans"}
    )
    implementation: ClassVar[str] = "agent_eval.ingest.containers._tempo:TempoContainer"


class Langfuse(DeferredContainer):
    """Reads a Langfuse trace export (``{trace, observations}``) back into spans."""

    name: ClassVar[str] = "langfuse"
    description: ClassVar[str] = (
        "Langfuse trace export ({trace, observations: [...]}) or observations API list "
        "({data: [...], meta})"
    )
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"observations", "parentObservationId", "traceId", "startTime"}
    )
    implementation: ClassVar[str] = "agent_eval.ingest.containers._langfuse:LangfuseContainer"


class Phoenix(DeferredContainer):
    """Reads Phoenix span exports (nested attributes, ``context`` ids)."""

    name: ClassVar[str] = "phoenix"
    description: ClassVar[str] = "Arize Phoenix span export (JSON or JSONL, nested attributes)"
    json_keys: ClassVar[frozenset[str]] = frozenset({"context", "span_kind", "span_id", "trace_id"})
    implementation: ClassVar[str] = "agent_eval.ingest.containers._phoenix:PhoenixContainer"


class ReadableSpan(DeferredContainer):
    """Reads OTel JS ``ReadableSpan`` / ``ConsoleSpanExporter`` JSON dumps."""

    name: ClassVar[str] = "otel-js"
    description: ClassVar[str] = "OpenTelemetry JS ReadableSpan JSON dumps (hrtime tuples)"
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {
            "spanContext",
            "_spanContext",
            "parentSpanContext",
            "instrumentationScope",
            "instrumentationLibrary",
        }
    )
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._readable_span:ReadableSpanContainer"
    )


class PythonConsole(DeferredContainer):
    """Reads OTel Python ``ConsoleSpanExporter`` output: concatenated ``to_json()`` spans."""

    name: ClassVar[str] = "otel-python-console"
    description: ClassVar[str] = (
        "OpenTelemetry Python ConsoleSpanExporter output (span.to_json() objects, 0x hex ids)"
    )
    priority: ClassVar[int] = 40
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"context", "trace_id", "span_id", "parent_id", "start_time", "end_time"}
    )
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._python_console:PythonConsoleContainer"
    )


class OpenAICassette(DeferredContainer):
    """Reads a VCR cassette of OpenAI chat-completion calls into conversations."""

    name: ClassVar[str] = "openai-cassette"
    description: ClassVar[str] = "VCR/pytest-recording YAML cassette of OpenAI chat completions"
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._openai_cassette:OpenAICassetteContainer"
    )
    whole_conversations: ClassVar[bool] = True


class Mtrag(DeferredContainer):
    """MTRAG conversations with per-turn passages, relevance and answerability labels."""

    name: ClassVar[str] = "mtrag"
    description: ClassVar[str] = (
        "IBM MTRAG conversations (messages with contexts, feedback.relevant, enrichments)"
    )
    priority: ClassVar[int] = 25
    json_keys: ClassVar[frozenset[str]] = frozenset({"retriever", "enrichments"})
    implementation: ClassVar[str] = "agent_eval.ingest.containers._mtrag_container:MtragContainer"
    whole_conversations: ClassVar[bool] = True


class MtragUn(DeferredContainer):
    """MTRAG-UN generation tasks (answerable, unanswerable, underspecified, partial)."""

    name: ClassVar[str] = "mtrag-un"
    description: ClassVar[str] = "IBM MTRAG-UN generation tasks (task_id, input, targets)"
    priority: ClassVar[int] = 25
    json_keys: ClassVar[frozenset[str]] = frozenset({"targets"})
    implementation: ClassVar[str] = "agent_eval.ingest.containers._mtrag_un:MtragUnContainer"
    whole_conversations: ClassVar[bool] = True


class MtragHumanEval(DeferredContainer):
    """MTRAG human evaluations: model responses per turn with human 1-4 ratings."""

    name: ClassVar[str] = "mtrag-human-eval"
    description: ClassVar[str] = (
        "IBM MTRAG human evaluations (InspectorRAGet tasks, evaluations, documents)"
    )
    priority: ClassVar[int] = 25
    json_keys: ClassVar[frozenset[str]] = frozenset(
        {"models", "model_id", "metrics", "evaluations"}
    )
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._mtrag_human_eval:MtragHumanEvalContainer"
    )
    whole_conversations: ClassVar[bool] = True


class RagJsonl(DeferredContainer):
    """RAG records: question, contexts [{id, text}], answer, reference, labels; or ``turns``."""

    name: ClassVar[str] = "rag-jsonl"
    description: ClassVar[str] = "RAG JSON Lines (question, contexts, answer, reference, turns)"
    priority: ClassVar[int] = 40
    implementation: ClassVar[str] = "agent_eval.ingest.containers._rag_jsonl:RagJsonlContainer"
    whole_conversations: ClassVar[bool] = True


class ExpertQA(DeferredContainer):
    """ExpertQA long-form QA records (question, answers{system: claims with evidence})."""

    name: ClassVar[str] = "expertqa"
    description: ClassVar[str] = "ExpertQA records (question, answers with claims and evidence)"
    priority: ClassVar[int] = 35
    implementation: ClassVar[str] = "agent_eval.ingest.containers._expertqa:ExpertQAContainer"
    whole_conversations: ClassVar[bool] = True


class Begin(DeferredContainer):
    """BEGIN TSV rows (knowledge, message, response, begin_label)."""

    name: ClassVar[str] = "begin"
    description: ClassVar[str] = "BEGIN benchmark TSV (knowledge, message, response, begin_label)"
    priority: ClassVar[int] = 35
    implementation: ClassVar[str] = "agent_eval.ingest.containers._begin:BeginContainer"
    whole_conversations: ClassVar[bool] = True


class FaithDialAudit(DeferredContainer):
    """FaithDial data-audit CSVs (knowledge, history, response, begin_label, vrm_label)."""

    name: ClassVar[str] = "faithdial-audit"
    description: ClassVar[str] = "FaithDial audit CSV (knowledge, history, <model>, begin_label)"
    priority: ClassVar[int] = 35
    implementation: ClassVar[str] = (
        "agent_eval.ingest.containers._faithdial_audit:FaithDialAuditContainer"
    )
    whole_conversations: ClassVar[bool] = True
