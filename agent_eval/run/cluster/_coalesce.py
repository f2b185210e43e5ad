"""One remote call at a time for many callers: what they ask while it is out goes in the next.

A worker's judge calls ask the run's actors (the authority, the shared cache) before and after
every request. One actor call costs a round trip through Ray's core worker, about 0.6-0.9 ms of
CPU on each side (``bench/scale_ray.py``'s machine: 1,100-1,700 calls a second between two
processes), so one call per request caps a worker far below what one process scores. A
:class:`Coalescer` sends at most one call at a time: the items asked for while it is out wait
and go together in the next one. Under light load that is one call per item, as before; with
``k`` requests in flight, about one call per ``k``. Nothing waits on a timer.
"""

from __future__ import annotations

import asyncio
from collections import deque
from collections.abc import Awaitable, Callable, Sequence
from typing import Generic, TypeVar

__all__ = ["Coalescer"]

T = TypeVar("T")
R = TypeVar("R")


class Coalescer(Generic[T, R]):
    """Sends the items asked for in batches, one batch in flight at a time.

    Args:
        send: Sends a batch (in the order asked) and returns the results of its first
            ``n >= 1`` items, in order; the items after them go first in the next batch (an
            authority admits what it can now, and waits for the first item only).
        orphan: Called with the result of an item whose caller stopped waiting (cancelled)
            before it came (e.g. to give back a ticket nobody will use).
        most: The largest batch.

    Raises:
        Exception: :meth:`__call__` raises what ``send`` raised, to every caller of the batch.

    """

    def __init__(
        self,
        send: Callable[[list[T]], Awaitable[Sequence[R]]],
        orphan: Callable[[R], None] | None = None,
        most: int = 256,
    ) -> None:
        self._send, self._orphan, self._most = send, orphan, most
        self._waiting: deque[tuple[T, asyncio.Future[R]]] = deque()
        self._sender: asyncio.Task[None] | None = None
        self.batches = 0
        """Batches sent (for tests and benchmarks)."""

    async def __call__(self, item: T) -> R:
        """The result of ``item``, sent in the next batch."""
        future: asyncio.Future[R] = asyncio.get_running_loop().create_future()
        self._waiting.append((item, future))
        if self._sender is None or self._sender.done():
            self._sender = asyncio.create_task(self._drain())
        return await future

    async def _drain(self) -> None:
        while self._waiting:
            batch = [self._waiting.popleft() for _ in range(min(self._most, len(self._waiting)))]
            live = [(item, future) for item, future in batch if not future.cancelled()]
            if not live:
                continue
            self.batches += 1
            try:
                results = await self._send([item for item, _ in live])
            except Exception as exc:  # every caller of the batch gets it
                for _, future in live:
                    if not future.done():
                        future.set_exception(exc)
                continue
            if not results:
                error = RuntimeError("a coalesced call answered none of its items")
                for _, future in live:
                    if not future.done():
                        future.set_exception(error)
                continue
            for (_, future), result in zip(live, results, strict=False):
                if future.done():  # cancelled while the batch was out
                    if self._orphan is not None:
                        self._orphan(result)
                else:
                    future.set_result(result)
            self._waiting.extendleft(reversed(live[len(results) :]))
