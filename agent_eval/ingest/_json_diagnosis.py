"""Why a JSON file that no container recognises cannot be read: cut short, or invalid.

``--format auto`` asks each container's ``sniff`` about the first 64 KiB of a file. A JSON file
cut short (a copy interrupted, an export still being written) loses the keys those sniffs look
for, so it used to be reported as "not recognised", while ``--format NAME`` named the line and
column. :func:`diagnose_invalid_json` parses such a file (a JSON document or JSON Lines) and,
when it is not valid JSON, returns a :class:`~agent_eval.errors.DecodeError` that names the line
and column where it breaks and the container whose marker keys (``Container.json_keys``) its
beginning holds. Valid JSON of no known shape stays "not recognised".
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Iterator
from itertools import islice

import orjson

from agent_eval.errors import DecodeError
from agent_eval.ingest._sources import open_input
from agent_eval.ingest.containers._base import Container

__all__ = [
    "MAX_DIAGNOSED_BYTES",
    "diagnose_invalid_json",
    "later_records",
    "likely_container",
]

MAX_DIAGNOSED_BYTES = 64 * 1024**2
"""Larger unrecognised files are not parsed to find where they break (reported unrecognised)."""

_BOM = b"\xef\xbb\xbf"
_KEY = re.compile(rb'"((?:[^"\\\n]|\\.){1,80})"\s*:')
"""An object key (``"name":``) in the raw bytes."""
_RECORD_LINE = re.compile(rb"\n[{\[]")
"""A line that opens an object or array at column 0 (the next JSON Lines record)."""
_PARTIAL_KEY = re.compile(rb'[{,]\s*"([^"\\\n]{2,80})\Z')
"""A key cut off by the end of the file (``{"resourceSp``)."""


def diagnose_invalid_json(
    path: str, head: bytes, size: int, candidates: Iterable[Container]
) -> DecodeError | None:
    """The error for a file that starts like JSON but does not parse, else ``None``.

    Args:
        path: The file (read whole when ``size`` exceeds ``len(head)``).
        head: Its first bytes, as the sniffs saw them.
        size: Its size in bytes; above :data:`MAX_DIAGNOSED_BYTES` nothing is parsed.
        candidates: The registered containers, in the order auto-detection asks them.

    Returns:
        ``None`` when the file does not start with ``{`` or ``[``, is valid JSON or JSON Lines,
        or is too large to parse here; else a ``DecodeError`` with the 1-based line (as
        ``line``) and column where parsing stopped, whether the file ends early (truncated),
        and the container it looks like, when its keys match one.

    Raises:
        OSError: the file cannot be read (the caller turns it into an ``InputError``).

    """
    start = head.removeprefix(_BOM).lstrip()
    if start[:1] not in (b"{", b"[") or size > MAX_DIAGNOSED_BYTES:
        return None
    if size > len(head):
        with open_input(path) as stream:
            head = stream.read()
    data = head.removeprefix(_BOM)
    found = _first_error(data)
    if found is None:
        return None
    line, column, message, truncated = found
    looks = likely_container(head[: 64 * 1024], candidates)
    what = (
        f"the file looks like {looks.name} but"
        if looks is not None
        else "no container recognises the file, and it"
    )
    broken = "ends early (truncated)" if truncated else "is not valid JSON"
    fix = (
        f"re-export or copy it whole; once it is valid JSON, --format {looks.name} reads it"
        if looks is not None
        else "re-export or copy it whole, or force a format with --format NAME"
    )
    return DecodeError(
        f"{what} {broken} at line {line}, column {column} ({message}); {fix}",
        path=path,
        line=line,
    )


def later_records(head: bytes) -> Iterator[bytes]:
    """``head`` from each of its later lines that may open a JSON Lines record, in order.

    For a file no container recognises: JSON Lines whose first lines are bad (cut off, garbled,
    valid JSON of another shape) are recognised from their first good record. A candidate line
    starts with ``{`` or ``[`` at column 0 and ends within ``head`` (the inner lines of a
    pretty-printed document are indented, so none of them is one); at most
    :data:`~agent_eval.ingest.containers._leading.MAX_LEADING_BAD` lines are tried.
    """
    from agent_eval.ingest.containers._leading import MAX_LEADING_BAD

    data = head.removeprefix(_BOM)
    starts = (m.start() + 1 for m in _RECORD_LINE.finditer(data))
    for start in islice(starts, MAX_LEADING_BAD):
        if data.find(b"\n", start) >= 0:
            yield data[start:]


def likely_container(head: bytes, candidates: Iterable[Container]) -> Container | None:
    """The container most of whose ``json_keys`` appear in ``head`` (first in order on ties).

    A key cut off by the end of ``head`` counts when one of a container's keys starts with it.
    ``None`` when no container declares a key found there.
    """
    keys = {m.group(1).decode("utf-8", "replace") for m in _KEY.finditer(head)}
    partial = _PARTIAL_KEY.search(head)
    cut = partial.group(1).decode("utf-8", "replace") if partial is not None else None
    best: Container | None = None
    best_score = 0
    for container in candidates:
        declared = _declared_keys(container)
        score = len(declared & keys)
        if cut is not None and any(k.startswith(cut) for k in declared):
            score += 1
        if score > best_score:
            best, best_score = container, score
    return best


def _declared_keys(container: Container) -> frozenset[str]:
    try:
        keys = frozenset(container.json_keys)
    except Exception:  # a broken plugin's keys must not decide anything
        return frozenset()
    return keys if all(isinstance(k, str) for k in keys) else frozenset()


def _first_error(data: bytes) -> tuple[int, int, str, bool] | None:
    """``(line, column, message, truncated)`` of the first JSON error, or ``None`` if valid.

    The file is tried as one document, then as JSON Lines (each non-blank line one value).
    """
    try:
        orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        whole = exc
    else:
        return None
    lines = data.split(b"\n")
    first = next((i for i, raw in enumerate(lines) if raw.strip()), None)
    if first is not None and _parses(lines[first]) and len([r for r in lines if r.strip()]) > 1:
        for number, raw in enumerate(lines, 1):
            if not raw.strip():
                continue
            try:
                orjson.loads(raw)
            except orjson.JSONDecodeError as exc:
                is_last = not any(r.strip() for r in lines[number:])
                truncated = is_last and exc.pos >= len(raw.rstrip())
                return number, exc.colno, exc.msg, truncated
        return None  # valid JSON Lines
    truncated = whole.pos >= len(data.rstrip())
    return whole.lineno, whole.colno, whole.msg, truncated


def _parses(raw: bytes) -> bool:
    try:
        orjson.loads(raw)
    except orjson.JSONDecodeError:
        return False
    return True
