"""Input discovery: the files behind the paths, directories and globs a user names.

Directories are walked recursively in sorted order, skipping what is obviously not a trace
(hidden entries, ``__pycache__``, notes, code, images, databases). A file named explicitly is
always read, whatever its name. gzip'd files are read (:mod:`agent_eval.ingest._sources`);
archives and compressions that are not (zip, tar, bzip2, xz, zstd) are listed as passed over,
with the command that extracts them. ``-`` is standard input (named ``<stdin>``); a pipe or FIFO
given by path is read as a stream. A path that names nothing is reported, not raised, so one typo
does not hide the other inputs.

Companion files that travel with traces are recognised by their first record and passed over
with a note instead of being offered to the containers: labels (``{conversation_id, label}``,
for ``--labels``), verdicts (``{conversation_id, verdict}``, for ``calibrate --predictions``),
references (``{conversation_id, reference}``, for ``--references``) as flat JSON Lines or CSV,
and the result rows of a run (``results.jsonl``). A gzip'd companion (``labels.jsonl.gz``) is
recognised the same way: its name is judged without ``.gz`` and its first record read
decompressed (:func:`agent_eval.ingest._sources.open_input`).
"""

from __future__ import annotations

import csv
import glob
import gzip
import zlib
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson

from agent_eval.ingest._safe_text import loads as safe_json_loads
from agent_eval.ingest._sources import (
    STDIN_NAME,
    STDIN_PATH,
    archive_note,
    input_suffix,
    is_stream,
    open_input,
    release,
)

__all__ = ["InputPath", "companion_note", "expand_paths", "is_obvious_non_input"]

NON_INPUT_SUFFIXES = frozenset(
    {
        ".md", ".rst", ".txt", ".py", ".pyc", ".pyi", ".toml", ".cfg", ".ini", ".lock",
        ".sh", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".html", ".css", ".js",
        ".mjs", ".cjs", ".ts", ".db", ".sqlite", ".sqlite3", ".db-wal", ".db-shm",
    }
)  # fmt: skip
"""Suffixes (lowercase) of files a directory walk does not offer to the containers (of a
gzip'd file, the suffix before ``.gz``: ``notes.txt.gz`` is skipped, ``x.otlp.jsonl.gz`` read)."""
NON_INPUT_STEMS = ("readme", "license", "licence", "notice", "provenance", "changelog", "note")
"""Name prefixes (lowercase) of documentation files without a telling suffix."""
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})
COMPANION_SUFFIXES = frozenset({".jsonl", ".ndjson", ".json", ".csv"})
"""Suffixes (lowercase) of files checked for being labels, verdicts, references or results (of
a gzip'd file, the suffix before ``.gz``: ``labels.jsonl.gz`` is checked)."""
FIRST_RECORD_BYTES = 64 * 1024
"""How much of a file's first line is read to recognise a companion file."""
LABEL_FIELDS = frozenset({"label", "success", "reward", "score"})
VERDICT_FIELDS = frozenset({"verdict", "prediction", "judge_verdict"})
_FLAT_COMPANIONS = (
    (frozenset({"reference"}), "references (use --references)"),
    (VERDICT_FIELDS, "verdicts (use calibrate --predictions)"),
    (LABEL_FIELDS, "labels (use --labels)"),
)
"""(a column the first record has, what the file is), checked in order."""
_TURN_CONTENT = frozenset({"messages", "question", "turns", "contexts", "answer", "input"})
"""Keys of a RAG turn record (rag-jsonl, MTRAG-UN): a ``{conversation_id, turn}`` record without
any of them is a row of a turn-labels file (``score --turn-labels``)."""


@dataclass(frozen=True, slots=True)
class InputPath:
    """One input file as the user will see it named, or a path that named nothing.

    Attributes:
        path: The file path (relative when the user gave a relative directory or glob).
        error: Why nothing could be read under the given path, else ``None``.
        note: Why the file is passed over although it exists, e.g. ``"not a trace file: labels
            (use --labels)"`` (:func:`companion_note`), else ``None``.

    """

    path: str
    error: str | None = None
    note: str | None = None


def is_obvious_non_input(path: Path) -> bool:
    """Whether a file found by a directory walk or glob is clearly not a trace file.

    A gzip'd file is judged by its name without ``.gz``.
    """
    name = path.name.lower()
    return (
        name.startswith(".")
        or input_suffix(name) in NON_INPUT_SUFFIXES
        or name.startswith(NON_INPUT_STEMS)
    )


def _first_record(path: Path) -> dict[str, object] | None:
    """The first JSON Lines record, or the CSV header as ``{column: None}``; ``None`` if neither.

    A gzip'd file's first record is read decompressed; damaged gzip data gives ``None`` (the
    file is then offered to the containers, whose read names the damage).
    """
    name = str(path)
    try:
        with open_input(name) as stream:
            line = stream.readline(FIRST_RECORD_BYTES)
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return None
    finally:
        release(name)
    if input_suffix(path) == ".csv":
        try:
            header = next(csv.reader([line.decode("utf-8-sig")]), [])
        except (UnicodeDecodeError, csv.Error):
            return None
        return {name.strip(): None for name in header}
    try:
        record = safe_json_loads(line)
    except orjson.JSONDecodeError:
        return None
    return record if isinstance(record, dict) else None


def companion_note(path: Path) -> str | None:
    """Why ``path`` is a companion of traces rather than a trace file, else ``None``.

    Recognised from the first record (JSON Lines) or header (CSV), of a gzip'd file
    (``labels.jsonl.gz``) decompressed: result rows have
    ``conversation_id``, ``run_id`` and ``metric``; the others are flat records with a
    ``conversation_id`` and a ``reference`` (references), a verdict column (verdicts) or a
    label column (labels); tool-call references have ``conversation_id`` and ``tool_calls``
    (and no ``messages``); turn labels have ``conversation_id`` and ``turn`` (and no question,
    answer, contexts or messages).

    Returns:
        E.g. ``"not a trace file: labels (use --labels)"``.

    """
    record = _first_record(path) if input_suffix(path) in COMPANION_SUFFIXES else None
    if record is None or "conversation_id" not in record:
        return None
    if {"run_id", "metric"} <= record.keys():
        return "not a trace file: result rows of a run (use agent-eval report or calibrate)"
    if "tool_calls" in record and "messages" not in record:
        return "not a trace file: tool-call references (use --tool-references)"
    if "turn" in record and not _TURN_CONTENT & record.keys():
        return "not a trace file: turn labels (use --turn-labels)"
    if any(isinstance(value, dict | list) for value in record.values()):
        return None  # e.g. an AgentTrace line: it has messages
    kind = next((what for keys, what in _FLAT_COMPANIONS if keys & record.keys()), None)
    return None if kind is None else f"not a trace file: {kind}"


def _in_skipped_dir(parts: tuple[str, ...]) -> bool:
    return any(p in SKIPPED_DIRS or (p.startswith(".") and p not in (".", "..")) for p in parts)


def _walk(root: Path) -> Iterator[Path]:
    for path in sorted(root.rglob("*")):
        if _in_skipped_dir(path.relative_to(root).parts[:-1]):
            continue
        if path.is_file() and not is_obvious_non_input(path):
            yield path


def _glob_root(pattern: str) -> Path:
    """The part of a glob pattern before its first wildcard (the user named it on purpose)."""
    parts = Path(pattern).parts
    fixed = parts[: next(i for i, p in enumerate(parts) if _is_magic(p))]
    return Path(*fixed) if fixed else Path()


def _is_magic(text: str) -> bool:
    return any(c in text for c in "*?[")


def _matched(path: Path, root: Path) -> list[Path]:
    if path.is_dir():
        return list(_walk(path))
    usable = path.is_file() and not is_obvious_non_input(path)
    return [path] if usable and not _in_skipped_dir(path.relative_to(root).parts[:-1]) else []


def _input(path: Path, name: str | None = None) -> InputPath:
    shown = name or str(path)
    note = archive_note(shown)
    return InputPath(shown, note=note if note is not None else companion_note(path))


def _expand_one(raw: str) -> Iterator[InputPath]:
    path = Path(raw)
    if raw in (STDIN_PATH, STDIN_NAME):
        yield InputPath(STDIN_NAME)  # read by agent_eval.ingest._sources
    elif is_stream(raw):  # /dev/stdin, a pipe or FIFO: read once, never peeked at here
        yield InputPath(raw)
    elif path.is_file():
        yield _input(path, raw)
    elif path.is_dir():
        found = [_input(p) for p in _walk(path)]
        yield from found or [InputPath(raw, "the directory holds no input files")]
    elif _is_magic(raw):
        root = _glob_root(raw)
        matches = sorted(glob.glob(raw, recursive=True))
        files = [p for m in matches for p in _matched(Path(m), root)]
        yield from [_input(p) for p in files] or [
            InputPath(raw, "no input file matches this pattern")
        ]
    else:
        yield InputPath(raw, "no such file or directory")


def expand_paths(paths: Iterable[str | Path]) -> list[InputPath]:
    """Expand files, directories (recursive, sorted) and globs into input files, in order.

    ``-`` is standard input (``InputPath("<stdin>")``); a pipe or FIFO given by path is kept as
    given and read as a stream (:mod:`agent_eval.ingest._sources`). Archives get a ``note``.

    A file reached twice (a directory and a glob overlapping) is read once, at its first place.
    """
    seen: set[Path] = set()
    result: list[InputPath] = []
    for raw in paths:
        for item in _expand_one(str(raw)):
            key = Path(item.path).resolve()
            if item.error is None and key in seen:
                continue
            seen.add(key)
            result.append(item)
    return result
