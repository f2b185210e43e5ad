"""A JSON file holding the flat attribute map of ONE span (``*.attrs.json`` test fixtures).

Convention test suites (OpenInference's GenAI fixtures, for instance) store a single span as a
JSON object of attribute key -> value. Such a file becomes one synthetic
:class:`~agent_eval.ingest._spans.SpanRecord`:

- ``trace_id`` = the first 32 hex characters of the SHA-256 of the file's bytes, ``span_id`` =
  the next 16: deterministic (the same file always gives the same ids) and distinct per content;
- ``name`` = the file name without ``.attrs.json`` / ``.json``; no parent; times 0; kind
  ``INTERNAL``; status ``UNSET``.

Sniffing claims only a JSON object whose first key looks like a semantic-convention attribute
(``gen_ai.``, ``llm.``, ``openinference.``, ``input``...) and that contains none of the keys that
mark OTLP, Jaeger, Tempo or Langfuse exports, so those files are never taken for this one.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterator, Mapping
from typing import Any

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._sources import input_name, open_input
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem

__all__ = ["SpanAttributesContainer"]

_FIRST_KEY = re.compile(rb'\A(?:\xef\xbb\xbf)?\s*\{\s*"([^"]{1,200})"\s*:')
ATTRIBUTE_PREFIXES = (
    "gen_ai.",
    "llm.",
    "openinference.",
    "input",
    "output",
    "session.",
    "tool.",
    "retrieval.",
    "ai.",
    "traceloop.",
    "logfire.",
    "agent.",
    "langsmith.",
    "gcp.vertex.agent.",
)
"""First-key prefixes of attribute maps this container recognises."""
EXPORT_MARKERS = (
    b'"resourceSpans"',
    b'"resource_spans"',
    b'"resourceLogs"',
    b'"batches"',
    b'"traceId"',
    b'"traceID"',
    b'"spanId"',
    b'"spanID"',
    b'"observations"',
)
"""Keys that only export files (OTLP, Jaeger, Tempo, Langfuse) contain."""
_SUFFIXES = (".attrs.json", ".json")


class SpanAttributesContainer(builtin.SpanAttributes):
    """One JSON object of span attributes -> one synthetic span with content-derived ids."""

    def sniff(self, path: str, head: bytes) -> bool:
        """Whether ``head`` starts an object keyed by attribute names and is no export file."""
        match = _FIRST_KEY.match(head)
        if match is None or any(marker in head for marker in EXPORT_MARKERS):
            return False
        return match.group(1).decode("utf-8", "replace").startswith(ATTRIBUTE_PREFIXES)

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield the one span the file describes.

        Raises:
            DecodeError: the file is not a JSON object of attributes (names file and fix).

        """
        with open_input(path) as stream:
            data = stream.read()
        attributes = _decode(path, data)
        digest = hashlib.sha256(data).hexdigest()
        yield SpanRecord(
            trace_id=digest[:32],
            span_id=digest[32:48],
            name=_span_name(path),
            attributes=attributes,
            source=SourceLocation(path),
        )


def _decode(path: str, data: bytes) -> Mapping[str, Any]:
    try:
        value = safe_json_loads(data)
    except orjson.JSONDecodeError as exc:
        raise DecodeError(
            f"not valid JSON ({exc}); a span-attributes file is one JSON object of attributes",
            path=path,
        ) from None
    if not isinstance(value, dict) or not value:
        raise DecodeError(
            f"expected a non-empty JSON object of span attributes, got {type(value).__name__}",
            path=path,
        )
    return value


def _span_name(path: str) -> str:
    """The file name without ``.attrs.json`` / ``.json`` (and a compression suffix before)."""
    base = input_name(path)
    for suffix in _SUFFIXES:
        if base.endswith(suffix):
            return base[: -len(suffix)]
    return base
