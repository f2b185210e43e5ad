"""The judge-call cache: one SQLite file (WAL) mapping a request's hash to the validated reply.

The key is the sha256 of a canonical JSON serialization (sorted keys, no whitespace, orjson) of
exactly what decides the judge's answer and is sent to the endpoint: the model, the sampling and
structured-output parameters, the messages and the response JSON schema. Headers, API keys and
the base URL are never part of the key: the same question to the same model name is answered
from the cache whichever endpoint asks it (a gateway moved, replicas behind two URLs). The
value is the validated output JSON, the token usage of the original call and whether the
endpoint reported it (``usage_known``), the raw reply, the model that answered and the endpoint
that was asked, bare (``scheme://host:port/path``: no userinfo, no query, so no credential is
ever stored; :func:`agent_eval._redaction.bare_endpoint`). A hit from an entry another endpoint
filled is counted (:attr:`CachedJudge.other_endpoint_hits`), and so is a hit from an entry
that names no endpoint (:attr:`CachedJudge.unknown_endpoint_hits`: written by a version before
the endpoint was kept), so a run says how many of its answers no request to its own endpoint
is known to have produced: two servers serving one model name (an fp16 and a q4 build) can
answer differently, and a dead endpoint answered from the cache is no judge that answered.

Only replies that validated are cached; a failed call is never cached, so a re-run retries it.
:class:`CachedJudge` wraps any :class:`~agent_eval.judges._base.Judge` and is itself one, so it
composes with rate limiting and the engine. A second identical run makes zero judge calls.

The same file keeps the model prices a run looked up (:class:`CachedPrices`, table
``model_prices``, per genai-prices release), so that a second run need not import the price
database either.
"""

from __future__ import annotations

import asyncio
import hashlib
import sqlite3
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
from types import TracebackType
from typing import Any, Literal, Protocol

import orjson
from pydantic import BaseModel

from agent_eval.errors import StoreError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.run._sqlite_open import BUSY_TIMEOUT_MS, bound_page_cache, open_retrying

__all__ = [
    "CACHE_FILENAME",
    "CacheBackend",
    "CacheEntry",
    "CacheMode",
    "CacheStats",
    "CachedJudge",
    "CachedPrices",
    "HitCounts",
    "JudgeCache",
    "count_hit",
    "request_key",
]

CACHE_FILENAME = "judge-cache.db"
"""Default file name of the cache inside a run's output directory."""

CacheMode = Literal["use", "refresh", "off"]
"""``use``: read and write; ``refresh``: ignore hits, overwrite them; ``off``: bypass."""

_SCHEMA = """
CREATE TABLE IF NOT EXISTS judge_calls (
    key TEXT PRIMARY KEY,
    model TEXT NOT NULL,
    output TEXT NOT NULL,
    input_tokens INTEGER NOT NULL,
    output_tokens INTEGER NOT NULL,
    raw_reply TEXT,
    created_at TEXT NOT NULL,
    usage_known INTEGER,
    endpoint TEXT
) WITHOUT ROWID
"""
_ADDED_COLUMNS = {"usage_known": "INTEGER", "endpoint": "TEXT"}
"""Columns added after the first release: added to an older cache file when it is opened
(``NULL`` reads as the column's default)."""


def request_key(payload: Mapping[str, Any]) -> str:
    """The cache key of one judge request.

    Args:
        payload: Exactly what is sent, as JSON-compatible data: ``model``, parameters,
            ``messages`` and the response ``schema``. Never headers or credentials.

    Returns:
        64 lowercase hex characters: sha256 of the canonical JSON (sorted keys, compact).

    """
    return hashlib.sha256(orjson.dumps(payload, option=orjson.OPT_SORT_KEYS)).hexdigest()


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """One cached, validated judge reply.

    Attributes:
        model: The model that answered (as the endpoint reported it).
        output: The validated output object as JSON text.
        input_tokens: Prompt tokens the original call used (retries included).
        output_tokens: Completion tokens the original call used.
        raw_reply: The raw completion text, when the judge reported it.
        usage_known: Whether the endpoint reported the original call's usage (False: the
            token counts are a lower bound). Entries written before this was recorded read
            as True.
        endpoint: The endpoint that answered, bare (no credentials or query), or ``None``
            when the writer did not say (entries written before this was recorded too).

    """

    model: str
    output: str
    input_tokens: int = 0
    output_tokens: int = 0
    raw_reply: str | None = None
    usage_known: bool = True
    endpoint: str | None = None


class HitCounts(Protocol):
    """The hit counters of a judge-call cache's reader (:func:`count_hit` counts in them).

    :class:`CachedJudge`, and the shared cache of a cluster run
    (:class:`~agent_eval.run.cluster._shared_cache.SharedCache`).
    """

    endpoint: str | None
    hits: int
    other_endpoint_hits: int
    other_endpoints: Counter[str]
    unknown_endpoint_hits: int


def count_hit(counts: HitCounts, entry: CacheEntry) -> None:
    """Count a hit on ``entry``: also as another endpoint's, or an unknown one's.

    With ``counts.endpoint`` set, an entry that names another endpoint counts in
    ``other_endpoint_hits`` (and ``other_endpoints``), one that names none (written before
    entries kept their endpoint) in ``unknown_endpoint_hits``: the run warns of both.
    """
    counts.hits += 1
    filled_by = entry.endpoint
    if counts.endpoint is None or filled_by == counts.endpoint:
        return
    if filled_by is None:
        counts.unknown_endpoint_hits += 1
    else:
        counts.other_endpoint_hits += 1
        counts.other_endpoints[filled_by] += 1


class CacheBackend(Protocol):
    """Where :class:`CachedJudge` keeps its entries.

    A :class:`JudgeCache` file, or a cache shared by the workers of a cluster run
    (:mod:`agent_eval.run.cluster._shared_cache`). Both methods are awaited, so a backend may
    ask another process; an entry stored must be what a later :meth:`lookup` of the same key
    returns, from any worker of the run.
    """

    async def lookup(self, key: str) -> CacheEntry | None:
        """The entry stored under ``key`` (64 hex, :func:`request_key`), or ``None``."""
        ...

    async def store(self, key: str, entry: CacheEntry) -> None:
        """Store (or replace) ``entry`` under ``key``."""
        ...


@dataclass(frozen=True, slots=True)
class CacheStats:
    """What a judge-call cache file holds (``agent-eval cache info``).

    Attributes:
        path: The cache file.
        entries: Cached replies.
        size_bytes: The file's size on disk, its WAL included (bytes).
        oldest / newest: ISO 8601 UTC times of the oldest and newest entry; ``None`` if empty.
        models: Entries per answering model, most first.

    """

    path: Path
    entries: int
    size_bytes: int
    oldest: str | None
    newest: str | None
    models: dict[str, int]


def _add_columns(db: sqlite3.Connection) -> None:
    """Add the columns a later version added to an older cache's table."""
    present = {row[1] for row in db.execute("PRAGMA table_info(judge_calls)")}
    for name, kind in _ADDED_COLUMNS.items():
        if name in present:
            continue
        try:
            db.execute(f"ALTER TABLE judge_calls ADD COLUMN {name} {kind}")
        except sqlite3.OperationalError as exc:  # another process added it first
            if "duplicate column" not in str(exc):
                raise


class JudgeCache:
    """A judge-call cache in one SQLite file, in WAL mode, safe to share between processes.

    Each ``put`` commits on its own (autocommit), so an entry is durable once ``put`` returns.
    Calls are short and synchronous; inside one asyncio loop they never interleave.

    Args:
        path: The cache file; its directory is created when missing.

    Raises:
        StoreError: the file cannot be opened as a SQLite database.

    """

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            self._db = open_retrying(self._open)
        except (OSError, sqlite3.Error) as exc:
            raise StoreError(
                f"{self.path}: cannot open the judge-call cache ({exc}); pass another path "
                "or --no-cache"
            ) from exc

    def _open(self) -> sqlite3.Connection:
        """Connect, wait for locks (busy timeout first), switch to WAL, create the table.

        Every step is idempotent, so :func:`open_retrying` repeats them all when another
        process opening the same fresh file made one busy; the connection is closed first.
        """
        db = sqlite3.connect(
            self.path,
            isolation_level=None,
            check_same_thread=False,
            timeout=BUSY_TIMEOUT_MS / 1000,
        )
        try:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            db.execute("PRAGMA journal_mode=WAL")
            db.execute("PRAGMA synchronous=NORMAL")
            db.execute(_SCHEMA)
            _add_columns(db)
        except BaseException:
            db.close()
            raise
        return db

    def get(self, key: str) -> CacheEntry | None:
        """The entry stored under ``key``, or ``None``."""
        row = self._run(
            "SELECT model, output, input_tokens, output_tokens, raw_reply, usage_known, "
            "endpoint FROM judge_calls WHERE key = ?",
            (key,),
        ).fetchone()
        if row is None:
            return None
        model, output, tokens_in, tokens_out, raw_reply, known, endpoint = row
        return CacheEntry(
            model,
            output,
            tokens_in,
            tokens_out,
            raw_reply,
            usage_known=known is None or bool(known),
            endpoint=endpoint,
        )

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store (or replace) ``entry`` under ``key``; durable when this returns."""
        self._run(_PUT, _row(key, entry))

    def put_many(self, items: Sequence[tuple[str, CacheEntry]]) -> None:
        """:meth:`put` of each ``(key, entry)`` in one transaction; durable when this returns.

        Raises:
            StoreError: the file cannot be written (nothing of ``items`` is stored).

        """
        rows = [_row(key, entry) for key, entry in items]
        try:
            self._db.execute("BEGIN")  # autocommit connection: one transaction for the batch
            try:
                self._db.executemany(_PUT, rows)
            except BaseException:
                self._db.execute("ROLLBACK")
                raise
            self._db.execute("COMMIT")
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: judge-call cache error: {exc}") from exc

    async def lookup(self, key: str) -> CacheEntry | None:
        """:meth:`get`, as a :class:`CacheBackend` (a local file answers at once)."""
        return self.get(key)

    async def store(self, key: str, entry: CacheEntry) -> None:
        """:meth:`put`, as a :class:`CacheBackend`."""
        self.put(key, entry)

    def __len__(self) -> int:
        return int(self._run("SELECT count(*) FROM judge_calls", ()).fetchone()[0])

    def stats(self) -> CacheStats:
        """Entries, size on disk, the oldest and newest entry and the entries per model."""
        count, oldest, newest = self._run(
            "SELECT count(*), min(created_at), max(created_at) FROM judge_calls", ()
        ).fetchone()
        models = self._run(
            "SELECT model, count(*) FROM judge_calls GROUP BY model ORDER BY 2 DESC, 1", ()
        ).fetchall()
        size = sum(p.stat().st_size for p in (self.path, Path(f"{self.path}-wal")) if p.exists())
        return CacheStats(
            path=self.path,
            entries=int(count),
            size_bytes=size,
            oldest=oldest,
            newest=newest,
            models={str(m): int(n) for m, n in models},
        )

    def prune(self, older_than: timedelta | None = None) -> int:
        """Delete entries written more than ``older_than`` ago (every entry when ``None``).

        The file is compacted afterwards (``VACUUM``). Safe while other processes use the
        cache: SQLite serializes the writes; a reader sees the entry or a miss.

        Returns:
            The number of entries deleted.

        """
        if older_than is None:
            deleted = self._run("DELETE FROM judge_calls", ()).rowcount
        else:
            cutoff = (datetime.now(UTC) - older_than).isoformat(timespec="seconds")
            deleted = self._run("DELETE FROM judge_calls WHERE created_at < ?", (cutoff,)).rowcount
        self._run("VACUUM", ())
        self._run("PRAGMA wal_checkpoint(TRUNCATE)", ())
        return int(deleted)

    def bound_page_cache(self, kib: int) -> None:
        """Keep at most ``kib`` KiB of the file's pages in memory (a long-running ``serve``)."""
        bound_page_cache(self._db, kib)

    def close(self) -> None:
        """Close the connection (idempotent)."""
        self._db.close()

    def __enter__(self) -> JudgeCache:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def _run(self, sql: str, params: tuple[Any, ...]) -> sqlite3.Cursor:
        try:
            return self._db.execute(sql, params)
        except sqlite3.Error as exc:
            raise StoreError(f"{self.path}: judge-call cache error: {exc}") from exc


_PUT = (
    "INSERT OR REPLACE INTO judge_calls (key, model, output, input_tokens, output_tokens, "
    "raw_reply, created_at, usage_known, endpoint) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)"
)


def _row(key: str, entry: CacheEntry) -> tuple[Any, ...]:
    created = datetime.now(UTC).isoformat(timespec="seconds")
    return (
        key,
        entry.model,
        entry.output,
        entry.input_tokens,
        entry.output_tokens,
        entry.raw_reply,
        created,
        int(entry.usage_known),
        entry.endpoint,
    )


_PRICES_SCHEMA = """
CREATE TABLE IF NOT EXISTS model_prices (
    release TEXT NOT NULL,
    model TEXT NOT NULL,
    price TEXT,
    PRIMARY KEY (release, model)
) WITHOUT ROWID
"""


class CachedPrices:
    """Model prices kept in the judge-call cache file, per price-database release.

    The :class:`~agent_eval._costs.PriceMemo` of a scoring run (``agent_eval._costs``): a price
    that the bundled genai-prices data of one release gave for a model (or that it has none,
    stored as NULL) is kept in table ``model_prices`` and read back by later runs, so a fully
    cached re-run need not import genai-prices. Each lookup opens the file briefly (a run
    prices a handful of distinct models), so it works before and after the run's
    :class:`JudgeCache` is closed. ``read=False`` (``--refresh-cache``) looks every price up
    again and overwrites what is kept.

    Args:
        path: The judge-call cache file.
        read: Use kept prices (else only keep them).

    """

    def __init__(self, path: str | Path, *, read: bool = True) -> None:
        self.path = Path(path)
        self.read = read

    def recall(self, release: str, model: str) -> tuple[bool, dict[str, Any] | None]:
        """``(True, fields or None)`` when ``(release, model)`` is kept, else ``(False, None)``."""
        if not self.read or not self.path.exists():
            return False, None
        with self._connect() as db:
            row = db.execute(
                "SELECT price FROM model_prices WHERE release = ? AND model = ?", (release, model)
            ).fetchone()
        if row is None:
            return False, None
        return True, None if row[0] is None else orjson.loads(row[0])

    def keep(self, release: str, model: str, price: dict[str, Any] | None) -> None:
        """Keep ``price`` (``input``, ``output``, ``source``; ``None``: no price) for later runs."""
        if not self.path.exists():  # kept only beside judge calls: never a file of its own
            return
        text = None if price is None else orjson.dumps(price).decode()
        with self._connect() as db:
            db.execute(
                "INSERT OR REPLACE INTO model_prices (release, model, price) VALUES (?, ?, ?)",
                (release, model, text),
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        db = open_retrying(self._open)
        try:
            yield db
        finally:
            db.close()

    def _open(self) -> sqlite3.Connection:
        db = sqlite3.connect(self.path, isolation_level=None, timeout=BUSY_TIMEOUT_MS / 1000)
        try:
            db.execute(f"PRAGMA busy_timeout={BUSY_TIMEOUT_MS}")
            db.execute(_PRICES_SCHEMA)
        except BaseException:
            db.close()
            raise
        return db


@dataclass(slots=True)
class _KeySlot:
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)
    users: int = 0


class CachedJudge(Judge):
    """A judge that answers from a :class:`JudgeCache` and asks ``inner`` only on a miss.

    Identical requests in flight at the same time make one call: later ones wait for the
    first and then read its cached reply (also with ``refresh``, which ignores only entries
    this wrapper did not write itself). A hit returns the stored output re-validated as the
    request's ``response_model``, with ``cached=True``, ``attempts=0`` and zero tokens and
    latency (it cost nothing this run); the original usage stays in the cache file, and the
    reply's ``usage_known`` says whether the endpoint had reported it (a cached reply keeps the
    known/unknown state of the call that wrote it; its cost in this run is 0 either way).

    Args:
        inner: The judge asked on a miss.
        cache: The cache (a :class:`JudgeCache` file or another :class:`CacheBackend`);
            ``None`` only with ``mode="off"``.
        mode: ``use`` (read and write), ``refresh`` (never read, overwrite) or ``off``.
        parameters: Further settings that change the bytes sent (e.g. the structured-output
            mode), hashed into the key. Never credentials or headers.
        endpoint: The endpoint ``inner`` asks, bare (:func:`agent_eval._redaction.bare_endpoint`;
            never a credential), stored beside each entry written; ``None``: not said (then
            no hit is counted as another or an unknown endpoint's).

    Attributes:
        hits: Requests answered from the cache.
        misses: Requests passed to ``inner``.
        other_endpoint_hits: Of ``hits``, those from entries another endpoint filled (the
            entry names an endpoint, and not this one).
        other_endpoints: Those endpoints, with their hit counts.
        unknown_endpoint_hits: Of ``hits``, those from entries that name no endpoint (written
            by an agent-eval that did not keep it): no one can say which endpoint answered.

    """

    def __init__(
        self,
        inner: Judge,
        cache: CacheBackend | None,
        mode: CacheMode = "use",
        parameters: Mapping[str, Any] | None = None,
        endpoint: str | None = None,
    ) -> None:
        if cache is None and mode != "off":
            raise ValueError(f"cache mode {mode!r} needs a JudgeCache")
        self.inner = inner
        self.model = inner.model
        self.cache = cache
        self.mode = mode
        self.parameters = dict(parameters or {})
        self.endpoint = endpoint
        self.hits = 0
        self.misses = 0
        self.other_endpoint_hits = 0
        self.other_endpoints: Counter[str] = Counter()
        self.unknown_endpoint_hits = 0
        self._locks: dict[str, _KeySlot] = {}
        self._written: set[str] = set()

    def key(self, request: JudgeRequest) -> str:
        """The cache key of ``request`` sent to this judge's model (64 hex)."""
        return request_key({**request.canonical(self.model), "parameters": self.parameters})

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Answer from the cache when possible, else ask ``inner`` and store its reply."""
        if self.cache is None or self.mode == "off":
            self.misses += 1
            return await self.inner.ask(request)
        key = self.key(request)
        slot = self._locks.setdefault(key, _KeySlot())
        slot.users += 1
        try:
            async with slot.lock:
                return await self._ask_locked(self.cache, key, request)
        finally:
            slot.users -= 1
            if slot.users == 0:
                del self._locks[key]

    async def _ask_locked(
        self, cache: CacheBackend, key: str, request: JudgeRequest
    ) -> JudgeReply[Any]:
        fresh = self.mode == "use" or key in self._written
        entry = await cache.lookup(key) if fresh else None
        if entry is not None:
            count_hit(self, entry)
            return _reply_from(entry, request)
        self.misses += 1
        reply = await self.inner.ask(request)
        await cache.store(key, _entry_from(reply, self.endpoint))
        if self.mode == "refresh":  # only refresh reads it: kept always, it grows per call
            self._written.add(key)
        return reply

    async def aclose(self) -> None:
        """Close the inner judge (the cache belongs to whoever opened it)."""
        await self.inner.aclose()


def _entry_from(reply: JudgeReply[Any], endpoint: str | None = None) -> CacheEntry:
    output = reply.output
    text = output.model_dump_json() if isinstance(output, BaseModel) else orjson.dumps(output)
    return CacheEntry(
        model=reply.model,
        output=text if isinstance(text, str) else text.decode(),
        input_tokens=reply.input_tokens,
        output_tokens=reply.output_tokens,
        raw_reply=reply.raw_reply,
        usage_known=reply.usage_known,
        endpoint=endpoint,
    )


def _reply_from(entry: CacheEntry, request: JudgeRequest) -> JudgeReply[Any]:
    return JudgeReply(
        output=request.response_model.model_validate_json(entry.output),
        model=entry.model,
        input_tokens=0,
        output_tokens=0,
        latency_ms=0.0,
        attempts=0,
        raw_reply=entry.raw_reply or "",
        cached=True,
        usage_known=entry.usage_known,
    )
