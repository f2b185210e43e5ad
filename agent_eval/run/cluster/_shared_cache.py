"""The judge-call cache of a cluster run: one actor every worker reads and writes.

A judge call is paid once per run whatever happens to the workers: every worker's
:class:`~agent_eval.run._cache.CachedJudge` looks each request up in :class:`SharedCache` (one
Ray actor per run) before asking the model, and stores the validated reply there as soon as it
arrives. A task Ray retries after its worker died, a ``--resume`` and a re-run therefore ask
nothing already answered: only the calls in flight when a worker died are asked again (their
replies never reached anyone).

The actor is placed on the driver's node when it can be (a laptop, the head node of a RayJob)
and keeps its entries in a :class:`~agent_eval.run._cache.JudgeCache` file there: the user's
cache file (``--cache-path``, ``$AGENT_EVAL_CACHE_PATH`` or the per-user default). A re-run
thus finds the answers of every earlier run, on one machine or on the cluster. When the actor
sits on another node, its file is that node's, and the driver copies the entries the run wrote
into the user's local cache at the end (:meth:`SharedCache.written`), so that a later run in
one process asks nothing the cluster answered either.

Keys and entries are the one-process cache's (:func:`~agent_eval.run._cache.request_key`): no
header, key or base URL is in them.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from agent_eval.run._cache import CacheEntry, JudgeCache, count_hit
from agent_eval.run.cluster._coalesce import Coalescer

__all__ = ["ActorCache", "SharedCache"]


class SharedCache:
    """The entries of one run's judge-call cache (the body of one Ray actor per run).

    Args:
        path: The cache file on the actor's node, opened (created when missing).
        endpoint: The run's judge endpoint, bare: hits are counted as one process's
            :class:`~agent_eval.run._cache.CachedJudge` counts them
            (:func:`~agent_eval.run._cache.count_hit`), so the run warns the same way.

    Raises:
        StoreError: the file cannot be opened.

    """

    def __init__(self, path: str, endpoint: str | None = None) -> None:
        self.path, self.endpoint = path, endpoint
        self._file = JudgeCache(path)
        self._written: list[str] = []
        self.hits = 0
        self.misses = 0
        self.other_endpoint_hits = 0
        self.other_endpoints: Counter[str] = Counter()
        self.unknown_endpoint_hits = 0

    def get(self, key: str) -> CacheEntry | None:
        """The entry under ``key`` (a hit), or ``None`` (a miss: the caller asks the model)."""
        entry = self._file.get(key)
        if entry is None:
            self.misses += 1
            return None
        count_hit(self, entry)
        return entry

    def put(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` under ``key``; durable in the actor's file when this returns."""
        self._file.put(key, entry)
        self._written.append(key)

    def get_many(self, keys: list[str]) -> list[CacheEntry | None]:
        """:meth:`get` of each key, in order."""
        return [self.get(key) for key in keys]

    def put_many(self, items: list[tuple[str, CacheEntry]]) -> list[None]:
        """:meth:`put` of each ``(key, entry)``, in one transaction; durable when this returns."""
        self._file.put_many(items)
        self._written.extend(key for key, _ in items)
        return [None] * len(items)

    def written(self, start: int = 0, count: int = 1000) -> list[tuple[str, CacheEntry]]:
        """Entries this run wrote, in order, ``count`` from ``start`` (for the driver's copy)."""
        keys = self._written[start : start + count]
        found = ((key, self._file.get(key)) for key in keys)
        return [(key, entry) for key, entry in found if entry is not None]

    def state(self) -> dict[str, Any]:
        """Hits, misses, entries written this run, and the file (its node's path).

        Of the hits, also those another endpoint filled (by endpoint) or an unknown one.
        """
        return {
            "hits": self.hits,
            "misses": self.misses,
            "other_endpoint_hits": self.other_endpoint_hits,
            "other_endpoints": dict(self.other_endpoints),
            "unknown_endpoint_hits": self.unknown_endpoint_hits,
            "written": len(self._written),
            "path": self.path,
        }

    def close(self) -> None:
        """Close the file."""
        self._file.close()


class ActorCache:
    """A worker's :class:`~agent_eval.run._cache.CacheBackend` on the run's cache actor.

    The lookups (and the stores) a worker makes while one is out go to the actor together
    (:class:`~agent_eval.run.cluster._coalesce.Coalescer`: :meth:`SharedCache.get_many`,
    :meth:`SharedCache.put_many`).

    Args:
        actor: The handle of the run's :class:`SharedCache` actor.

    """

    def __init__(self, actor: Any) -> None:
        self.actor = actor
        self.lookups: Coalescer[str, CacheEntry | None] = Coalescer(self._get)
        self.stores: Coalescer[tuple[str, CacheEntry], None] = Coalescer(self._put)

    async def _get(self, keys: list[str]) -> list[CacheEntry | None]:
        entries: list[CacheEntry | None] = await self.actor.get_many.remote(keys)
        return entries

    async def _put(self, items: list[tuple[str, CacheEntry]]) -> list[None]:
        done: list[None] = await self.actor.put_many.remote(items)
        return done

    async def lookup(self, key: str) -> CacheEntry | None:
        """Ask the actor for ``key``."""
        return await self.lookups(key)

    async def store(self, key: str, entry: CacheEntry) -> None:
        """Store ``entry`` in the actor (awaited: stored before the reply is used)."""
        await self.stores((key, entry))
