"""The revision each conversation read from the acknowledgement log was given.

``OUT/ack-log/revisions.jsonl`` has one line per revision handed to the scorer:
``{"conversation_id", "revision", "digest", "trace_ids"}``, where ``digest`` names the log
records it was read from (:meth:`~agent_eval.live._ack_log.AckLog.digest`). It is written
before the revision is scored, so a restarted ``serve`` that reads the same records again gives
the conversation the same revision (its rows, if committed, are then found and not written
twice), and one read from more records the next revision. Lines whose traces no segment holds
any more are dropped when the file is rewritten (:meth:`RevisionJournal.prune`), so the file
stays as small as the log.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from pathlib import Path

import orjson

__all__ = ["REVISIONS_NAME", "RevisionJournal"]

REVISIONS_NAME = "revisions.jsonl"


@dataclass(frozen=True)
class _Entry:
    revision: int
    digest: str
    trace_ids: tuple[str, ...]


class RevisionJournal:
    """The revisions given to conversations read from the log (see the module docstring).

    Args:
        path: ``OUT/ack-log/revisions.jsonl`` (read when it exists; a last line cut short by a
            kill is ignored: its revision was never scored).

    """

    def __init__(self, path: Path) -> None:
        self.path = path
        self.entries: dict[str, list[_Entry]] = {}
        self._lines = 0
        if path.is_file():
            data = path.read_bytes()
            whole = data[: data.rfind(b"\n") + 1]
            for line in whole.splitlines():
                self._load(line)
            if len(whole) < len(data):  # a line cut short by a kill: never scored, cut off
                with path.open("rb+") as handle:
                    handle.truncate(len(whole))
        self._handle = path.open("ab")

    def _load(self, line: bytes) -> None:
        try:
            row = orjson.loads(line)
            entry = _Entry(int(row["revision"]), str(row["digest"]), tuple(row["trace_ids"]))
            cid = str(row["conversation_id"])
        except (orjson.JSONDecodeError, KeyError, TypeError, ValueError):
            return  # a line cut short by a kill: written before scoring, so never scored
        self.entries.setdefault(cid, []).append(entry)
        self._lines += 1

    def revision_of(self, conversation_id: str, digest: str) -> int | None:
        """The revision given to ``conversation_id`` read from the records ``digest`` names."""
        for entry in self.entries.get(conversation_id, ()):
            if entry.digest == digest:
                return entry.revision
        return None

    def latest(self, conversation_id: str) -> int:
        """The highest revision given to ``conversation_id`` (-1: none)."""
        return max((e.revision for e in self.entries.get(conversation_id, ())), default=-1)

    def add(
        self, conversation_id: str, revision: int, digest: str, trace_ids: Sequence[str]
    ) -> None:
        """Record a revision (written through to the file before it is scored)."""
        entry = _Entry(revision, digest, tuple(trace_ids))
        self.entries.setdefault(conversation_id, []).append(entry)
        line = {"conversation_id": conversation_id, "revision": revision, "digest": digest}
        self._handle.write(orjson.dumps(line | {"trace_ids": entry.trace_ids}) + b"\n")
        self._handle.flush()
        self._lines += 1

    def prune(self, referenced: Callable[[str], bool]) -> int:
        """Drop entries none of whose traces is ``referenced``; returns the lines dropped.

        The file is rewritten when at least half of its lines went.
        """
        dropped = 0
        for cid in list(self.entries):
            kept = [e for e in self.entries[cid] if any(map(referenced, e.trace_ids))]
            dropped += len(self.entries[cid]) - len(kept)
            if kept:
                self.entries[cid] = kept
            else:
                del self.entries[cid]
        if dropped and self._lines - dropped <= self._lines // 2:
            self._rewrite()
        return dropped

    def _rewrite(self) -> None:
        temporary = self.path.with_suffix(".tmp")
        with temporary.open("wb") as handle:
            for cid, entries in self.entries.items():
                for e in entries:
                    row = {"conversation_id": cid, "revision": e.revision, "digest": e.digest}
                    handle.write(orjson.dumps(row | {"trace_ids": e.trace_ids}) + b"\n")
            handle.flush()
            os.fsync(handle.fileno())
        self._handle.close()
        os.replace(temporary, self.path)
        self._handle = self.path.open("ab")
        self._lines = sum(len(e) for e in self.entries.values())

    def close(self) -> None:
        """Close the file (removed when it holds nothing)."""
        self._handle.close()
        if not self.entries:
            self.path.unlink(missing_ok=True)
