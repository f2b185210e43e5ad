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
    from agent_eval._api import ascore, score
    from agent_eval._result import MetricResult
    from agent_eval._trace import (
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
    from agent_eval.analysis._calibration import calibrate
    from agent_eval.analysis._paired import compare_formatters
    from agent_eval.analysis._stability import measure_stability
    from agent_eval.formatting import Formatter, fingerprint, get_formatter
    from agent_eval.ingest import IngestRun, ingest
    from agent_eval.ingest._langchain import from_langchain, to_langchain
    from agent_eval.run._store import load_results
    from agent_eval.run._summary import RunSummary

__version__ = "0.1.0"

# Imported on first use (PEP 562) so that ``import agent_eval`` and every CLI command stay fast:
# analysis pulls in scipy and numpy, the scoring API the judge stack, langchain-core
# the LangChain bridge, the data model pydantic (its models take a tenth of a second to build);
# only the errors are imported eagerly.
_LAZY = {
    "MetricResult": "agent_eval._result",
    "SCHEMA_VERSION": "agent_eval._trace",
    "AgentTrace": "agent_eval._trace",
    "AssistantMessage": "agent_eval._trace",
    "Message": "agent_eval._trace",
    "ModelUsage": "agent_eval._trace",
    "OpaquePart": "agent_eval._trace",
    "Retrieval": "agent_eval._trace",
    "RetrievedDocument": "agent_eval._trace",
    "SourceInfo": "agent_eval._trace",
    "SpanErrorInfo": "agent_eval._trace",
    "SystemMessage": "agent_eval._trace",
    "ToolCall": "agent_eval._trace",
    "ToolMessage": "agent_eval._trace",
    "UserMessage": "agent_eval._trace",
    "calibrate": "agent_eval.analysis._calibration",
    "compare_formatters": "agent_eval.analysis._paired",
    "measure_stability": "agent_eval.analysis._stability",
    "ascore": "agent_eval._api",
    "score": "agent_eval._api",
    "Formatter": "agent_eval.formatting",
    "fingerprint": "agent_eval.formatting",
    "get_formatter": "agent_eval.formatting",
    "IngestRun": "agent_eval.ingest",
    "ingest": "agent_eval.ingest",
    "from_langchain": "agent_eval.ingest._langchain",
    "to_langchain": "agent_eval.ingest._langchain",
    "load_results": "agent_eval.run._store",
    "RunSummary": "agent_eval.run._summary",
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
