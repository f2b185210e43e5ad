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

On a cluster (:mod:`agent_eval.run.cluster`) the run directory's file stays with the driver, its
only writer: a pickled cache arrives empty, in memory and journaling (:meth:`DecompositionCache.
__reduce__`), the driver sends the pinned decompositions of each batch's units with the batch,
and each worker hands back what it decomposed (:meth:`DecompositionCache.drain`) for the driver
to store.
"""

from __future__ import annotations

import hashlib
import sqlite3
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from types import TracebackType

import orjson

from agent_eval.errors import OutputError, StoreError

__all__ = ["DECOMPOSITIONS_FILENAME", "Decomposition", "DecompositionCache", "decomposition_key"]

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


@dataclass(frozen=True)
class Decomposition:
    """One stored decomposition, as it travels between a cluster's driver and its workers.

    Attributes:
        key: Its :func:`decomposition_key` (sha256 hex).
        atoms: The statements (claims), in order.
        metric: ``name@version`` of the metric that decomposed.
        judge_model: The judge model that decomposed.

    """

    key: str
    atoms: tuple[str, ...]
    metric: str
    judge_model: str


class DecompositionCache:
    """Decompositions by key, in one SQLite file (or in memory), safe across processes.

    Args:
        path: The database file (its directory is created), or ``None`` for an in-memory
            store that lives as long as this object (the Python API's default: repeats in one
            process share their atoms).
        refresh: Ignore stored decompositions and overwrite them (``--redecompose``).
        journal: Also keep each :meth:`put` in a journal that :meth:`drain` empties (a
            cluster worker's store: what it decomposed goes back to the driver).

    Raises:
        StoreError: the file cannot be opened as a SQLite database.
        OutputError: it cannot be written (disk full, read-only folder).

    """

    def __init__(
        self, path: str | Path | None = None, *, refresh: bool = False, journal: bool = False
    ) -> None:
        self.path = None if path is None else Path(path)
        self.refresh = refresh
        self._journal: list[Decomposition] | None = [] if journal else None
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

    def put(
        self,
        key: str,
        atoms: Sequence[str],
        *,
        metric: str,
        judge_model: str,
        journal: bool = True,
    ) -> None:
        """Store (or overwrite) the atoms of ``key``.

        ``journal=False``: not kept in the journal (a pinned decomposition the driver sent).
        """
        created = datetime.now(UTC).isoformat(timespec="seconds")
        self._db.execute(
            "INSERT OR REPLACE INTO decompositions VALUES (?, ?, ?, ?, ?)",
            (key, metric, judge_model, orjson.dumps(list(atoms)).decode(), created),
        )
        self.stored += 1
        if journal and self._journal is not None:
            self._journal.append(Decomposition(key, tuple(atoms), metric, judge_model))

    def drain(self) -> list[Decomposition]:
        """The decompositions :meth:`put` since the last drain, in order (``[]``: no journal)."""
        if self._journal is None:
            return []
        drained, self._journal = self._journal, []
        return drained

    def __reduce__(self) -> tuple[object, tuple[bool]]:
        """Pickled, a cache arrives empty, in memory and journaling, with its ``refresh``.

        The file (and what it holds) stays with the process that owns it, the run
        directory's only writer; a cluster's driver sends each batch's pinned decompositions
        and stores what the workers' journals hand back (:mod:`agent_eval.run.cluster`).
        """
        return _worker_copy, (self.refresh,)

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


def _worker_copy(refresh: bool) -> DecompositionCache:
    """The in-memory, journaling cache a pickled one becomes (see ``__reduce__``)."""
    return DecompositionCache(refresh=refresh, journal=True)


_WRITE_FAILURES = ("SQLITE_IOERR", "SQLITE_FULL", "SQLITE_READONLY", "SQLITE_CANTOPEN")
"""SQLite result codes (sqlite.org/rescode.html) of a file that cannot be written, not a bad
file: an I/O error (a full disk reports one), the disk full, read-only, cannot be created."""


def _cannot_write(exc: OSError | sqlite3.Error) -> bool:
    """Whether ``exc`` says the cache cannot be written, rather than that the file is bad."""
    if isinstance(exc, OSError):
        return True
    name = getattr(exc, "sqlite_errorname", "") or ""
    return name.startswith(_WRITE_FAILURES)
