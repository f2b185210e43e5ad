"""Input discovery: the files behind the paths, directories and globs a user names.

Directories are walked recursively in sorted order, skipping what is obviously not a trace
(hidden entries, ``__pycache__``, notes, code, images, databases). A file named explicitly is
always read, whatever its name. A path that names nothing is reported, not raised, so one typo
does not hide the other inputs.
"""

from __future__ import annotations

import glob
from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path

__all__ = ["InputPath", "expand_paths", "is_obvious_non_input"]

NON_INPUT_SUFFIXES = frozenset(
    {
        ".md", ".rst", ".txt", ".py", ".pyc", ".pyi", ".toml", ".cfg", ".ini", ".lock",
        ".sh", ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".html", ".css", ".js",
        ".ts", ".db", ".sqlite", ".sqlite3", ".db-wal", ".db-shm", ".gz", ".zip", ".tar",
    }
)  # fmt: skip
"""Suffixes (lowercase) of files a directory walk does not offer to the containers."""
NON_INPUT_STEMS = ("readme", "license", "licence", "notice", "provenance", "changelog", "note")
"""Name prefixes (lowercase) of documentation files without a telling suffix."""
SKIPPED_DIRS = frozenset({"__pycache__", "node_modules"})


@dataclass(frozen=True, slots=True)
class InputPath:
    """One input file as the user will see it named, or a path that named nothing.

    Attributes:
        path: The file path (relative when the user gave a relative directory or glob).
        error: Why nothing could be read under the given path, else ``None``.

    """

    path: str
    error: str | None = None


def is_obvious_non_input(path: Path) -> bool:
    """Whether a file found by a directory walk or glob is clearly not a trace file."""
    name = path.name.lower()
    return (
        name.startswith(".")
        or path.suffix.lower() in NON_INPUT_SUFFIXES
        or name.startswith(NON_INPUT_STEMS)
    )


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


def _expand_one(raw: str) -> Iterator[InputPath]:
    path = Path(raw)
    if path.is_file():
        yield InputPath(raw)
    elif path.is_dir():
        found = [InputPath(str(p)) for p in _walk(path)]
        yield from found or [InputPath(raw, "the directory holds no input files")]
    elif _is_magic(raw):
        root = _glob_root(raw)
        matches = sorted(glob.glob(raw, recursive=True))
        files = [p for m in matches for p in _matched(Path(m), root)]
        yield from [InputPath(str(p)) for p in files] or [
            InputPath(raw, "no input file matches this pattern")
        ]
    else:
        yield InputPath(raw, "no such file or directory")


def expand_paths(paths: Iterable[str | Path]) -> list[InputPath]:
    """Expand files, directories (recursive, sorted) and globs into input files, in order.

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
