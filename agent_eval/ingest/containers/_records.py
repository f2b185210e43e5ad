"""Read a file of JSON records: a JSON array, one JSON object, or JSON Lines (private).

Span dumps come in all three shapes. Records are yielded with the 1-based line they start on
for JSON Lines (``None`` for a whole-file document); a JSON Lines line that does not parse is
yielded as a :class:`~agent_eval.ingest.containers._base.Skipped` note so the rest of the file
is still read.
"""

from __future__ import annotations

import io
import re
from collections.abc import Iterator
from typing import IO, Any

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._sources import open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._leading import hold_leading_bad

__all__ = ["as_list", "as_mapping", "load_json", "not_utf8", "open_text", "read_records"]

_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")
"""What ``errors="surrogateescape"`` makes of a byte that is not UTF-8."""


def open_text(path: str) -> IO[str]:
    """``path`` opened as UTF-8 text for the csv module.

    Bytes that are not UTF-8 become lone surrogates (``surrogateescape``), so that
    :func:`not_utf8` skips their row instead of the whole file failing to decode.
    """
    return io.TextIOWrapper(
        open_input(path), encoding="utf-8", errors="surrogateescape", newline=""
    )


def not_utf8(row: list[str]) -> str | None:
    """``"byte 0xff is not UTF-8"`` for the first such byte in a row from :func:`open_text`."""
    for value in row:
        found = _ESCAPED_BYTE.search(value)
        if found is not None:
            return f"byte 0x{ord(found.group()) - 0xDC00:02x} is not UTF-8"
    return None


def load_json(path: str, hint: str = "") -> Any:
    """The whole file parsed as one JSON document.

    Raises:
        DecodeError: the file is not valid JSON (the message ends with ``hint``, when given).

    """
    try:
        with open_input(path) as handle:
            return safe_json_loads(handle.read())
    except orjson.JSONDecodeError as exc:
        raise DecodeError(f"not valid JSON ({exc}){hint}", path=path) from exc


def read_records(
    path: str, list_keys: tuple[str, ...] = ("data",), *, spans_per_record: int = 1
) -> Iterator[tuple[int | None, Any] | Skipped]:
    """Yield ``(line, record)`` for each record, or ``Skipped`` for a bad JSON Lines line.

    A whole-file array is a list of records; a whole-file object holding a list under one of
    ``list_keys`` (e.g. ``{"data": [...]}`` from a REST API) yields that list; any other object
    is one record. ``spans_per_record`` is what a bad line counts as in the span accounting:
    1 for span dumps (a line is a span), 0 for formats whose records are whole conversations
    (the line is then a skipped record, ``records_ignored``).

    Raises:
        DecodeError: the file is neither a JSON document nor JSON Lines (no line decodes).

    """
    with open_input(path) as handle:
        data = handle.read()
    try:
        document = safe_json_loads(data)
    except orjson.JSONDecodeError:
        yield from _json_lines(path, data, spans_per_record)
        return
    if isinstance(document, dict):
        nested = next((document[k] for k in list_keys if isinstance(document.get(k), list)), None)
        document = nested if nested is not None else [document]
    if not isinstance(document, list):
        raise DecodeError("expected a JSON array or object of spans", path=path)
    for record in document:
        yield None, record


def _json_lines(
    path: str, data: bytes, spans_per_record: int
) -> Iterator[tuple[int | None, Any] | Skipped]:
    """The lines of ``data``; a bad line costs itself, the first too when a good one follows.

    Raises:
        DecodeError: no line decodes (within :data:`._leading.MAX_LEADING_BAD`): the file is
            neither JSON nor JSON Lines; names the first line.

    """

    def fail(item: tuple[int | None, Any] | Skipped) -> DecodeError:
        line = item.source.line if isinstance(item, Skipped) and item.source else 1
        detail = item.detail if isinstance(item, Skipped) else ""
        return DecodeError(f"neither JSON nor JSON Lines: {detail}", path=path, line=line)

    return hold_leading_bad(
        _lines(path, data, spans_per_record), lambda i: isinstance(i, Skipped), fail
    )


def _lines(
    path: str, data: bytes, spans_per_record: int
) -> Iterator[tuple[int | None, Any] | Skipped]:
    for number, line in enumerate(data.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            yield number, safe_json_loads(line)
        except orjson.JSONDecodeError as exc:
            yield Skipped(
                reason="invalid_json",
                detail=f"line {number} is not valid JSON ({exc}); fix or remove the line",
                source=SourceLocation(path, number),
                spans=spans_per_record,
            )


def as_list(value: Any) -> list[Any]:
    """``value`` when it is a list, else ``[]`` (an optional list field of the wrong type)."""
    return value if isinstance(value, list) else []


def as_mapping(value: Any) -> dict[str, Any]:
    """``value`` when it is an object, else ``{}`` (an optional object field of the wrong type)."""
    return value if isinstance(value, dict) else {}
