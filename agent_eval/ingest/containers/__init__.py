"""Containers: the file and in-process formats spans and conversations arrive in.

A container is a plugin: subclass :class:`Container` (``sniff`` and ``read``) and register it
in the ``agent_eval.containers`` entry-point group or with ``containers.register``. A RAG
conversation built in Python (no file) is :func:`rag_trace` over :class:`RagTurn` and
:class:`Passage`.
"""

from typing import TYPE_CHECKING, Any

from agent_eval.ingest.containers._base import Container, RecordsUsed, Skipped, containers

if TYPE_CHECKING:
    from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace

__all__ = [
    "Container",
    "Passage",
    "RagTurn",
    "RecordsUsed",
    "Skipped",
    "containers",
    "rag_trace",
]


def __getattr__(name: str) -> Any:
    """Import the RAG turns' module on first use (PEP 562): listing containers imports none."""
    if name not in ("Passage", "RagTurn", "rag_trace"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    from agent_eval.ingest.containers import _rag_turns

    return getattr(_rag_turns, name)
