"""The container protocol and its registry (entry-point group ``agent_eval.containers``)."""

from __future__ import annotations

import importlib
from abc import ABC, abstractmethod
from collections.abc import Iterator
from dataclasses import dataclass
from typing import ClassVar, TypeAlias

from agent_eval._plugins import Registry
from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.ingest._spans import LogRecord, SourceLocation, SpanRecord

__all__ = [
    "Container",
    "ContainerItem",
    "DeferredContainer",
    "RecordsUsed",
    "Skipped",
    "containers",
]


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


@dataclass(frozen=True, slots=True)
class RecordsUsed:
    """How many records of the file went into the conversations a container yields.

    For a container of whole conversations (:attr:`Container.whole_conversations`) that does
    not read one record per conversation: the interactions of a recorded HTTP cassette merged
    into one conversation, the evaluations of an analytics file grouped by conversation and
    model. Yielded once or more per file, in any order with the conversations; the counts add
    up. A container that never yields it has each conversation counted as one record.

    Attributes:
        count: Records used (not skipped), >= 0.

    """

    count: int


ContainerItem: TypeAlias = SpanRecord | LogRecord | AgentTrace | Skipped | RecordsUsed
"""What a container yields: spans and log records (span formats), whole conversations (chat
logs, AgentTrace JSONL), a :class:`Skipped` note for something it could not use, or (a
container merging records) :class:`RecordsUsed`."""


class Container(ABC):
    """Decodes one file format into spans, log records or whole conversations, streaming.

    Subclasses set ``name`` (registry name, used by ``--format``), ``description`` and, when
    their ``sniff`` is more or less specific than the default, ``priority``: ``--format auto``
    asks containers in ``(priority, name)`` order and takes the first that recognises the file,
    so a narrow format (tau-bench records) must have a lower number than a broad one it could be
    mistaken for (plain message lists). JSON formats may list ``json_keys``, object keys that
    mark them (``resourceSpans``): they only name the likely format of a JSON file that no
    ``sniff`` recognised because it is cut short or invalid
    (:mod:`~agent_eval.ingest._json_diagnosis`). A container that reads whole conversations from
    records (chat logs, datasets, AgentTrace JSON Lines) sets ``whole_conversations``: its
    records are accounted as ``records: used + skipped = read`` (a conversation is one record
    used, unless it yields :class:`RecordsUsed`; a :class:`Skipped` holding no span or log
    record is one record skipped), as spans are for span formats.

    Ordering needs every container's ``priority`` before any is asked, so every entry point of
    the group is loaded; a container whose module is costly to import declares itself with a
    :class:`DeferredContainer` instead, whose implementation is imported only when asked.
    """

    name: ClassVar[str]
    description: ClassVar[str]
    priority: ClassVar[int] = 100
    json_keys: ClassVar[frozenset[str]] = frozenset()
    whole_conversations: ClassVar[bool] = False

    @abstractmethod
    def sniff(self, path: str, head: bytes) -> bool:
        """Whether a file whose first bytes are ``head`` (up to 64 KiB) is of this format."""

    @abstractmethod
    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the file's items as they are decoded.

        Open ``path`` with :func:`agent_eval.ingest._sources.open_input` (as the built-in
        containers do), not ``open``: it decompresses gzip'd files as they are read and gives
        standard input (``<stdin>``) and pipes, which can be read once and not seeked in. A
        container that calls ``open(path)`` itself reads the compressed bytes of a gzip'd file
        (``head`` given to :meth:`sniff` is decompressed, so it may sniff yes and then fail)
        and cannot read standard input. Name conversations after the file with
        :func:`agent_eval.ingest._sources.input_stem` (``x`` for ``x.json`` and ``x.json.gz``).

        Raises:
            DecodeError: the file as a whole cannot be read as this container (names the file,
                and the line for JSON Lines); items that are individually bad are yielded as
                :class:`Skipped` instead, so the rest of the file is still used.

        """


class DeferredContainer(Container):
    """A container declared apart from its implementation, which is imported on first use.

    A subclass sets ``name``, ``description``, ``priority`` and ``json_keys`` (what ordering,
    help texts and :mod:`~agent_eval.ingest._json_diagnosis` read) and ``implementation``, the
    ``"package.module:Class"`` of a subclass of that declaration which defines ``sniff`` and
    ``read``. The entry point names the declaration, in a module that is cheap to import, so
    ``--format auto`` imports only the implementations it asks before one recognises the file
    (an OTLP/JSON file: two of the 21 built-in containers). The built-in containers are
    declared this way (:mod:`agent_eval.ingest.containers._builtin`); an entry point naming a
    plain :class:`Container` works as before. The implementation inherits the declaration's
    attributes, so they are written once; it can be used directly as well
    (``OtlpJsonContainer().read(path)``), and :meth:`load` then returns it.
    """

    implementation: ClassVar[str]

    def __init__(self) -> None:
        self._loaded: Container | None = None

    def load(self) -> Container:
        """The implementation's instance (this object when it is the implementation).

        Raises:
            ConfigError: the implementation cannot be imported, or is not a subclass of this
                declaration that defines ``sniff`` and ``read`` (names the container and the
                class). ``--format auto`` passes over a container whose ``sniff`` raises.

        """
        if self._loaded is None:
            module, _, attr = self.implementation.partition(":")
            try:
                found = getattr(importlib.import_module(module), attr)
            except Exception as exc:
                raise ConfigError(
                    f"container {self.name!r} is installed but failed to load "
                    f"({self.implementation}: {type(exc).__name__}: {exc}); reinstall the "
                    "package that provides it"
                ) from None
            self._loaded = _implementation(self, found)
        return self._loaded

    def sniff(self, path: str, head: bytes) -> bool:
        """The implementation's ``sniff`` (imports it)."""
        return self.load().sniff(path, head)

    def read(self, path: str) -> Iterator[ContainerItem]:
        """The implementation's ``read`` (imports it)."""
        return self.load().read(path)


def _implementation(declaration: DeferredContainer, found: object) -> Container:
    """``declaration`` itself when it is an instance of ``found``, else a new ``found()``.

    Raises:
        ConfigError: ``found`` is not a class of the declaration's kind, or leaves ``sniff`` or
            ``read`` to :class:`DeferredContainer` (which would ask itself forever).

    """
    kind = type(declaration)
    if (
        not isinstance(found, type)
        or not (isinstance(declaration, found) or issubclass(found, kind))
        or any(getattr(found, m) is getattr(DeferredContainer, m) for m in ("sniff", "read"))
    ):
        raise ConfigError(
            f"container {declaration.name!r}: {declaration.implementation} is not a subclass "
            f"of {kind.__module__}.{kind.__qualname__} that defines sniff and read"
        )
    if isinstance(declaration, found):
        return declaration
    instance: Container = found()
    return instance


def _adapt(name: str, obj: object) -> Container:
    instance = obj() if isinstance(obj, type) else obj
    if not isinstance(instance, Container):
        raise TypeError(f"container entry point {name!r} is not a Container: {obj!r}")
    return instance


containers: Registry[Container] = Registry("container", "agent_eval.containers", _adapt)
"""All registered containers, built-in and third-party."""
