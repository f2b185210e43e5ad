"""Opening a SQLite file that other processes may be opening at the same moment.

Several processes that open the same fresh file at once (runs sharing one judge-call cache, a
report read while its run writes) race to switch it to WAL and to create its tables. The busy
timeout (:data:`BUSY_TIMEOUT_MS`) is set first, so ordinary lock waits block instead of failing;
but SQLite returns ``SQLITE_BUSY`` from ``PRAGMA journal_mode=WAL`` (and from reading a WAL file
another connection is recovering) without calling the busy handler, so :func:`open_retrying`
retries the whole, idempotent set-up on ``SQLITE_BUSY``/``SQLITE_LOCKED`` with jittered
exponential waits up to :data:`OPEN_DEADLINE_SECONDS` (tenacity; imported only when the first
try was busy).
"""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from typing import TypeVar

__all__ = [
    "BUSY_TIMEOUT_MS",
    "OPEN_DEADLINE_SECONDS",
    "bound_page_cache",
    "is_busy",
    "open_retrying",
]

BUSY_TIMEOUT_MS = 10_000
"""How long one statement waits for another connection's lock (``PRAGMA busy_timeout``), ms."""
OPEN_DEADLINE_SECONDS = 30.0
"""How long :func:`open_retrying` retries a busy set-up before it gives up, seconds."""

T = TypeVar("T")


def bound_page_cache(db: sqlite3.Connection, kib: int) -> None:
    """Keep at most ``kib`` KiB of ``db``'s pages in memory (``PRAGMA cache_size=-KIB``).

    SQLite's default is 2,000 KiB per connection, filled as the file grows and kept while the
    connection is open: a long-running process (``serve``) bounds it.

    Raises:
        ValueError: ``kib`` is not positive.

    """
    if kib <= 0:
        raise ValueError(f"a page cache of {kib} KiB: give at least 1")
    db.execute(f"PRAGMA cache_size=-{int(kib)}")


def is_busy(exc: BaseException) -> bool:
    """Whether ``exc`` is SQLite's ``SQLITE_BUSY`` or ``SQLITE_LOCKED`` (any extended code)."""
    if not isinstance(exc, sqlite3.OperationalError):
        return False
    code = getattr(exc, "sqlite_errorcode", None)
    if isinstance(code, int):
        return code & 0xFF in (sqlite3.SQLITE_BUSY, sqlite3.SQLITE_LOCKED)
    return "locked" in str(exc) or "busy" in str(exc)


def open_retrying(set_up: Callable[[], T], *, deadline: float = OPEN_DEADLINE_SECONDS) -> T:
    """Call ``set_up`` (idempotent: connect, PRAGMAs, schema) until it is not busy.

    Args:
        set_up: Opens the connection and prepares the file; it closes what it opened before it
            raises (a retry opens afresh).
        deadline: Seconds to keep retrying a busy set-up.

    Returns:
        What ``set_up`` returns.

    Raises:
        sqlite3.Error: ``set_up``'s error when it is not busy, or its last busy error once the
            deadline has passed.

    """
    try:  # the first try outside tenacity: an uncontended open imports nothing more
        return set_up()
    except sqlite3.OperationalError as exc:
        if not is_busy(exc):
            raise
    from tenacity import (
        Retrying,
        retry_if_exception,
        stop_after_delay,
        wait_random_exponential,
    )

    retrying = Retrying(
        retry=retry_if_exception(is_busy),
        stop=stop_after_delay(deadline),
        wait=wait_random_exponential(multiplier=0.02, max=1.0),
        reraise=True,
    )
    return retrying(set_up)
