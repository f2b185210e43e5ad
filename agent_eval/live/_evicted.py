"""Scored conversations evicted from the receiver's memory to ``OUT/live-evicted.sqlite``.

``agent-eval serve`` keeps a scored conversation's spans so that it can be read whole again when
more of it arrives (a late span, the next turn). Kept in memory they would grow without bound,
so past ``--max-buffer-mb`` the least recently scored conversations are moved here
(:meth:`EvictedStore.put`) and read back whole when one of their traces, or the next turn of a
bare-call conversation, arrives (:meth:`EvictedStore.take`). What stays in memory per evicted
conversation is nothing: the trace index, the revision counter and the folding keys of bare-call
conversations live in this file too.

Tables (SQLite, journaling and sync off: it is a cache of the receiver's memory, not a record;
the acknowledgement log is what survives a crash, so a restarted ``serve`` starts it empty; its
page cache is :data:`PAGE_CACHE_KIB`, not SQLite's default 2,000 KiB, since the file grows for
as long as ``serve`` runs):

- ``conversations(cid, revision, traces)``: ``traces`` is the pickled list of
  ``(trace_id, packed items, charged bytes)`` (:class:`~agent_eval.live._buffer.HeldTrace`).
- ``traces(trace_id, cid)``: which evicted conversation a trace belongs to.
- ``revisions(cid, revision)``: the last revision given to every conversation scored so far.
- ``bare(cid, seq, keys, digest)``: each bare-call conversation's latest call (its message keys
  as digests, :func:`key_digests`), ``seq`` its arrival order and ``digest`` that of its keys
  with system messages reduced to their role, so a call's candidates are found by the digests
  of its prefixes (:meth:`EvictedStore.bare_candidates`) and chosen by the folding rule.
"""

from __future__ import annotations

import hashlib
import pickle
import sqlite3
from collections.abc import Sequence
from pathlib import Path

from agent_eval.ingest._message_identity import MessageKey
from agent_eval.run._sqlite_open import bound_page_cache

__all__ = ["EVICTED_NAME", "PAGE_CACHE_KIB", "EvictedStore", "key_digests"]

EVICTED_NAME = "live-evicted.sqlite"
"""The file in ``OUT`` (or a temporary directory when there is no ``OUT``)."""

PAGE_CACHE_KIB = 256
"""KiB of pages each SQLite file ``serve`` keeps open may hold in memory: this one, the results
store and the judge-call cache (:meth:`~agent_eval.run._store.ResultStore.bound_page_cache`)."""

DigestKey = tuple[str, bytes]
PackedTrace = tuple[str, list[bytes], float]
"""``(trace_id, packed item batches, charged bytes)``."""

_SCHEMA = """
CREATE TABLE conversations (cid TEXT PRIMARY KEY, traces BLOB NOT NULL);
CREATE TABLE traces (trace_id TEXT PRIMARY KEY, cid TEXT NOT NULL);
CREATE TABLE revisions (cid TEXT PRIMARY KEY, revision INTEGER NOT NULL);
CREATE TABLE bare (cid TEXT PRIMARY KEY, seq INTEGER NOT NULL, keys BLOB NOT NULL,
                   digest BLOB NOT NULL);
CREATE INDEX bare_digest ON bare (digest);
"""


def key_digests(keys: Sequence[MessageKey]) -> tuple[DigestKey, ...]:
    """``keys`` as ``(role, 8-byte blake2b digest)`` pairs.

    Equal exactly when the keys are (barring a 2**-64 collision); the role is kept for the
    folding rule's system messages.
    """
    return tuple(
        (str(k[0]), hashlib.blake2b(repr(k).encode(), digest_size=8).digest()) for k in keys
    )


def _loose_digest(keys: Sequence[DigestKey]) -> bytes:
    """A digest of ``keys`` with system messages' text left out (they may change per turn)."""
    h = hashlib.blake2b(digest_size=12)
    for role, digest in keys:
        h.update(role.encode() + b"\0" + (b"" if role == "system" else digest))
    return h.digest()


class EvictedStore:
    """The evicted conversations' file (see the module docstring).

    Args:
        path: The SQLite file; an existing one is replaced (it describes another process's
            memory).

    """

    def __init__(self, path: Path) -> None:
        self.path = path
        path.parent.mkdir(parents=True, exist_ok=True)
        path.unlink(missing_ok=True)
        self._db = sqlite3.connect(path, isolation_level=None, check_same_thread=False)
        self._db.execute("PRAGMA journal_mode=OFF")
        self._db.execute("PRAGMA synchronous=OFF")
        bound_page_cache(self._db, PAGE_CACHE_KIB)
        self._db.executescript(_SCHEMA)
        self.conversations = 0
        """Conversations evicted and not read back."""
        self._seq = 0

    def put(self, cid: str, traces: Sequence[PackedTrace]) -> None:
        """Keep the evicted conversation ``cid`` (its traces packed)."""
        blob = pickle.dumps(list(traces), protocol=pickle.HIGHEST_PROTOCOL)
        with self._db:
            self._db.execute("INSERT OR REPLACE INTO conversations VALUES (?, ?)", (cid, blob))
            self._db.executemany(
                "INSERT OR REPLACE INTO traces VALUES (?, ?)", ((t[0], cid) for t in traces)
            )
        self.conversations += 1

    def holds(self, cid: str) -> bool:
        """Whether ``cid`` is evicted (and not read back since)."""
        return (
            self._db.execute("SELECT 1 FROM conversations WHERE cid = ?", (cid,)).fetchone()
            is not None
        )

    def conversation_of(self, trace_id: str) -> str | None:
        """The evicted conversation ``trace_id`` belongs to, else ``None``."""
        row = self._db.execute("SELECT cid FROM traces WHERE trace_id = ?", (trace_id,)).fetchone()
        return None if row is None else str(row[0])

    def take(self, cid: str) -> list[PackedTrace]:
        """Remove and return the evicted conversation ``cid``'s traces (empty when none)."""
        row = self._db.execute("SELECT traces FROM conversations WHERE cid = ?", (cid,)).fetchone()
        if row is None:
            return []
        traces: list[PackedTrace] = pickle.loads(row[0])
        with self._db:
            self._db.execute("DELETE FROM conversations WHERE cid = ?", (cid,))
            self._db.executemany("DELETE FROM traces WHERE trace_id = ?", ((t[0],) for t in traces))
        self.conversations -= 1
        return traces

    def revision(self, cid: str) -> int:
        """The last revision given to ``cid`` (-1: never scored)."""
        row = self._db.execute("SELECT revision FROM revisions WHERE cid = ?", (cid,)).fetchone()
        return -1 if row is None else int(row[0])

    def set_revision(self, cid: str, revision: int) -> None:
        """Record the revision just given to ``cid``."""
        self._db.execute("INSERT OR REPLACE INTO revisions VALUES (?, ?)", (cid, revision))

    def set_bare(self, cid: str, keys: Sequence[DigestKey]) -> None:
        """Record ``keys`` as the latest call of the bare-call conversation ``cid``."""
        self._seq += 1
        blob = pickle.dumps(tuple(keys), protocol=pickle.HIGHEST_PROTOCOL)
        self._db.execute(
            "INSERT OR REPLACE INTO bare VALUES (?, ?, ?, ?)",
            (cid, self._seq, blob, _loose_digest(keys)),
        )

    def bare_candidates(self, keys: Sequence[DigestKey]) -> list[tuple[str, tuple[DigestKey, ...]]]:
        """The bare-call conversations whose latest call matches a proper prefix of ``keys``.

        System messages' text aside; oldest latest call first: the candidates
        :func:`~agent_eval.ingest._folding.choose_continued` chooses from.
        """
        digests = [_loose_digest(keys[:n]) for n in range(1, len(keys))]
        found: list[tuple[int, str, tuple[DigestKey, ...]]] = []
        for start in range(0, len(digests), 500):  # SQLite's host parameter limit
            chunk = digests[start : start + 500]
            marks = ",".join("?" * len(chunk))
            rows = self._db.execute(
                f"SELECT seq, cid, keys FROM bare WHERE digest IN ({marks})",
                chunk,
            )
            found += [(int(s), str(c), pickle.loads(k)) for s, c, k in rows]
        return [(cid, k) for _, cid, k in sorted(found)]

    def close(self) -> None:
        """Close and remove the file (nothing in it outlives the process)."""
        self._db.close()
        self.path.unlink(missing_ok=True)
