"""Ingest: spans and chat logs in, AgentTrace out.

``ingest(paths)`` reads files, directories and globs (the container of each file detected or
forced) and yields :class:`~agent_eval._trace.AgentTrace` conversations; ``run.report`` holds the
span accounting afterwards. ``install()`` collects spans in process from the OpenTelemetry SDK.
The same work as engine-neutral stages (read one input, assemble a trace, assemble a
conversation, merge the accounting) for an engine that runs them as tasks is in
:mod:`agent_eval.ingest._stages`. Containers (file formats) are plugins: subclass
:class:`Container` and register it in the ``agent_eval.containers`` entry-point group, or with
``containers.register``. ``input_stem(path)`` is the file-name stem a container may use for
ids; the conventions (span attribute mappers) are in :mod:`agent_eval.ingest.conventions`.
"""

import sys
import types
from typing import TYPE_CHECKING, Any

from agent_eval.ingest._accounting import FileReport, IngestReport
from agent_eval.ingest._pipeline import IngestRun, detect_container, ingest
from agent_eval.ingest._sources import input_stem, open_input
from agent_eval.ingest._spans import LogRecord, SourceLocation, SpanEvent, SpanRecord
from agent_eval.ingest._stages import (
    InputPart,
    TraceParts,
    TracePiece,
    assemble_conversations,
    assemble_trace,
    conversation_order,
    input_files,
    merge_reports,
    read_input,
    trace_pieces,
)
from agent_eval.ingest.containers._base import (
    Container,
    ContainerItem,
    RecordsUsed,
    Skipped,
    containers,
)

if TYPE_CHECKING:
    from agent_eval.ingest._sdk import install

__all__ = [
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
]


def __getattr__(name: str) -> Any:
    """Import :func:`install` (the OTel SDK collector) on first use (PEP 562)."""
    if name != "install":
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from agent_eval.ingest._sdk import install

    return install


class _CallablePackage(types.ModuleType):
    """The ``agent_eval.ingest`` package, callable as :func:`ingest`.

    ``agent_eval.ingest`` is the function after ``import agent_eval``, but importing anything
    under ``agent_eval.ingest`` binds the package to that attribute (the import system does):
    calling the package calls the function, so ``agent_eval.ingest(paths)`` works either way.
    """

    def __call__(self, *args: Any, **kwargs: Any) -> IngestRun:
        return ingest(*args, **kwargs)


sys.modules[__name__].__class__ = _CallablePackage
