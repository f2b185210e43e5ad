"""One actor call at a time for a worker's many callers (:class:`Coalescer`)."""

from __future__ import annotations

import asyncio

import pytest

from agent_eval.run.cluster._coalesce import Coalescer


class _Remote:
    """A remote side that records each batch and answers after a pause."""

    def __init__(self, answer_first: int | None = None, fail: bool = False) -> None:
        self.batches: list[list[int]] = []
        self.answer_first, self.fail = answer_first, fail

    async def send(self, items: list[int]) -> list[int]:
        self.batches.append(items)
        await asyncio.sleep(0.01)
        if self.fail:
            raise ConnectionError("the actor died")
        count = len(items) if self.answer_first is None else min(self.answer_first, len(items))
        return [item * 10 for item in items[:count]]


async def test_what_is_asked_while_a_call_is_out_goes_in_the_next_one() -> None:
    remote = _Remote()
    ask = Coalescer(remote.send)
    first = asyncio.gather(*(ask(i) for i in range(3)))  # asked together: one call
    await asyncio.sleep(0.001)  # that call is out
    later = asyncio.gather(*(ask(i) for i in range(3, 5)))
    assert await first == [0, 10, 20] and await later == [30, 40]
    assert remote.batches == [[0, 1, 2], [3, 4]] and ask.batches == 2
    assert await ask(7) == 70 and remote.batches[-1] == [7]  # alone once idle


async def test_items_not_answered_go_first_in_the_next_call() -> None:
    remote = _Remote(answer_first=2)
    ask = Coalescer(remote.send)
    assert await asyncio.gather(*(ask(i) for i in range(6))) == [0, 10, 20, 30, 40, 50]
    assert remote.batches == [[0, 1, 2, 3, 4, 5], [2, 3, 4, 5], [4, 5]]


async def test_a_failed_call_fails_each_of_its_callers_and_the_next_call_goes_out() -> None:
    remote = _Remote(fail=True)
    ask = Coalescer(remote.send)
    results = await asyncio.gather(*(ask(i) for i in range(3)), return_exceptions=True)
    assert all(isinstance(r, ConnectionError) for r in results)
    remote.fail = False
    assert await ask(4) == 40


async def test_the_answer_of_a_caller_that_stopped_waiting_goes_to_orphan() -> None:
    remote, orphans = _Remote(), []
    ask = Coalescer(remote.send, orphan=orphans.append)
    first = asyncio.ensure_future(ask(1))
    await asyncio.sleep(0.001)  # the batch is out
    first.cancel()
    assert await ask(2) == 20
    with pytest.raises(asyncio.CancelledError):
        await first
    assert orphans == [10]


async def test_batches_stop_at_most() -> None:
    remote = _Remote()
    ask = Coalescer(remote.send, most=2)
    await asyncio.gather(*(ask(i) for i in range(5)))
    assert [len(b) for b in remote.batches] == [2, 2, 1]
