"""Value helpers shared by the framework conventions (private).

Exports disagree on types: Langfuse turns every attribute into a string, Jaeger flattens arrays
to JSON strings, frameworks write structured values as JSON text. These helpers read a value the
way a convention expects it, whichever of those forms it arrived in.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from typing import Any

import orjson
from pydantic import JsonValue

from agent_eval._trace import OpaquePart, ToolCall
from agent_eval.ingest._extraction import ToolExecution
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest.conventions._attachments import strip_inline_data
from agent_eval.ingest.conventions._content_parts import opaque_parts_of
from agent_eval.ingest.conventions._content_parts import text_of as parts_text_of

__all__ = [
    "as_int",
    "as_str",
    "content_of",
    "first",
    "indexed",
    "maybe_json",
    "parse_arguments",
    "text_of",
    "tool_call",
    "tool_execution",
]

_INDEXED = re.compile(r"(\d+)\.(.+)")


def maybe_json(value: Any) -> Any:
    """``value`` parsed as JSON when it is a string holding a JSON object or array, else as is."""
    if isinstance(value, str | bytes) and value[:1] in ("{", "[", b"{", b"["):
        try:
            return safe_json_loads(value)
        except orjson.JSONDecodeError:
            return value
    return value


def as_int(value: Any) -> int | None:
    """An integer from an int, an integral float or a decimal string; ``None`` otherwise."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, float) and value.is_integer():
        return int(value)
    if isinstance(value, str):
        try:
            return int(value.strip())
        except ValueError:
            return None
    return None


def as_str(value: Any) -> str | None:
    """A non-empty string, or ``None``."""
    return value if isinstance(value, str) and value else None


def parse_arguments(value: Any) -> tuple[JsonValue, str | None]:
    """Tool-call arguments as ``(parsed JSON, raw string kept only when it did not parse)``."""
    if value is None or value == "":
        return None, None
    if isinstance(value, str):
        try:
            return safe_json_loads(value), None
        except orjson.JSONDecodeError:
            return None, value
    return _jsonable(value), None


def tool_call(call_id: Any, name: Any, arguments: Any) -> ToolCall:
    """A :class:`ToolCall`; arguments may be a JSON string or already structured."""
    parsed, raw = parse_arguments(arguments)
    return ToolCall(id=as_str(call_id), name=str(name or ""), arguments=parsed, raw_arguments=raw)


def tool_execution(name: Any, call_id: Any, arguments: Any, result: Any) -> ToolExecution:
    """A :class:`ToolExecution`; the result is rendered to text with :func:`text_of`."""
    parsed, raw = parse_arguments(arguments)
    return ToolExecution(
        name=as_str(name),
        call_id=as_str(call_id),
        arguments=parsed,
        raw_arguments=raw,
        result=None if result is None else text_of(result),
    )


def text_of(value: Any) -> str:
    """Message content as text: strings verbatim, text parts joined, anything else as JSON.

    The JSON of a structured value has its inline payloads (base64 images, audio, files)
    replaced by a short marker (:func:`~.attachments.strip_inline_data`).
    """
    if value is None:
        return ""
    if isinstance(value, str):
        return value
    if isinstance(value, list) and value and all(_is_text_part(p) for p in value):
        return "".join(str(p.get("text", p.get("content", ""))) for p in value)
    return orjson.dumps(_jsonable(strip_inline_data(value))).decode()


def content_of(value: Any) -> tuple[str, tuple[OpaquePart, ...]]:
    """A message content's text and its attachments (typed placeholders, no inline payload).

    A list of typed content parts holding anything but text (OpenAI ``image_url`` /
    ``input_audio`` / ``file`` parts, GenAI ``blob`` / ``uri`` parts) gives its text parts
    joined by newlines and one :class:`~agent_eval._trace.OpaquePart` per other part, its
    base64 data replaced by a marker (:mod:`.attachments`). Any other value gives
    :func:`text_of` and no part.
    """
    if _is_mixed_parts(value):
        return parts_text_of(value), opaque_parts_of(value)
    return text_of(value), ()


def _is_mixed_parts(value: Any) -> bool:
    if not isinstance(value, list) or not value:
        return False
    typed = all(isinstance(p, Mapping) and isinstance(p.get("type"), str) for p in value)
    return typed and not all(_is_text_part(p) for p in value)


def _is_text_part(part: Any) -> bool:
    return isinstance(part, Mapping) and part.get("type") in ("text", "input_text", "output_text")


def _jsonable(value: Any) -> JsonValue:
    return safe_json_loads(orjson.dumps(value, default=str))  # type: ignore[no-any-return]


def indexed(attributes: Mapping[str, Any], prefix: str) -> list[dict[str, Any]]:
    """Group flattened ``{prefix}{i}.{rest}`` attributes into a list of ``{rest: value}`` by ``i``.

    ``indexed(attrs, "gen_ai.prompt.")`` turns ``gen_ai.prompt.0.role`` and
    ``gen_ai.prompt.0.content`` into ``[{"role": ..., "content": ...}]``. Gaps in the indices are
    closed up (order is kept).
    """
    groups: dict[int, dict[str, Any]] = {}
    for key, value in attributes.items():
        if key.startswith(prefix):
            match = _INDEXED.fullmatch(key[len(prefix) :])
            if match:
                groups.setdefault(int(match.group(1)), {})[match.group(2)] = value
    return [groups[i] for i in sorted(groups)]


def first(attributes: Mapping[str, Any], keys: Iterable[str]) -> Any:
    """The value of the first of ``keys`` present (and not ``None``) in ``attributes``."""
    for key in keys:
        value = attributes.get(key)
        if value is not None:
            return value
    return None
