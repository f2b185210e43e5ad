"""Reference goals from a file: ``{conversation_id, reference}`` rows as JSON Lines or CSV.

JSONL: one object per line, ``{"conversation_id": "...", "reference": "..."}``. CSV: a header
row with ``conversation_id`` and ``reference`` columns (others ignored). The format is taken
from the suffix (``.jsonl``/``.ndjson``/``.json`` or ``.csv``); a gzip'd file (``.jsonl.gz``,
``.csv.gz``) is read decompressed, its format taken from the suffix before ``.gz``
(:mod:`agent_eval.ingest._sources`). A reference given in a file takes precedence over the one
an AgentTrace carries.
"""

from __future__ import annotations

import csv
from pathlib import Path

import orjson

from agent_eval.errors import InputError

__all__ = ["load_references"]

_FIELDS = ("conversation_id", "reference")


def _check(row: object, path: Path, line: int) -> tuple[str, str]:
    if not isinstance(row, dict) or not all(isinstance(row.get(f), str) for f in _FIELDS):
        raise InputError(
            f'expected {{"conversation_id": "<id>", "reference": "<goal>"}} (both strings), '
            f"got {row!r}",
            path=str(path),
            line=line,
        )
    if not row["conversation_id"].strip():
        raise InputError(
            "empty conversation_id; every row needs the id of the conversation it is the "
            "reference of",
            path=str(path),
            line=line,
        )
    return row["conversation_id"], row["reference"]


def _jsonl(path: Path) -> list[tuple[str, str]]:
    from agent_eval.ingest._sources import opened_input

    rows = []
    with opened_input(path) as handle:
        for number, line in enumerate(handle, 1):
            if line.strip():
                try:
                    value = orjson.loads(line)
                except orjson.JSONDecodeError as exc:
                    raise InputError(
                        f"not valid JSON: {exc}", path=str(path), line=number
                    ) from None
                rows.append(_check(value, path, number))
    return rows


def _csv(path: Path) -> list[tuple[str, str]]:
    from agent_eval.ingest._sources import opened_text

    with opened_text(path) as handle:
        reader = csv.DictReader(handle)
        missing = [f for f in _FIELDS if f not in (reader.fieldnames or [])]
        if missing:
            raise InputError(
                f"the CSV header lacks {', '.join(missing)}; it needs conversation_id,reference",
                path=str(path),
                line=1,
            )
        # line_num: the physical line the row ends on (quoted fields may span lines)
        return [_check(row, path, reader.line_num) for row in reader]


def load_references(path: str | Path) -> dict[str, str]:
    """Read a reference file into ``{conversation_id: reference}``.

    Raises:
        InputError: the file is missing, of an unknown suffix, has a bad row (names the line:
            not both strings, or an empty ``conversation_id``), gives one conversation two
            different references, or is gzip'd and cut short or corrupt.

    """
    from agent_eval.ingest._sources import input_suffix

    source = Path(path)
    if not source.is_file():
        raise InputError("reference file not found", path=str(source))
    suffix = input_suffix(source)
    if suffix not in (".jsonl", ".ndjson", ".json", ".csv"):
        raise InputError(
            f"unknown reference file type {suffix!r}; use .jsonl or .csv (gzip'd: .jsonl.gz, "
            ".csv.gz)",
            path=str(source),
        )
    rows = _csv(source) if suffix == ".csv" else _jsonl(source)
    references: dict[str, str] = {}
    for conversation_id, reference in rows:
        if references.setdefault(conversation_id, reference) != reference:
            raise InputError(
                f"conversation {conversation_id!r} has two different references",
                path=str(source),
            )
    return references
