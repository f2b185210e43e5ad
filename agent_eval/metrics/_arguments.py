"""Comparing tool-call arguments as JSON values: :class:`ArgumentComparison`.

Arguments are compared as the JSON values they are (RFC 8259 data model), never as text and
never through hashing or sets: objects key by key, arrays element by element in order with
duplicates kept, numbers as numbers (``1`` equals ``1.0``; ``true`` is not ``1``), ``null``
only with ``null``. Modes:

- ``exact``: the agent's arguments equal the reference's (same keys at every level);
- ``subset``: every key of the reference must be present with a matching value (recursively,
  in nested objects); keys the reference does not name are not compared;
- ``ignore``: arguments are not compared (names only).

A normaliser applies to every string and number argument, at any depth: ``strings=normalized``
compares strings after Unicode NFKC, case folding and whitespace collapsing (trimmed, runs of
whitespace as one space); ``rel_tol`` compares numbers within a relative tolerance
(``math.isclose``; ``0`` means equal). :func:`json_equal` and :func:`calls_equal` are the
``exact`` comparison as a predicate (for counting identical calls).
"""

from __future__ import annotations

import math
import unicodedata
from dataclasses import dataclass
from typing import Literal

import orjson
from pydantic import JsonValue

from agent_eval._trace import ToolCall

__all__ = [
    "ArgumentComparison",
    "ArgumentMode",
    "StringMode",
    "call_text",
    "calls_equal",
    "json_equal",
]

ArgumentMode = Literal["exact", "subset", "ignore"]
StringMode = Literal["exact", "normalized"]


def json_equal(a: JsonValue, b: JsonValue) -> bool:
    """Whether ``a`` and ``b`` are equal as JSON values (the ``exact`` comparison).

    Python's ``==`` already compares objects regardless of key order, arrays in order and
    numbers as numbers; what it gets wrong for JSON is ``True == 1``, which is checked apart
    (only for values ``==`` found equal whose sorted JSON texts differ).
    """
    if a != b:
        return False
    if _text(a) == _text(b):  # the same canonical text: equal (the common case, in C)
        return True
    return _no_bool_mixup(a, b)  # equal by ==, written differently: 1 vs 1.0, or True vs 1


def _text(value: JsonValue) -> bytes:
    return orjson.dumps(value, option=orjson.OPT_SORT_KEYS)


def _no_bool_mixup(a: JsonValue, b: JsonValue) -> bool:
    if isinstance(a, bool) or isinstance(b, bool):
        return type(a) is type(b)
    if isinstance(a, dict) and isinstance(b, dict):
        return all(_no_bool_mixup(value, b[key]) for key, value in a.items())
    if isinstance(a, list) and isinstance(b, list):
        return all(map(_no_bool_mixup, a, b))
    return True


def calls_equal(a: ToolCall, b: ToolCall) -> bool:
    """Same tool and arguments equal as JSON (unparsed argument text: equal text)."""
    if a.name != b.name or a.raw_arguments != b.raw_arguments:
        return False
    return a.raw_arguments is not None or json_equal(a.arguments, b.arguments)


def call_text(call: ToolCall, limit: int = 300) -> str:
    """``name({"a": 1})``: a call as one line, arguments as compact JSON, cut at ``limit``."""
    if call.raw_arguments is not None:
        arguments = call.raw_arguments
    elif call.arguments is None:
        arguments = ""
    else:
        arguments = orjson.dumps(call.arguments, option=orjson.OPT_SORT_KEYS).decode()
    text = f"{call.name}({arguments})"
    return text if len(text) <= limit else text[: limit - 1] + "…"


@dataclass(frozen=True, slots=True)
class ArgumentComparison:
    """How a reference call's arguments are compared with an agent call's.

    Attributes:
        mode: ``exact``, ``subset`` (the reference's keys must match) or ``ignore``.
        strings: ``exact`` or ``normalized`` (NFKC, case-folded, whitespace collapsed).
        rel_tol: Relative tolerance for numbers (``math.isclose``), >= 0.

    """

    mode: ArgumentMode = "exact"
    strings: StringMode = "exact"
    rel_tol: float = 0.0

    @property
    def is_equivalence(self) -> bool:
        """Exact comparison: a match is :func:`calls_equal` (an equivalence relation)."""
        return self.mode == "exact" and self.strings == "exact" and self.rel_tol == 0.0

    def call_difference(self, expected: ToolCall, actual: ToolCall) -> str | None:
        """``None`` when ``actual`` matches ``expected`` (name and arguments), else why not.

        The reason names the first difference with its JSON path (``$.passengers[1].name``).
        """
        if expected.name != actual.name:
            return f"tool {actual.name!r} is not {expected.name!r}"
        if self.mode == "ignore":
            return None
        if expected.raw_arguments is not None or actual.raw_arguments is not None:
            if expected.raw_arguments == actual.raw_arguments:
                return None
            return "arguments did not parse as JSON"
        return self.difference(expected.arguments, actual.arguments)

    def difference(self, expected: JsonValue, actual: JsonValue, path: str = "$") -> str | None:
        """``None`` when ``actual`` matches ``expected`` under this comparison, else why not."""
        if isinstance(expected, dict):
            if not isinstance(actual, dict):
                return f"{path}: expected an object, got {_kind(actual)}"
            return self._object_difference(expected, actual, path)
        if isinstance(expected, list):
            if not isinstance(actual, list):
                return f"{path}: expected an array, got {_kind(actual)}"
            return self._array_difference(expected, actual, path)
        if self._scalar_equal(expected, actual):
            return None
        return f"{path}: expected {_show(expected)}, got {_show(actual)}"

    def _array_difference(
        self, expected: list[JsonValue], actual: list[JsonValue], path: str
    ) -> str | None:
        if len(expected) != len(actual):
            return f"{path}: expected {len(expected)} items, got {len(actual)}"
        for index, (e, a) in enumerate(zip(expected, actual, strict=True)):
            found = self.difference(e, a, f"{path}[{index}]")
            if found is not None:
                return found
        return None

    def _object_difference(
        self, expected: dict[str, JsonValue], actual: dict[str, JsonValue], path: str
    ) -> str | None:
        for key, value in expected.items():
            where = f"{path}.{key}"
            if key not in actual:
                return f"{where}: missing"
            found = self.difference(value, actual[key], where)
            if found is not None:
                return found
        if self.mode == "exact":
            extra = sorted(set(actual) - set(expected))
            if extra:
                return f"{path}.{extra[0]}: not in the reference"
        return None

    def _scalar_equal(self, expected: JsonValue, actual: JsonValue) -> bool:
        if isinstance(expected, bool) or isinstance(actual, bool):
            return type(expected) is type(actual) and expected == actual
        if isinstance(expected, int | float) and isinstance(actual, int | float):
            if expected == actual:
                return True
            return self.rel_tol > 0 and math.isclose(expected, actual, rel_tol=self.rel_tol)
        if isinstance(expected, str) and isinstance(actual, str):
            if self.strings == "normalized":
                return _normalize(expected) == _normalize(actual)
            return expected == actual
        return expected is None and actual is None


def _normalize(text: str) -> str:
    return " ".join(unicodedata.normalize("NFKC", text).casefold().split())


def _kind(value: JsonValue) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, str):
        return "a string"
    if value is None:
        return "null"
    return "an array" if isinstance(value, list) else "an object"


def _show(value: JsonValue) -> str:
    text = orjson.dumps(value).decode()
    return text if len(text) <= 80 else text[:79] + "…"
