"""The convention protocol and its registry (entry-point group ``agent_eval.conventions``)."""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import ClassVar

from agent_eval._plugins import Registry
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._spans import LogRecord, SpanRecord

__all__ = ["Convention", "conventions", "markers_of", "span_markers"]


class Convention(ABC):
    """Reads messages, tool runs and usage out of spans written under one convention family.

    Subclasses set ``name`` (the registry name), ``semconv`` (the convention version they follow,
    e.g. ``"OTel GenAI semantic conventions v1.37"``) and ``priority``: when several conventions
    detect the same span (a framework plus an OpenAI instrumentation writing both), assembly
    keeps the messages of the one with the lowest priority number and counts the others as
    duplicates.
    """

    name: ClassVar[str]
    semconv: ClassVar[str]
    priority: ClassVar[int] = 100
    triggers: ClassVar[frozenset[str]] = frozenset()
    """Markers (see :func:`span_markers`) of which a span must carry one for ``detect`` to be
    asked: a promise that ``detect`` is false on any span carrying none of them. Empty (the
    default, so conventions that predate it keep working): ``detect`` is asked on every span."""

    @abstractmethod
    def detect(self, span: SpanRecord) -> bool:
        """Whether the span carries attributes or events of this convention."""

    @abstractmethod
    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """Read the span (and the log records joined to it by trace and span id).

        Raises:
            InvalidSpanError: an attribute the convention defines has an unusable type or value;
                the message names the span id and the attribute key.

        """


def span_markers(span: SpanRecord) -> set[str]:
    """What a span carries that conventions are triggered by, read in one pass.

    Returns:
        The first dotted segment of every attribute key and event name (``"gen_ai"`` for
        ``gen_ai.usage.input_tokens``; an undotted key is its own segment) and the instrumentation
        scope name.

    """
    known = _MARKERS
    try:
        markers = {known[key] for key in span.attributes}
    except KeyError:  # a key not seen before (or the cache was full): learn the span's keys
        if len(known) > _MARKERS_MAX:
            known.clear()
        markers = set()
        for key in span.attributes:
            marker = key.partition(".")[0]
            markers.add(marker)
            if len(key) <= _MARKER_KEY_MAX:
                known[key] = marker
    if span.events:
        markers.update(event.name.partition(".")[0] for event in span.events)
    markers.add(span.scope_name)
    return markers


_MARKERS: dict[str, str] = {}
"""Attribute key -> its marker: spans repeat a few keys, so a lookup beats splitting each key."""
_MARKERS_MAX = 4096
"""Keys remembered at most (an export with ever-new keys must not grow the cache unbounded)."""
_MARKER_KEY_MAX = 256
"""Longer keys are not remembered (the cache stays under ~1 MiB of keys)."""


def markers_of(*keys: str) -> frozenset[str]:
    """The markers of attribute keys, key prefixes or event names (a convention's ``triggers``)."""
    return frozenset(key.partition(".")[0] for key in keys)


def _adapt(name: str, obj: object) -> Convention:
    instance = obj() if isinstance(obj, type) else obj
    if not isinstance(instance, Convention):
        raise TypeError(f"convention entry point {name!r} is not a Convention: {obj!r}")
    return instance


conventions: Registry[Convention] = Registry("convention", "agent_eval.conventions", _adapt)
"""All registered conventions, built-in and third-party."""
