"""Containers: the file and in-process formats spans and conversations arrive in.

A container is a plugin: subclass :class:`Container` (``sniff`` and ``read``) and register it
in the ``agent_eval.containers`` entry-point group or with ``containers.register``. A RAG
conversation built in Python (no file) is :func:`rag_trace` over :class:`RagTurn` and
:class:`Passage`.
"""

from agent_eval.ingest.containers._base import Container, RecordsUsed, Skipped, containers
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
