"""agent-eval: score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges.

The data flow reads left to right through the sub-packages: ``ingest`` (spans -> AgentTrace),
``formatting`` (AgentTrace -> text, versioned), ``metrics`` and ``judges`` (text -> typed
verdicts), ``engine`` and ``store`` (runs and results), ``analysis`` and ``report``.
"""

from agent_eval.api import ascore, score
from agent_eval.errors import (
    AgentEvalError,
    ConfigError,
    DecodeError,
    FormatterLockError,
    InputError,
    InvalidSpanError,
    JudgeError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeTransportError,
    MissingDependencyError,
    StoreError,
    UnknownFormatError,
    UnknownPluginError,
)
from agent_eval.result import MetricResult
from agent_eval.store import load_results
from agent_eval.summary import RunSummary
from agent_eval.trace import (
    SCHEMA_VERSION,
    AgentTrace,
    AssistantMessage,
    Message,
    ModelUsage,
    OpaquePart,
    Retrieval,
    RetrievedDocument,
    SourceInfo,
    SpanErrorInfo,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)

__version__ = "0.1.0"

__all__ = [
    "SCHEMA_VERSION",
    "AgentEvalError",
    "AgentTrace",
    "AssistantMessage",
    "ConfigError",
    "DecodeError",
    "FormatterLockError",
    "InputError",
    "InvalidSpanError",
    "JudgeError",
    "JudgeNotConfiguredError",
    "JudgeOutputError",
    "JudgeTransportError",
    "Message",
    "MetricResult",
    "MissingDependencyError",
    "ModelUsage",
    "OpaquePart",
    "Retrieval",
    "RetrievedDocument",
    "RunSummary",
    "SourceInfo",
    "SpanErrorInfo",
    "StoreError",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UnknownFormatError",
    "UnknownPluginError",
    "UserMessage",
    "__version__",
    "ascore",
    "load_results",
    "score",
]
