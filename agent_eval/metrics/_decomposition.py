"""Pinned decomposition: the statements (claims) of an answer, kept so re-runs judge the same ones.

Claim-level metrics first split an answer into atoms (a judge call), then judge each atom. If
the split is redone on every run, a re-run or a stability repeat judges *different* atoms, and
the spread of the score mixes decomposition noise with verdict noise (Ragas re-decomposes on
every run). Here the atoms of an answer are stored under a key of everything that decides them:

- the metric's name and version (its decomposition prompt),
- the judge model,
- the question, the answer and the context texts (in order),

(:func:`decomposition_key`, sha256 over a canonical JSON of those) in a SQLite file
(:class:`DecompositionCache`, WAL, default ``OUT/decompositions.db``). The first run stores
them; later runs and repeats reuse them. ``refresh=True`` (``--redecompose``) asks again and
overwrites. The statements are stored in order, as JSON text.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import orjson

from agent_eval.errors import OutputError, StoreError

__all__ = ["DECOMPOSITIONS_FILENAME", "DecompositionCache", "decomposition_key"]

DECOMPOSITIONS_FILENAME = "decompositions.db"
"""Default file name of the decomposition cache in a run's output directory."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS decompositions (
    key TEXT PRIMARY KEY,
    metric TEXT NOT NULL,
    judge_model TEXT NOT NULL,
    atoms TEXT NOT NULL,
    created_at TEXT NOT NULL
) WITHOUT ROWID
"""


def decomposition_key(
    *, metric: str, judge_model: str, question: str, answer: str, contexts: Sequence[str]
) -> str:
    """sha256 hex (64 characters) of what decides an answer's decomposition.

    Args:
        metric: ``name@version`` of the metric (its decomposition prompt).
        judge_model: The judge model that decomposes.
        question: The unit's question text.
        answer: The unit's answer text.
        contexts: The unit's context texts, in order.

    """
    payload = {
        "metric": metric,
        "judge_model": judge_model,
        "question": question,
        "answer": answer,
        "contexts": list(contexts),
    }
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


class DecompositionCache:
    """Decompositions by key, in one SQLite file (or in memory), safe across processes.

    Args:
        path: The database file (its directory is created), or ``None`` for an in-memory
            store that lives as long as this object (the Python API's default: repeats in one
            process share their atoms).
        refresh: Ignore stored decompositions and overwrite them (``--redecompose``).

    Raises:
        StoreError: the file cannot be opened as a SQLite database.
        OutputError: it cannot be written (disk full, read-only folder).

    """

    def __init__(self, path: str | Path | None = None, *, refresh: bool = False) -> None:
        self.path = None if path is None else Path(path)
        self.refresh = refresh
        self.hits = 0
        self.stored = 0
        try:
            if self.path is not None:
                self.path.parent.mkdir(parents=True, exist_ok=True)
            target = ":memory:" if self.path is None else str(self.path)
            self._db = sqlite3.connect(target, isolation_level=None, check_same_thread=False)
            if self.path is not None:
                self._db.execute("PRAGMA journal_mode=WAL")
                self._db.execute("PRAGMA busy_timeout=10000")
            self._db.execute(_SCHEMA)
        except (OSError, sqlite3.Error) as exc:
            if _cannot_write(exc):  # a full disk, a read-only folder: an output error, exit 5
                raise OutputError(
                    f"cannot write the decomposition cache {path}: {exc}; free some space or "
                    "give another --out"
                ) from exc
            raise StoreError(
                f"cannot open the decomposition cache {path}: {exc}; delete the file or give "
                "another --out"
            ) from exc

    def get(self, key: str) -> list[str] | None:
        """The stored atoms for ``key``, in order; ``None`` when absent or refreshing."""
        if self.refresh:
            return None
        row = self._db.execute("SELECT atoms FROM decompositions WHERE key = ?", (key,)).fetchone()
        if row is None:
            return None
        self.hits += 1
        atoms: list[str] = orjson.loads(row[0])
        return atoms

    def put(self, key: str, atoms: Sequence[str], *, metric: str, judge_model: str) -> None:
        """Store (or overwrite) the atoms of ``key``."""
        created = datetime.now(UTC).isoformat(timespec="seconds")
        self._db.execute(
            "INSERT OR REPLACE INTO decompositions VALUES (?, ?, ?, ?, ?)",
            (key, metric, judge_model, orjson.dumps(list(atoms)).decode(), created),
        )
        self.stored += 1

    def __len__(self) -> int:
        """How many decompositions are stored."""
        count: int = self._db.execute("SELECT COUNT(*) FROM decompositions").fetchone()[0]
        return count

    def close(self) -> None:
        """Close the database (idempotent)."""
        self._db.close()

    def __enter__(self) -> DecompositionCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()


_WRITE_FAILURES = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN")
"""SQLite result codes (sqlite.org/rescode.html) of a file that cannot be written, not a bad
file: an I/O error (a full disk reports one), the disk full, read-only, cannot be created."""


def _cannot_write(exc: OSError | sqlite3.Error) -> bool:
    """Whether ``exc`` says the cache cannot be written, rather than that the file is bad."""
    if isinstance(exc, OSError):
        return True
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_WRITE_FAILURES)
