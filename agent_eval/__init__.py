"""agent-eval: score recorded LLM-agent conversations (OpenTelemetry spans) with LLM judges.

The data flow reads left to right through the sub-packages: ``ingest`` (spans -> AgentTrace),
``formatting`` (AgentTrace -> text, versioned), ``metrics`` and ``judges`` (text -> typed
verdicts), ``engine`` and ``store`` (runs and results), ``analysis`` and ``report``.
"""

from importlib import import_module as _import_module
from typing import TYPE_CHECKING as _TYPE_CHECKING
from typing import Any as _Any

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

if _TYPE_CHECKING:  # the lazily imported names, for type checkers and IDEs
    from agent_eval.analysis.calibration import calibrate
    from agent_eval.analysis.paired import compare_formatters
    from agent_eval.analysis.stability import measure_stability
    from agent_eval.api import ascore, score
    from agent_eval.formatting import Formatter, fingerprint, get_formatter
    from agent_eval.ingest import IngestRun, ingest
    from agent_eval.ingest.langchain import from_langchain, to_langchain
    from agent_eval.result import MetricResult
    from agent_eval.run.store import load_results
    from agent_eval.run.summary import RunSummary
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

# Imported on first use (PEP 562) so that ``import agent_eval`` and every CLI command stay fast:
# analysis pulls in scipy and numpy, the scoring API the judge stack, langchain-core
# the LangChain bridge, the data model pydantic (its models take a tenth of a second to build);
# only the errors are imported eagerly.
_LAZY = {
    "MetricResult": "agent_eval.result",
    "SCHEMA_VERSION": "agent_eval.trace",
    "AgentTrace": "agent_eval.trace",
    "AssistantMessage": "agent_eval.trace",
    "Message": "agent_eval.trace",
    "ModelUsage": "agent_eval.trace",
    "OpaquePart": "agent_eval.trace",
    "Retrieval": "agent_eval.trace",
    "RetrievedDocument": "agent_eval.trace",
    "SourceInfo": "agent_eval.trace",
    "SpanErrorInfo": "agent_eval.trace",
    "SystemMessage": "agent_eval.trace",
    "ToolCall": "agent_eval.trace",
    "ToolMessage": "agent_eval.trace",
    "UserMessage": "agent_eval.trace",
    "calibrate": "agent_eval.analysis.calibration",
    "compare_formatters": "agent_eval.analysis.paired",
    "measure_stability": "agent_eval.analysis.stability",
    "ascore": "agent_eval.api",
    "score": "agent_eval.api",
    "Formatter": "agent_eval.formatting",
    "fingerprint": "agent_eval.formatting",
    "get_formatter": "agent_eval.formatting",
    "IngestRun": "agent_eval.ingest",
    "ingest": "agent_eval.ingest",
    "from_langchain": "agent_eval.ingest.langchain",
    "to_langchain": "agent_eval.ingest.langchain",
    "load_results": "agent_eval.run.store",
    "RunSummary": "agent_eval.run.summary",
}

__all__ = [
    "SCHEMA_VERSION",
    "AgentEvalError",
    "AgentTrace",
    "AssistantMessage",
    "ConfigError",
    "DecodeError",
    "Formatter",
    "FormatterLockError",
    "IngestRun",
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
    "calibrate",
    "compare_formatters",
    "fingerprint",
    "from_langchain",
    "get_formatter",
    "ingest",
    "load_results",
    "measure_stability",
    "score",
    "to_langchain",
]


def __getattr__(name: str) -> _Any:
    """Import the lazily loaded names of :data:`__all__` on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(_import_module(_LAZY[name]), name)
