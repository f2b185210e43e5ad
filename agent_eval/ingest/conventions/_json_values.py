"""JSON values inside span attributes: decode JSON held in strings, make values JSON-safe.

Conventions store structured data as JSON text in string attributes (GenAI
``gen_ai.input.messages``, OpenInference ``input.value``, tool-call arguments); exports may also
hand over bytes or tuples. These helpers read such values once, without raising on bad JSON.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson
from pydantic import JsonValue

from agent_eval.ingest._safe_text import loads as safe_json_loads

__all__ = ["decode_json", "parse_arguments", "to_json_value"]


def decode_json(value: Any) -> Any:
    """Parse ``value`` as JSON when it is a string holding a JSON object or array.

    Returns:
        The parsed value; the input unchanged when it is not a string, does not look like a JSON
        object/array, or does not parse.

    """
    if type(value) is not str:  # (exact str, the usual case, without two isinstance calls)
        if isinstance(value, bytes):
            value = value.decode("utf-8", "replace")
        elif not isinstance(value, str):
            return value
    stripped = value.lstrip()
    if not stripped or stripped[0] not in "[{":
        return value
    try:
        return safe_json_loads(stripped)
    except orjson.JSONDecodeError:
        return value


_SCALARS = frozenset({str, int, float, bool, type(None)})
"""Exact JSON scalar types: returned as they are (the fast path for parsed JSON)."""


def to_json_value(value: Any) -> JsonValue:
    """Make ``value`` JSON-safe (bytes become text, tuples lists, other objects their repr)."""
    kind = type(value)
    if kind in _SCALARS:
        return value  # type: ignore[no-any-return]
    if kind is dict:  # parsed JSON: exact dicts and lists, checked without ABC lookups
        return {
            (k if type(k) is str else str(k)): (v if type(v) in _SCALARS else to_json_value(v))
            for k, v in value.items()
        }
    if kind is list:
        return [v if type(v) in _SCALARS else to_json_value(v) for v in value]
    return _to_json_value(value)


def _to_json_value(value: Any) -> JsonValue:
    if value is None or isinstance(value, str | bool | int | float):
        return value
    if isinstance(value, bytes):
        return value.decode("utf-8", "replace")
    if isinstance(value, Mapping):
        return {str(k): to_json_value(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [to_json_value(v) for v in value]
    return repr(value)


def parse_arguments(value: Any) -> tuple[JsonValue, str | None]:
    """Tool-call arguments as ``(parsed JSON, raw string or None)``.

    A string is parsed as JSON; when it does not parse, ``(None, the string)`` is returned so the
    caller keeps it verbatim in ``raw_arguments``. Already-structured values pass through.
    """
    if isinstance(value, bytes):
        value = value.decode("utf-8", "replace")
    if isinstance(value, str):
        if not value.strip():
            return None, None
        try:
            parsed: JsonValue = safe_json_loads(value)  # already JSON-safe
            return parsed, None
        except orjson.JSONDecodeError:
            return None, value
    return to_json_value(value), None
