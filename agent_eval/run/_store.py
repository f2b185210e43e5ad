"""The results store: ``DIR/results.db`` (SQLite, WAL) and ``DIR/results.jsonl``, in step.

Results are written in batches: :meth:`ResultStore.add` queues a
:class:`~agent_eval._result.MetricResult`, and a batch is committed to SQLite in one transaction
(the source of truth) and then appended to the JSON Lines file (one object per line with
exactly the result's fields, flushed) once it holds ``flush_rows`` rows (default
:data:`FLUSH_ROWS`) or its oldest row has waited ``flush_seconds`` (default
:data:`FLUSH_SECONDS`; checked on every ``add`` and by the engine's timer while judge calls are
in flight), and always on :meth:`~ResultStore.flush`, at the end of every engine run (also when
it is interrupted) and on :meth:`~ResultStore.close`. One commit per batch instead of per row
is what makes the store cheap (one INSERT + commit + ``write`` per row was ~45 us of a judge
call's client CPU). The crash-safety contract: a process killed outright (``kill -9``, power
loss) loses at most the rows not yet flushed, i.e. fewer than ``flush_rows`` rows finished in
the last ``flush_seconds``; they are in neither file, so ``--resume`` judges exactly those
again. ``flush_rows=1`` commits every row as it is added (the behaviour before batching).

A result is identified by :data:`RESULT_KEY`; writing a key again (``--retry-errors``, or
``--resume`` of units skipped on the budget) replaces the SQLite row, keeping the replaced row
in :data:`SUPERSEDED_TABLE` (a delete trigger), and appends a new JSONL line: the JSONL is an
append-only log, and every reader of it keeps the last line per key, so both files always hold
the same results, and the replaced rows (whose judge calls were paid for) are the table's rows
or the JSONL's earlier lines (:func:`load_superseded`). A run killed between the two writes of a
batch is repaired when the store is reopened: rows missing from the JSONL are appended.

Opening reads no more than the JSONL's tail: results are committed in order, so rows missing
from the JSONL are the ones SQLite wrote after the row the file's last line holds (SQLite's
``rowid`` grows with every insert or replace); they are found with one indexed lookup and a
range query and appended. Only when the last line matches no row (a file edited by hand) is the
whole file compared. A last line cut short (a run killed mid-write) is never dropped silently:
it is cut, a warning names ``file:line``, and its result comes back from ``results.db`` with
the other missing rows.

The ``runs`` table records each run: its id, start time, configuration identity (metric,
formatter, judge, parameters; never credentials) and the command line with secrets removed.

The database schema is versioned (``PRAGMA user_version`` = :data:`SCHEMA_VERSION`). Opening
an older store migrates it in one transaction, never refuses it: version 1 (no ``unit_id`` in
the key) is rebuilt with ``unit_id = 'conversation'`` for every row, and any result field a
later version added is added with ``ALTER TABLE ... ADD COLUMN`` (its default, NULL, is the
field's default). Readers of a store they may not write select the columns it has. The
:data:`SUPERSEDED_TABLE` and its trigger are added (empty) to a store that lacks them without a
new version, as an older agent-eval's writes stay valid: rows it replaced are not in the table,
though its ``results.jsonl`` still holds them as earlier lines.
"""

from __future__ import annotations

import logging
import operator
import os
import sqlite3
import time
from collections.abc import Callable, Iterable, Iterator, Sequence
from contextlib import closing
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
from pydantic import ValidationError

from agent_eval._redaction import redact_text
from agent_eval._result import MetricResult
from agent_eval.errors import InputError, OutputError, StoreError
from agent_eval.run._sqlite_open import BUSY_TIMEOUT_MS, bound_page_cache, open_retrying

try:
    import fcntl
except ImportError:  # pragma: no cover - Windows: no lock
    fcntl = None  # type: ignore[assignment]

__all__ = [
    "DB_NAME",
    "FLUSH_ROWS",
    "FLUSH_SECONDS",
    "JSONL_NAME",
    "LOCK_NAME",
    "RESULT_KEY",
    "SCHEMA_VERSION",
    "SUPERSEDED_TABLE",
    "HumanLabel",
    "OutputLock",
    "ResultKey",
    "ResultStore",
    "RunRecord",
    "iter_results",
    "load_results",
    "load_superseded",
    "result_key",
]

DB_NAME = "results.db"
JSONL_NAME = "results.jsonl"
LOCK_NAME = ".agent-eval.lock"
"""The lock file a writing run holds in its output directory (:class:`OutputLock`)."""
FLUSH_ROWS = 128
"""Rows queued before :class:`ResultStore` commits them as one batch."""
FLUSH_SECONDS = 0.2
"""Seconds the oldest queued row may wait before its batch is committed."""
SCHEMA_VERSION = 3
"""Version of the ``results.db`` schema (1: no unit_id; 2: units, atoms, details; 3: revision
in the key, for re-scored conversations)."""

RESULT_KEY = (
    "run_id",
    "conversation_id",
    "unit_id",
    "metric",
    "formatter",
    "judge_model",
    "repeat",
    "revision",
)
"""The fields that identify a result row (the SQLite primary key)."""

ResultKey = tuple[str, str, str, str, str, str, int, int]

_log = logging.getLogger(__name__)
_TAIL_CHUNK = 1 << 16

_FIELDS = tuple(MetricResult.model_fields)
_COLUMNS = ", ".join(_FIELDS)
_SQL_TYPES = {"bool": "INTEGER", "int": "INTEGER", "float": "REAL"}
_JSON_FIELDS = ("trace_ids", "atoms", "details", "steering")
_NOT_NULL_DEFAULTS = {"unit_id": "'conversation'", "revision": "0"}
_in_column_order = operator.itemgetter(*_FIELDS)
SUPERSEDED_TABLE = "superseded_results"
"""The table keeping every result row a later row of the same key replaced (``--resume`` of
budget-skipped units, ``--retry-errors``): what those rows' judge calls spent is part of the
run's spend."""
_SUPERSEDED_TRIGGER = "keep_superseded_results"
_INSERT = f"INSERT OR REPLACE INTO results ({_COLUMNS}) VALUES ({', '.join('?' for _ in _FIELDS)})"


def result_key(result: MetricResult) -> ResultKey:
    """The :data:`RESULT_KEY` values of ``result``."""
    return (
        result.run_id,
        result.conversation_id,
        result.unit_id,
        result.metric,
        result.formatter,
        result.judge_model,
        result.repeat,
        result.revision,
    )


@dataclass(frozen=True, kw_only=True)
class RunRecord:
    """One row of the ``runs`` table.

    Attributes:
        run_id: The run's id.
        started_at: ISO-8601 UTC start time.
        config: The run's configuration identity (JSON-able; no credentials).
        argv: The command line, secrets removed (empty for Python API runs).
        record: The reproducibility record (:mod:`agent_eval.run._record`): versions, platform,
            request parameters, input digests, the config file with secrets removed.

    """

    run_id: str
    started_at: str
    config: dict[str, Any]
    argv: tuple[str, ...] = ()
    record: dict[str, Any] = field(default_factory=dict)


def _column_type(name: str) -> str:
    if name in _JSON_FIELDS:
        return "TEXT"
    annotation = str(MetricResult.model_fields[name].annotation)
    return next((sql for py, sql in _SQL_TYPES.items() if py in annotation), "TEXT")


def _column(name: str) -> str:
    default = _NOT_NULL_DEFAULTS.get(name)
    suffix = f" NOT NULL DEFAULT {default}" if default else ""
    return f"{name} {_column_type(name)}{suffix}"


def _results_table(name: str = "results") -> str:
    columns = ", ".join(_column(field) for field in _FIELDS)
    return f"CREATE TABLE IF NOT EXISTS {name} ({columns}, PRIMARY KEY ({', '.join(RESULT_KEY)}))"


def _superseded_table() -> str:
    columns = ", ".join(_column(field) for field in _FIELDS)
    return f"CREATE TABLE IF NOT EXISTS {SUPERSEDED_TABLE} ({columns}, superseded_at TEXT)"


def _superseded_trigger() -> str:
    """Copy a result row into :data:`SUPERSEDED_TABLE` as it is replaced (or deleted).

    ``INSERT OR REPLACE`` deletes the row it replaces; its delete trigger fires only with
    ``PRAGMA recursive_triggers`` on, which the writing connection sets.
    """
    old = ", ".join(f"OLD.{name}" for name in _FIELDS)
    return (
        f"CREATE TRIGGER IF NOT EXISTS {_SUPERSEDED_TRIGGER} BEFORE DELETE ON results BEGIN "
        f"INSERT INTO {SUPERSEDED_TABLE} ({_COLUMNS}, superseded_at) "
        f"VALUES ({old}, strftime('%Y-%m-%dT%H:%M:%SZ', 'now')); END"
    )


def _schema() -> str:
    return (
        f"{_results_table()};{_superseded_table()};{_superseded_trigger()};"
        "CREATE TABLE IF NOT EXISTS runs (run_id TEXT PRIMARY KEY, started_at TEXT NOT NULL,"
        " config TEXT NOT NULL, argv TEXT NOT NULL, record TEXT);"
        "CREATE TABLE IF NOT EXISTS human_labels (run_id TEXT NOT NULL, conversation_id TEXT"
        " NOT NULL, unit_id TEXT NOT NULL, metric TEXT NOT NULL, label INTEGER NOT NULL,"
        " labeler TEXT NOT NULL, labeled_at TEXT NOT NULL, notes TEXT, source TEXT NOT NULL,"
        " imported_at TEXT NOT NULL,"
        " PRIMARY KEY (run_id, conversation_id, unit_id, metric, labeler, labeled_at));"
        f"PRAGMA user_version = {SCHEMA_VERSION};"
    )


def _table_columns(db: sqlite3.Connection, table: str = "results") -> list[str]:
    return [row[1] for row in db.execute(f"PRAGMA table_info({table})")]


def _migrate(db: sqlite3.Connection, path: Path) -> None:
    """Bring an existing store to :data:`SCHEMA_VERSION` in one transaction (see module doc).

    Raises:
        StoreError: the store was written by a newer agent-eval.

    """
    version = db.execute("PRAGMA user_version").fetchone()[0]
    if version > SCHEMA_VERSION:
        raise StoreError(
            f"{path}: results store schema {version} is newer than this agent-eval "
            f"understands ({SCHEMA_VERSION}); upgrade otel-agent-eval"
        )
    existing = _table_columns(db)
    if not existing:
        db.executescript(_schema())
        return
    if _table_columns(db, "runs") and "record" not in _table_columns(db, "runs"):
        db.execute("ALTER TABLE runs ADD COLUMN record TEXT")
    if version == SCHEMA_VERSION and set(existing) >= set(_FIELDS):
        return
    db.execute("BEGIN IMMEDIATE")
    try:
        if "unit_id" not in existing or "revision" not in existing:  # the primary key changes
            _rebuild_with_units(db, existing)
        else:
            for name in _FIELDS:
                if name not in existing:
                    db.execute(f"ALTER TABLE results ADD COLUMN {_column(name)}")
        kept = _table_columns(db, SUPERSEDED_TABLE)
        for name in _FIELDS if kept else ():
            if name not in kept:
                db.execute(f"ALTER TABLE {SUPERSEDED_TABLE} ADD COLUMN {_column(name)}")
        db.execute(f"DROP TRIGGER IF EXISTS {_SUPERSEDED_TRIGGER}")  # remade with every field
        db.execute(f"PRAGMA user_version = {SCHEMA_VERSION}")
        db.execute("COMMIT")
    except BaseException:
        db.execute("ROLLBACK")
        raise


def _rebuild_with_units(db: sqlite3.Connection, existing: list[str]) -> None:
    kept = ", ".join(name for name in existing if name in _FIELDS)
    db.execute(_results_table("results_migrated"))
    db.execute(f"INSERT INTO results_migrated ({kept}) SELECT {kept} FROM results")
    db.execute("DROP TABLE results")
    db.execute("ALTER TABLE results_migrated RENAME TO results")


def _encoded(result: MetricResult) -> tuple[tuple[Any, ...], bytes]:
    """The SQLite row and the JSONL line of ``result``, from one ``model_dump``."""
    data = result.model_dump(mode="json")
    line = orjson.dumps(data) + b"\n"
    data["trace_ids"] = orjson.dumps(data["trace_ids"]).decode()
    data["atoms"] = None if result.atoms is None else orjson.dumps(data["atoms"]).decode()
    data["details"] = orjson.dumps(data["details"]).decode() if result.details else None
    data["steering"] = orjson.dumps(data["steering"]).decode() if result.steering else None
    return _in_column_order(data), line


def _from_row(row: Sequence[Any], columns: Sequence[str] = _FIELDS) -> MetricResult:
    data = {k: v for k, v in zip(columns, row, strict=True) if v is not None}
    data["trace_ids"] = tuple(orjson.loads(data.get("trace_ids") or "[]"))
    if "atoms" in data:
        data["atoms"] = orjson.loads(data["atoms"])
    data["details"] = orjson.loads(data.get("details") or "{}")
    if "steering" in data:
        data["steering"] = orjson.loads(data["steering"])
    return MetricResult.model_validate(data)


def _jsonl_line(result: MetricResult) -> bytes:
    return orjson.dumps(result.model_dump(mode="json")) + b"\n"


@dataclass(frozen=True)
class HumanLabel:
    """A person's label of one unit, kept apart from the judge's verdict.

    Attributes:
        run_id / conversation_id / unit_id / metric: The unit and the run it was reviewed in.
        label: 0 or 1.
        labeler / labeled_at: Who and when, as the review file says (``""`` when it does not).
        notes: The reviewer's notes.
        source: The file the label was read from, and its sha256 (``path#sha256``).
        imported_at: ISO-8601 UTC time it was stored.

    """

    run_id: str
    conversation_id: str
    unit_id: str
    metric: str
    label: int
    labeler: str
    labeled_at: str
    notes: str | None
    source: str
    imported_at: str


class ResultStore:
    """The results of the runs written to one directory.

    Args:
        directory: The output directory; created when missing.
        exclusive: Hold the directory's lock (:class:`OutputLock`) until :meth:`close`: for a
            run that writes results, so that a second run on the same directory fails clearly
            instead of judging everything again. Readers leave it ``False``.
        flush_rows: Commit the queued rows once this many are queued (>= 1; 1 commits every
            row as it is added).
        flush_seconds: Commit the queued rows once the oldest has waited this long (seconds,
            > 0), checked on every :meth:`add` and by :meth:`flush_due`.

    Attributes:
        repaired: Rows appended to ``results.jsonl`` on opening (missing after a kill).

    Raises:
        OutputError: the directory or database cannot be created or opened, or (with
            ``exclusive``) another run holds the directory's lock.
        ValueError: ``flush_rows`` below 1 or ``flush_seconds`` not positive.

    Use as a context manager, or call :meth:`close` (both commit the queued rows). The
    readers of this object (:meth:`results`, :meth:`finished_keys`) commit the queued rows
    first, so they see everything added; other connections see a row once its batch is
    committed.
    """

    def __init__(
        self,
        directory: str | Path,
        *,
        exclusive: bool = False,
        flush_rows: int = FLUSH_ROWS,
        flush_seconds: float = FLUSH_SECONDS,
    ) -> None:
        if flush_rows < 1 or not flush_seconds > 0:
            raise ValueError(
                f"flush_rows must be >= 1 and flush_seconds > 0, got {flush_rows}, {flush_seconds}"
            )
        self.directory = Path(directory)
        self.flush_rows, self.flush_seconds = flush_rows, flush_seconds
        self._rows: list[tuple[Any, ...]] = []
        self._lines: list[bytes] = []
        self._oldest = 0.0
        self._lock: OutputLock | None = None
        try:
            self.directory.mkdir(parents=True, exist_ok=True)
            if exclusive:
                self._lock = OutputLock(self.directory)
            self._db = open_retrying(self._open_db)
            self._repair_jsonl()
            self._jsonl = (self.directory / JSONL_NAME).open("ab")
        except (OSError, sqlite3.Error) as exc:
            if hasattr(self, "_db"):  # opened, then a later step failed: leave no connection
                self._db.close()
            if self._lock is not None:
                self._lock.release()
            raise OutputError(f"cannot open the results store in {self.directory}: {exc}") from exc

    def _open_db(self) -> sqlite3.Connection:
        """Connect (busy timeout first), switch to WAL, migrate and create the schema.

        Idempotent, so :func:`~agent_eval.run._sqlite_open.open_retrying` repeats it when
        another process opening the same file made a step busy.
        """
        db = sqlite3.connect(
            self.directory / DB_NAME, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000
        )
        try:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute("PRAGMA recursive_triggers=ON")  # a replaced row fires its delete trigger
            _migrate(db, self.db_path)
            db.executescript(_schema())
        except BaseException:
            db.close()
            raise
        return db

    @property
    def db_path(self) -> Path:
        """``DIR/results.db``."""
        return self.directory / DB_NAME

    @property
    def jsonl_path(self) -> Path:
        """``DIR/results.jsonl``."""
        return self.directory / JSONL_NAME

    def start_run(self, run: RunRecord) -> None:
        """Record ``run`` in the ``runs`` table.

        A run id recorded already (``--resume``, ``--retry-errors``) keeps its first record; a
        continuation that carries a command line is appended to that record's ``resumes``
        list (start time, command line, and its own record's ``request``), so the budget and
        settings each part ran under stay known.

        Raises:
            OutputError: the database cannot be written (disk full, permissions).

        """
        argv = [redact_text(arg) for arg in run.argv]
        try:
            cursor = self._db.execute(
                "INSERT OR IGNORE INTO runs (run_id, started_at, config, argv, record)"
                " VALUES (?, ?, ?, ?, ?)",
                (
                    run.run_id,
                    run.started_at,
                    orjson.dumps(run.config, option=orjson.OPT_SORT_KEYS).decode(),
                    orjson.dumps(argv).decode(),
                    orjson.dumps(run.record, option=orjson.OPT_SORT_KEYS).decode(),
                ),
            )
            if cursor.rowcount == 0 and argv:
                self._add_resume(run, argv)
        except (OSError, sqlite3.Error) as exc:  # a full disk before the first row: exit 5
            raise OutputError(f"cannot record the run in {self.directory}: {exc}") from exc

    def _add_resume(self, run: RunRecord, argv: list[str]) -> None:
        row = self._db.execute("SELECT record FROM runs WHERE run_id = ?", (run.run_id,))
        record = orjson.loads(row.fetchone()[0] or "{}")
        entry = {"started_at": run.started_at, "argv": argv, "request": run.record.get("request")}
        record["resumes"] = [*record.get("resumes", []), entry]
        self._db.execute(
            "UPDATE runs SET record = ? WHERE run_id = ?",
            (orjson.dumps(record, option=orjson.OPT_SORT_KEYS).decode(), run.run_id),
        )

    def runs(self) -> list[RunRecord]:
        """Every recorded run, oldest first."""
        rows = self._db.execute(
            "SELECT run_id, started_at, config, argv, record FROM runs ORDER BY started_at, run_id"
        ).fetchall()
        return [
            RunRecord(
                run_id=r[0],
                started_at=r[1],
                config=orjson.loads(r[2]),
                argv=tuple(orjson.loads(r[3])),
                record=orjson.loads(r[4] or "{}"),
            )
            for r in rows
        ]

    def add_human_labels(self, labels: Iterable[HumanLabel]) -> int:
        """Store human labels apart from the verdicts (never touching a result row).

        A label given again by the same labeler at the same time replaces the earlier copy.
        Returns how many were written.

        Raises:
            StoreError: the database cannot be written.

        """
        rows = [
            (h.run_id, h.conversation_id, h.unit_id, h.metric, h.label, h.labeler,
             h.labeled_at, h.notes, h.source, h.imported_at)
            for h in labels
        ]  # fmt: skip
        try:
            self._db.executemany(
                "INSERT OR REPLACE INTO human_labels VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)", rows
            )
        except sqlite3.Error as exc:
            raise StoreError(f"cannot write human labels to {self.directory}: {exc}") from exc
        return len(rows)

    def human_labels(self, run_id: str | None = None) -> list[HumanLabel]:
        """The stored human labels (of one run, or all), in key order."""
        query = "SELECT * FROM human_labels" + (" WHERE run_id = ?" if run_id else "")
        rows = self._db.execute(
            query + " ORDER BY run_id, conversation_id, unit_id, metric, labeler, labeled_at",
            (run_id,) if run_id else (),
        )
        return [HumanLabel(*row) for row in rows]

    @property
    def pending(self) -> int:
        """Rows added and not yet committed."""
        return len(self._rows)

    def add(self, result: MetricResult) -> None:
        """Queue ``result``; commit the batch when it is full or its oldest row is due.

        Raises:
            OutputError: the batch was due and the database or file cannot be written.

        """
        row, line = _encoded(result)
        if not self._rows:
            self._oldest = time.monotonic()
        self._rows.append(row)
        self._lines.append(line)
        if len(self._rows) >= self.flush_rows:
            self.flush()
        else:
            self.flush_due()

    def flush_due(self) -> None:
        """Commit the queued rows if the oldest has waited ``flush_seconds`` (see :meth:`flush`)."""
        if self._rows and time.monotonic() - self._oldest >= self.flush_seconds:
            self.flush()

    def flush(self) -> None:
        """Commit the queued rows to SQLite in one transaction, then append them to the JSONL.

        Raises:
            OutputError: the database or file cannot be written (the rows stay queued when the
                transaction failed; a JSONL that missed them is repaired on reopening).

        """
        if not self._rows:
            return
        rows, lines = self._rows, self._lines
        try:
            self._db.execute("BEGIN")
            try:
                self._db.executemany(_INSERT, rows)
                self._db.execute("COMMIT")
            except BaseException:
                if self._db.in_transaction:  # SQLite may have rolled back already (disk full)
                    self._db.execute("ROLLBACK")
                raise
            self._rows, self._lines = [], []
            self._jsonl.writelines(lines)
            self._jsonl.flush()
        except (OSError, sqlite3.Error) as exc:
            raise OutputError(f"cannot write results to {self.directory}: {exc}") from exc

    def finished_keys(
        self, run_id: str, statuses: Iterable[str] = ("ok", "skipped", "error")
    ) -> set[ResultKey]:
        """Keys of ``run_id``'s results whose status is in ``statuses`` (for resuming)."""
        self.flush()
        wanted = tuple(statuses)
        marks = ", ".join("?" for _ in wanted)
        rows = self._db.execute(
            f"SELECT {', '.join(RESULT_KEY)} FROM results WHERE run_id = ? AND status IN ({marks})",
            (run_id, *wanted),
        )
        return {tuple(row) for row in rows}

    def results(self, run_id: str | None = None) -> list[MetricResult]:
        """The stored results (of one run, or all), in key order."""
        self.flush()
        query = f"SELECT {_COLUMNS} FROM results" + (" WHERE run_id = ?" if run_id else "")
        rows = self._db.execute(
            query + f" ORDER BY {', '.join(RESULT_KEY)}", (run_id,) if run_id else ()
        )
        return [_from_row(row) for row in rows]

    def superseded(self, run_id: str | None = None) -> list[MetricResult]:
        """The rows a later row of the same key replaced (see :func:`load_superseded`)."""
        self.flush()
        query = f"SELECT {_COLUMNS} FROM {SUPERSEDED_TABLE}" + (
            " WHERE run_id = ?" if run_id else ""
        )
        rows = self._db.execute(query + " ORDER BY rowid", (run_id,) if run_id else ())
        return [_from_row(row) for row in rows]

    def _repair_jsonl(self) -> None:
        """Append the rows the JSONL lacks, reading only its tail (see the module docstring)."""
        path = self.directory / JSONL_NAME
        cut = _cut_partial_line(path)
        last = _last_line(path)
        after = 0 if last is None else self._rowid_of(last)
        if after is None:  # the last line is no row of ours: compare the whole file
            in_file = {result_key(r): r for r in _read_jsonl(path)}
            missing = [r for r in self.results() if in_file.get(result_key(r)) != r]
        else:
            rows = self._db.execute(
                f"SELECT {_COLUMNS} FROM results WHERE rowid > ? ORDER BY rowid", (after,)
            )
            missing = [_from_row(row) for row in rows]
        if missing:
            with path.open("ab") as handle:
                handle.writelines(_jsonl_line(r) for r in missing)
        if cut is not None:
            restored = (
                f"restored {len(missing)} result(s) from {DB_NAME}"
                if missing
                else f"{DB_NAME} holds no result written after the line before it"
            )
            _log.warning(
                "%s:%d: the last line was cut short (a run stopped while writing it); "
                "removed it, %s",
                path,
                cut,
                restored,
            )
        self.repaired = len(missing)

    def _rowid_of(self, line: bytes) -> int | None:
        """The rowid of the stored row ``line`` holds (same key, same fields), else ``None``."""
        try:
            result = MetricResult.model_validate_json(line)
        except ValidationError:
            return None
        where = " AND ".join(f"{name} = ?" for name in RESULT_KEY)
        row = self._db.execute(
            f"SELECT rowid, {_COLUMNS} FROM results WHERE {where}", result_key(result)
        ).fetchone()
        if row is None or _from_row(row[1:]) != result:
            return None
        return int(row[0])

    def bound_page_cache(self, kib: int) -> None:
        """Keep at most ``kib`` KiB of the database's pages in memory (a long-running ``serve``)."""
        bound_page_cache(self._db, kib)

    def close(self) -> None:
        """Commit the queued rows, then close the database and the JSONL file (idempotent).

        Raises:
            OutputError: the queued rows cannot be written (the files are closed all the same).

        """
        try:
            if not self._jsonl.closed:
                self.flush()
        finally:
            if not self._jsonl.closed:
                self._jsonl.close()
                self._db.close()
            if self._lock is not None:
                self._lock.release()
                self._lock = None

    def __enter__(self) -> ResultStore:
        return self

    def __exit__(self, exc_type: object, *exc_info: object) -> None:
        if exc_type is None:
            self.close()
            return
        try:  # an error is on its way out: it stays the one raised
            self.close()
        except OutputError as exc:
            _log.warning("%s; --resume scores the %d unsaved result(s) again", exc, self.pending)


class OutputLock:
    """An exclusive, non-blocking lock on an output directory (``DIR/.agent-eval.lock``).

    ``flock(2)`` on the lock file: the operating system releases it when the process ends, even
    on ``kill -9``, so a stale lock never blocks the next run. The holder's pid is written into
    the file for the message; the file is removed on release. On systems without ``fcntl``
    (Windows) no lock is taken.

    Raises:
        OutputError: another process holds the lock (names its pid and the directory).

    """

    def __init__(self, directory: Path) -> None:
        self.path = directory / LOCK_NAME
        self._handle = self.path.open("a+", encoding="utf-8")
        if fcntl is None:  # pragma: no cover - Windows
            return
        try:
            fcntl.flock(self._handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
        except OSError:
            self._handle.seek(0)
            holder = self._handle.read().strip() or "?"
            self._handle.close()
            raise OutputError(
                f"{directory} is in use by another agent-eval run (pid {holder}); wait for it "
                "to finish (then re-run with --resume to add to it) or choose another --out"
            ) from None
        self._handle.seek(0)
        self._handle.truncate()
        self._handle.write(str(os.getpid()))
        self._handle.flush()

    def release(self) -> None:
        """Release the lock (idempotent)."""
        if not self._handle.closed:
            self.path.unlink(missing_ok=True)  # a finished run leaves no lock file behind
            self._handle.close()  # closing the descriptor releases the flock


def _cut_partial_line(path: Path) -> int | None:
    """Cut a last line left without its newline by a killed run (SQLite still has the row).

    Returns:
        The 1-based number of the line cut, ``None`` when the file ends with a newline.

    """
    if not path.exists() or path.stat().st_size == 0:
        return None
    with path.open("rb+") as handle:
        handle.seek(-1, 2)
        if handle.read(1) == b"\n":
            return None
        handle.seek(0)  # rare: only after a kill, so reading it all is fine
        data = handle.read()
        handle.truncate(data.rfind(b"\n") + 1)
        return data.count(b"\n") + 1


def _last_line(path: Path) -> bytes | None:
    """The last non-blank line of ``path`` (which ends with a newline), read from its end."""
    if not path.exists():
        return None
    with path.open("rb") as handle:
        end = handle.seek(0, 2)
        tail = b""
        while end > 0:
            start = max(0, end - _TAIL_CHUNK)
            handle.seek(start)
            tail = handle.read(end - start) + tail
            end = start
            lines = tail.rstrip().rsplit(b"\n", 1)
            if len(lines) == 2 or (end == 0 and lines[0]):
                return lines[-1] if lines[-1].strip() else None
    return None


def _is_jsonl(path: Path) -> bool:
    """``results.jsonl`` or a gzip'd copy (``results.jsonl.gz``), by name."""
    from agent_eval.ingest._sources import input_suffix

    return input_suffix(path) == ".jsonl"


def _read_jsonl(path: Path) -> list[MetricResult]:
    return _read_jsonl_log(path)[0]


def _read_jsonl_log(path: Path) -> tuple[list[MetricResult], list[MetricResult]]:
    """The last line per key (in key order), and the lines a later line replaced (file order).

    A gzip'd file (``results.jsonl.gz``) is read decompressed.

    Raises:
        StoreError: a line is not a result row, or the gzip data is cut short or corrupt.

    """
    from agent_eval.ingest._sources import opened_input

    latest: dict[ResultKey, MetricResult] = {}
    replaced: list[MetricResult] = []
    try:
        with opened_input(path) as handle:
            for number, line in enumerate(handle, 1):
                if not line.strip():
                    continue
                try:
                    result = MetricResult.model_validate_json(line)
                except ValidationError as exc:
                    if not line.endswith(b"\n"):  # cut short by a killed run; SQLite holds it
                        _log.warning(
                            "%s:%d: the last line was cut short (a run stopped while writing "
                            "it) and is not read; read the run directory or its %s to get that "
                            "result",
                            path,
                            number,
                            DB_NAME,
                        )
                        break
                    raise StoreError(f"{path}:{number}: not a result row: {exc}") from exc
                earlier = latest.get(key := result_key(result))
                if earlier is not None:
                    replaced.append(earlier)
                latest[key] = result
    except InputError as exc:  # gzip damage: the file is unusable, as a bad line makes it
        raise StoreError(str(exc)) from None
    return sorted(latest.values(), key=result_key), replaced


def load_results(path: str | Path, run_id: str | None = None) -> list[MetricResult]:
    """Read results from a run directory, a ``results.db`` or a ``results.jsonl``.

    A directory is read from its ``results.db`` when present, else its ``results.jsonl``. From
    JSONL the last line per :data:`RESULT_KEY` wins. Results come back in key order. With
    ``run_id``, only that run's rows (from SQLite, an indexed query: the other runs' rows are
    not read).

    Raises:
        StoreError: the path holds no results store, or a JSONL line is not a result row.

    """
    target = _results_file(path)
    if _is_jsonl(target):
        rows_in_file = _read_jsonl(target)
        return [r for r in rows_in_file if run_id is None or r.run_id == run_id]
    return sorted(_select_rows(target, "results", run_id, _key_order), key=result_key)


def _key_order(columns: list[str]) -> str:
    """The ``ORDER BY`` of the results table: the :data:`RESULT_KEY` columns it has."""
    return ", ".join(name for name in RESULT_KEY if name in columns)


def _results_file(path: str | Path) -> Path:
    """The results file of ``path``: itself, or a run directory's results.db / results.jsonl.

    Raises:
        StoreError: nothing is there.

    """
    target = Path(path)
    if target.is_dir():
        target = target / DB_NAME if (target / DB_NAME).exists() else target / JSONL_NAME
    if not target.exists():
        raise StoreError(
            f"no results at {path}: expected a run directory, {DB_NAME} or {JSONL_NAME}"
        )
    return target


def load_superseded(path: str | Path, run_id: str | None = None) -> list[MetricResult]:
    """The result rows a later row of the same key replaced (``--resume``, ``--retry-errors``).

    Their judge calls were made and paid for, so a run's judge tokens and cost count them
    beside its current rows (``report``, ``runs show``). Read from ``results.db``'s
    :data:`SUPERSEDED_TABLE` (empty for a store written before it existed), or from a
    ``results.jsonl``: every line a later line of the same :data:`RESULT_KEY` replaced. Same
    arguments as :func:`load_results`; rows come back in the order they were replaced.

    Raises:
        StoreError: as :func:`load_results`.

    """
    target = _results_file(path)
    if _is_jsonl(target):
        replaced = _read_jsonl_log(target)[1]
        return [r for r in replaced if run_id is None or r.run_id == run_id]
    return _select_rows(target, SUPERSEDED_TABLE, run_id, lambda _: "rowid", missing_ok=True)


def iter_results(
    path: str | Path, run_id: str | None = None, *, superseded: bool = False
) -> Iterator[MetricResult]:
    """The rows :func:`load_results` returns, one at a time, for a reader that keeps none.

    With ``superseded``, those :func:`load_superseded` returns.

    From ``results.db`` the rows are read from the database as they are consumed (memory: one
    row, whatever the run's size), the current rows in :data:`RESULT_KEY` column order (SQLite
    ``ORDER BY``, which may differ from :func:`load_results`' order only for rows of a store
    with NULL key columns), the replaced ones in the order they were replaced. A
    ``results.jsonl`` is read whole first (its last line per key wins, so it must be).

    Raises:
        StoreError: as :func:`load_results` (while iterating).

    """
    target = _results_file(path)
    if target.suffix == ".jsonl":
        yield from (load_superseded if superseded else load_results)(target, run_id)
        return
    if superseded:
        yield from _iter_rows(target, SUPERSEDED_TABLE, run_id, lambda _: "rowid", missing_ok=True)
    else:
        yield from _iter_rows(target, "results", run_id, _key_order)


def _select_rows(
    target: Path,
    table: str,
    run_id: str | None,
    order: Callable[[list[str]], str],
    *,
    missing_ok: bool = False,
) -> list[MetricResult]:
    """The rows of ``table`` in database ``target`` (of ``run_id`` only, unless ``None``).

    Only the result fields the table has are read; ``order(columns)`` gives the ``ORDER BY``.
    A table that is not there gives no rows when ``missing_ok``.

    Raises:
        StoreError: ``target`` cannot be read as a results database (or ``table`` is missing
            and not ``missing_ok``).

    """
    return list(_iter_rows(target, table, run_id, order, missing_ok=missing_ok))


_READ_BATCH = 256
"""Rows fetched from SQLite at a time by :func:`_iter_rows`."""


def _iter_rows(
    target: Path,
    table: str,
    run_id: str | None,
    order: Callable[[list[str]], str],
    *,
    missing_ok: bool = False,
) -> Iterator[MetricResult]:
    """:func:`_select_rows` one row at a time (the connection stays open while iterating)."""
    try:
        with closing(_connect_to_read(target)) as db:
            present = _table_columns(db, table)
            if not present and missing_ok:
                return
            columns = [name for name in _FIELDS if name in present]
            where = "" if run_id is None else " WHERE run_id = ?"
            cursor = db.execute(
                f"SELECT {', '.join(columns)} FROM {table}{where} ORDER BY {order(columns)}",
                () if run_id is None else (run_id,),
            )
            while rows := cursor.fetchmany(_READ_BATCH):
                for row in rows:
                    yield _from_row(row, columns)
    except sqlite3.Error as exc:
        raise StoreError(f"{target}: not a results database: {exc}") from exc


def _connect_to_read(target: Path) -> sqlite3.Connection:
    """A connection that only reads ``target``: read-write when allowed, else read-only.

    A read-only connection to a WAL database cannot remove the ``-wal``/``-shm`` files when it
    closes, so they would stay beside a finished run; a read-write one (``mode=rw`` never
    creates the file) checkpoints and removes them as the last connection closes.
    """
    try:
        return sqlite3.connect(f"file:{target}?mode=rw", uri=True)
    except sqlite3.OperationalError:  # read-only file or medium
        return sqlite3.connect(f"file:{target}?mode=ro", uri=True)
