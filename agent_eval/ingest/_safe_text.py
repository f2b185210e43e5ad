r"""Text made safe once, at the ingest edge: JSON decoding that cannot crash, lone surrogates out.

Trace files are untrusted. JSON allows ``"\ud83d"`` (half of an emoji, as a truncating
exporter writes it), which is a lone surrogate in Python: it cannot be encoded as UTF-8, so any
later write (``ingest --out``, renderings, the results store) would fail. orjson rejects such a
document outright, which would cost the whole file. :func:`loads` is the JSON decoder every
container and convention uses instead of ``orjson.loads``:

- the fast path is ``orjson.loads``;
- a document orjson refuses only for a surrogate is decoded again by the standard library and
  every lone surrogate (and any other code point UTF-8 cannot encode) is replaced by U+FFFD,
  counted in :data:`REPLACEMENTS` (the ingest report shows the count per file);
- a document orjson refuses only for a number beyond the double range (an unquoted integer
  of more than about 309 digits, ``1e400``) is decoded again by the standard library, numbers
  read as orjson reads them (an integer beyond 64 bits is a float) and those beyond the double
  range as ``inf``/``-inf``, so the one item holding it is rejected by its own decoder (an
  OTLP span whose ``intValue`` is not a 64-bit integer), not the file;
- an integer longer than Python converts (:data:`MAX_INT_DIGITS`) is read as ``inf`` or
  ``-inf`` by every decoder of the project (:func:`parse_int`: this one, the streaming reader,
  YAML): it is out of every range a trace field allows, as a float beyond the double range is;
- nesting deeper than :data:`MAX_NESTING` levels and every other decoder failure raise
  :class:`orjson.JSONDecodeError` (a ``ValueError``), never ``RecursionError`` or a bare
  ``ValueError`` from inside the decoder.

:func:`clean` does the replacement for values decoded by other means (the standard library's
streaming decoder, YAML), and :func:`check_depth` bounds nesting without recursion. Unicode
background: a lone surrogate is a code point in U+D800-U+DFFF not paired as UTF-16 (The Unicode
Standard, section 3.9, D91); U+FFFD is its standard replacement.
"""

from __future__ import annotations

import json
import re
from typing import Any

import orjson

__all__ = [
    "MAX_INT_DIGITS",
    "MAX_NESTING",
    "REPLACEMENT",
    "REPLACEMENTS",
    "NestingTooDeep",
    "brief",
    "check_depth",
    "clean",
    "clean_str",
    "loads",
    "parse_int",
    "replaced_so_far",
]

MAX_NESTING = 100
"""Deepest nesting of arrays and objects kept (real traces stay far below; AgentTrace lines
written with deeper values could not be read back by pydantic's JSON parser)."""
MAX_INT_DIGITS = 4300
"""Longest integer converted: Python's default integer string conversion limit (the Python docs,
"Integer string conversion length limitation"); longer ones are read as infinite
(:func:`parse_int`)."""
REPLACEMENT = "\ufffd"
"""What an unencodable code point becomes (U+FFFD REPLACEMENT CHARACTER)."""
REPLACEMENTS = [0]
"""Code points replaced so far in this process (a one-item list; the pipeline reads the
difference per file)."""

_SURROGATE = re.compile("[\ud800-\udfff]")
_INT64_DIGITS = 21
"""Characters of the longest integer orjson keeps as an int (``-9223372036854775808``)."""
_OUT_OF_RANGE = "number is infinity"
"""How orjson's error for a number beyond the double range starts (it does not decode them)."""
_SURROGATE_ESCAPE = re.compile(r"\\u[dD][89a-fA-F][0-9a-fA-F]{2}")


class NestingTooDeep(ValueError):
    """A value nests arrays/objects deeper than :data:`MAX_NESTING` levels."""


def replaced_so_far() -> int:
    """How many code points :func:`clean` has replaced in this process."""
    return REPLACEMENTS[0]


def clean_str(text: str) -> str:
    """``text`` with every lone surrogate replaced by U+FFFD (counted in :data:`REPLACEMENTS`)."""
    if text.isascii():
        return text
    cleaned, count = _SURROGATE.subn(REPLACEMENT, text)
    REPLACEMENTS[0] += count
    return cleaned


def _clean_key(key: Any) -> Any:
    return clean_str(key) if isinstance(key, str) else key


def _clean_dict(node: dict[Any, Any], depth: int, stack: list[tuple[Any, int]]) -> None:
    for key in list(node):
        item = node[key]
        new_key = _clean_key(key)
        if new_key is not key:
            del node[key]
            node[new_key] = item
        if isinstance(item, str):
            node[new_key] = clean_str(item)
        elif isinstance(item, dict | list):
            stack.append((item, depth + 1))


def _clean_list(node: list[Any], depth: int, stack: list[tuple[Any, int]]) -> None:
    for index, item in enumerate(node):
        if isinstance(item, str):
            node[index] = clean_str(item)
        elif isinstance(item, dict | list):
            stack.append((item, depth + 1))


def clean(value: Any, max_depth: int = MAX_NESTING) -> Any:
    """``value`` (decoded JSON or YAML) with lone surrogates replaced in every key and string.

    Walks iteratively (no recursion), changing strings in place; also enforces ``max_depth``.

    Raises:
        NestingTooDeep: the value nests deeper than ``max_depth``.

    """
    if isinstance(value, str):
        return clean_str(value)
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise NestingTooDeep(f"values nest deeper than {max_depth} levels")
        if isinstance(node, dict):
            _clean_dict(node, depth, stack)
        elif isinstance(node, list):
            _clean_list(node, depth, stack)
    return value


def check_depth(value: Any, max_depth: int = MAX_NESTING) -> None:
    """Raise :class:`NestingTooDeep` when ``value`` nests deeper than ``max_depth`` levels.

    ``[]`` is one level, ``[[]]`` two.
    """
    stack: list[tuple[Any, int]] = [(value, 1)]
    while stack:
        node, depth = stack.pop()
        if depth > max_depth:
            raise NestingTooDeep(f"values nest deeper than {max_depth} levels")
        children = node.values() if isinstance(node, dict) else node
        stack.extend((c, depth + 1) for c in children if isinstance(c, dict | list))


def brief(value: Any, limit: int = 80) -> str:
    """A short ``repr``-like text of ``value`` for error messages, safe for any input.

    Never recursive (a 10,000-deep list is ``[[[...``), never fails on long integers, and cut
    to ``limit`` characters.
    """
    if isinstance(value, int) and not isinstance(value, bool) and value.bit_length() > 200:
        return f"<integer of about {int(value.bit_length() * 0.30103)} digits>"
    text = _brief_container(value, limit) if isinstance(value, dict | list) else repr(value)
    return text if len(text) <= limit else text[: limit - 3] + "..."


def _brief_container(value: dict[Any, Any] | list[Any], limit: int) -> str:
    """The first ``limit`` characters of a container's repr, built without recursion."""
    parts: list[str] = []
    size = 0
    stack: list[Any] = [value]
    while stack and size <= limit:
        node = stack.pop()
        if isinstance(node, _Text):
            text = node.text
        elif isinstance(node, list):
            text = "["
            stack.append(_Text("]"))
            for index in range(len(node) - 1, -1, -1):
                stack.append(node[index])
                if index:
                    stack.append(_Text(", "))
        elif isinstance(node, dict):
            text = "{"
            stack.append(_Text("}"))
            items = list(node.items())
            for index in range(len(items) - 1, -1, -1):
                stack.extend((items[index][1], _Text(": "), _Text(brief(items[index][0], limit))))
                if index:
                    stack.append(_Text(", "))
        else:
            text = brief(node, limit)
        parts.append(text)
        size += len(text)
    return "".join(parts)


class _Text:
    """Literal text in :func:`_brief_container`'s work stack (punctuation, a key's repr)."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text


def _error(message: str, data: bytes | str) -> orjson.JSONDecodeError:
    doc = data if isinstance(data, str) else data[:200].decode("utf-8", "replace")
    return orjson.JSONDecodeError(message, doc, 0)


def loads(data: bytes | bytearray | memoryview | str, max_depth: int | None = MAX_NESTING) -> Any:
    """Decode one JSON document safely (see the module docstring).

    ``max_depth`` bounds nesting (:data:`MAX_NESTING` unless the caller reads a format that
    wraps such values, like AgentTrace lines). ``None`` skips the walk that checks it, for a
    decoder that bounds nesting itself (OTLP/JSON: ``_otlp_values.MAX_VALUE_DEPTH``) and
    cannot afford a second pass over every request; orjson's own limit (1,024) still holds.

    Raises:
        orjson.JSONDecodeError: not valid JSON, nested too deep, or an integer too long.

    """
    try:
        value = orjson.loads(data)
        if max_depth is not None and isinstance(value, dict | list) and _may_nest(data, max_depth):
            check_depth(value, max_depth)
        return value
    except NestingTooDeep as exc:
        raise _error(str(exc), _text_or_empty(data)) from None
    except RecursionError:
        raise _error(
            f"values nest deeper than {MAX_NESTING} levels", _text_or_empty(data)
        ) from None
    except orjson.JSONDecodeError as exc:
        if "surrogate" in str(exc):
            return _loads_with_surrogates(data, max_depth)
        if str(exc).startswith(_OUT_OF_RANGE):
            try:
                text = _text(data)
            except UnicodeError:
                raise exc from None
            return _loads_stdlib(text, max_depth)
        raise


def _may_nest(data: bytes | bytearray | memoryview | str, max_depth: int) -> bool:
    """Whether ``data`` could nest deeper than ``max_depth``: it has more brackets than that.

    Each level of nesting opens a ``[`` or ``{``, so a document with at most ``max_depth`` of
    them (counted in strings too: an overestimate) cannot be deeper; counting is C-fast, the
    walk of :func:`check_depth` is not.
    """
    if isinstance(data, memoryview):
        return True
    if isinstance(data, str):
        return data.count("[") + data.count("{") > max_depth
    return data.count(b"[") + data.count(b"{") > max_depth


def _text_or_empty(data: bytes | bytearray | memoryview | str) -> str:
    return data if isinstance(data, str) else ""


def _text(data: bytes | bytearray | memoryview | str) -> str:
    return data if isinstance(data, str) else bytes(data).decode("utf-8", "surrogatepass")


def parse_int(digits: str) -> int | float:
    """The integer a JSON or YAML number's ``digits`` (an optional ``-`` first) spell.

    More than :data:`MAX_INT_DIGITS` digits, which Python refuses to convert (``ValueError``),
    give ``inf`` (``-inf`` when negative) instead: the number is beyond every range a trace
    field allows, as a float beyond the double range (``1e400``) is, and the decoder of the
    item holding it rejects it there, so it costs that item, never the file.
    """
    if len(digits) - digits.startswith(("-", "+")) > MAX_INT_DIGITS:
        return float("-inf") if digits.startswith("-") else float("inf")
    return int(digits)


def _int_as_orjson(digits: str) -> int | float:
    """The number orjson would give for ``digits``: an int within 64 bits, else a float.

    ``float()`` has no digit limit: past the double range it gives ``inf``/``-inf``.
    """
    if len(digits) <= _INT64_DIGITS:
        value = int(digits)
        if -(2**63) <= value < 2**64:
            return value
    return float(digits)


def _no_constant(name: str) -> Any:
    """Reject ``NaN``/``Infinity`` literals, which orjson (the fast path) rejects too."""
    raise json.JSONDecodeError(f"{name} is not valid JSON", name, 0)


def _loads_with_surrogates(
    data: bytes | bytearray | memoryview | str, max_depth: int | None
) -> Any:
    """The standard library decodes lone surrogate escapes; :func:`clean` then replaces them."""
    try:
        text = _text(data)
    except UnicodeError:
        raise _error("not valid UTF-8", "") from None
    if _SURROGATE.search(text) is None and _SURROGATE_ESCAPE.search(text) is None:
        raise _error("not valid UTF-8 (surrogates)", text)
    return _loads_stdlib(text, max_depth)


def _loads_stdlib(text: str, max_depth: int | None) -> Any:
    """``text`` decoded by the standard library (numbers of any size), then :func:`clean`ed."""
    try:
        decoded = json.loads(text, parse_int=_int_as_orjson, parse_constant=_no_constant)
        return clean(decoded, max_depth or 1000)
    except RecursionError:
        raise _error(f"values nest deeper than {MAX_NESTING} levels", text) from None
    except NestingTooDeep as exc:
        raise _error(str(exc), text) from None
    except json.JSONDecodeError as exc:
        raise orjson.JSONDecodeError(exc.msg, exc.doc, exc.pos) from None
