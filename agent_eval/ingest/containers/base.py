"""The container protocol and its registry (entry-point group ``agent_eval.containers``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from agent_eval.ingest.spans import LogRecord, SourceLocation, SpanRecord
from agent_eval.plugins import Registry
from agent_eval.trace import AgentTrace

__all__ = ["Container", "ContainerItem", "Skipped", "containers"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Skipped:
    """An input item a container could not use, with the reason (counted, never dropped).

    Attributes:
        reason: A short machine-friendly reason, e.g. ``"invalid_span_id"``.
        detail: A sentence naming the bad value and the fix.
        source: File and line.
        trace_id / span_id: When known (hex).
        spans: How many spans the skipped item held (so span accounting adds up).
        logs: How many log records it held (likewise for the log accounting).

    """

    reason: str
    detail: str
    source: SourceLocation | None = None
    trace_id: str | None = None
    span_id: str | None = None
    spans: int = 1
    logs: int = 0


ContainerItem: TypeAlias = SpanRecord | LogRecord | AgentTrace | Skipped
"""What a container yields: spans and log records (span formats), whole conversations (chat
logs, AgentTrace JSONL), or a :class:`Skipped` note for something it could not use."""


class Container(ABC):
    """Decodes one file format into spans, log records or whole conversations, streaming.

    Subclasses set ``name`` (registry name, used by ``--format``), ``description`` and, when
    their ``sniff`` is more or less specific than the default, ``priority``: ``--format auto``
    asks containers in ``(priority, name)`` order and takes the first that recognises the file,
    so a narrow format (tau-bench records) must have a lower number than a broad one it could be
    mistaken for (plain message lists). JSON formats may list ``json_keys``, object keys that
    mark them (``resourceSpans``): they only name the likely format of a JSON file that no
    ``sniff`` recognised because it is cut short or invalid
    (:mod:`~agent_eval.ingest.json_diagnosis`).
    """

    name: ClassVar[str]
    description: ClassVar[str]
    priority: ClassVar[int] = 100
    json_keys: ClassVar[frozenset[str]] = frozenset()

    @abstractmethod
    def sniff(self, path: str, head: bytes) -> bool:
        """Whether a file whose first bytes are ``head`` (up to 64 KiB) is of this format."""

    @abstractmethod
    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the file's items as they are decoded.

        Raises:
            DecodeError: the file as a whole cannot be read as this container (names the file,
                and the line for JSON Lines); items that are individually bad are yielded as
                :class:`Skipped` instead, so the rest of the file is still used.

        """


def _adapt(name: str, obj: object) -> Container:
    instance = obj() if isinstance(obj, type) else obj
    if not isinstance(instance, Container):
        raise TypeError(f"container entry point {name!r} is not a Container: {obj!r}")
    return instance


containers: Registry[Container] = Registry("container", "agent_eval.containers", _adapt)
"""All registered containers, built-in and third-party."""
