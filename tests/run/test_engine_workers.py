"""The engine's workers: the next conversation starts in the step the last one ended in.

Issue 15 (judge wall at C = 64): a conversation's slot used to pass to the next conversation
through a feeder task woken by a semaphore, then a new task, two turns of the event loop's
queue, each behind every other reply of the same burst. Now each of ``concurrency`` workers
takes the next conversation itself. These tests use an in-process judge whose replies the test
releases, so the order of the loop's callbacks is exact.
"""

from __future__ import annotations

import asyncio
import contextvars
from collections.abc import Iterator
from typing import Any

import pytest

from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.run._engine import Engine

from .goal_script import trace

ANSWER = {"user_goal": "g", "end_state": "e", "reason": "r", "verdict": "1"}


class GatedJudge(Judge):
    """Answers every request; a request carrying ``gated`` text waits for :attr:`gate`."""

    model = "gated-model"

    def __init__(self, gated: str, log: list[str], *, pause: bool = False) -> None:
        self.gated, self.log, self.pause = gated, log, pause
        self.gate: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiting = asyncio.Event()

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        text = request.messages[-1]["content"]
        self.log.append(f"ask {text.split('marker-')[1].split()[0] if 'marker-' in text else '-'}")
        if self.gated in text:
            self.waiting.set()
            await self.gate
        elif self.pause:  # let the other workers run: they interleave
            await asyncio.sleep(0)
        output = request.response_model.model_validate(ANSWER)
        return JudgeReply(output=output, model=self.model, input_tokens=1, output_tokens=1,
                          latency_ms=0.0, attempts=1, raw_reply="{}")  # fmt: skip


def _engine(judge: Judge, concurrency: int) -> Engine:
    return Engine(metric=GoalAccuracy(), formatter=get_formatter("ragas-pretty@1"), judge=judge,
                  run_id="run-w", concurrency=concurrency)  # fmt: skip


async def test_the_next_conversation_starts_before_other_ready_callbacks() -> None:
    log: list[str] = []
    judge = GatedJudge("marker-c0", log)
    traces = [trace(f"c{i}", done=True, extra=f"marker-c{i}") for i in range(2)]
    run = asyncio.create_task(_engine(judge, concurrency=1).run(traces))
    await judge.waiting.wait()
    loop = asyncio.get_running_loop()
    judge.gate.set_result(None)  # the reply of c0's stage 1 arrives, in a burst with others
    for i in range(5):
        loop.call_soon(log.append, f"other {i}")
    summary = await run
    assert summary.scored == 2
    # c0's stage 2, then c1's first request in the same step: before the burst's other work
    assert log[:4] == ["ask c0", "ask -", "ask c1", "ask -"]
    assert log[4:] == [f"other {i}" for i in range(5)]


async def test_input_is_pulled_one_conversation_at_a_time_at_most_concurrency_ahead() -> None:
    log: list[str] = []
    judge = GatedJudge("never", log)
    pulled: list[int] = []
    finished: list[int] = []
    concurrency = 3

    def traces() -> Iterator[Any]:
        for i in range(10):
            assert len(pulled) - len(finished) <= concurrency
            pulled.append(i)
            yield trace(f"c{i}", done=True, extra=f"marker-c{i}")

    engine = _engine(judge, concurrency)
    engine.on_result = (lambda result: finished.append(1),)
    summary = await engine.run(traces())
    assert summary.scored == 10 and pulled == list(range(10))
    assert [row.conversation_id for row in summary.results] == [f"c{i}" for i in range(10)]


async def test_an_input_error_ends_the_run_as_itself_with_finished_rows_kept() -> None:
    log: list[str] = []
    judge = GatedJudge("never", log)

    def traces() -> Iterator[Any]:
        yield trace("c0", done=True, extra="marker-c0")
        raise ValueError("bad record at line 2")

    engine = _engine(judge, concurrency=4)
    kept: list[str] = []
    engine.on_result = (lambda result: kept.append(result.conversation_id),)
    with pytest.raises(ValueError, match="bad record at line 2"):
        await engine.run(traces())
    assert kept in ([], ["c0"])  # c0 may have finished before the error cancelled it


held: contextvars.ContextVar[str] = contextvars.ContextVar("held", default="outside")


async def test_an_input_holding_a_context_variable_over_its_yields_is_advanced_in_one_context() -> (
    None
):
    # as an OpenTelemetry span around a generator's yields does: the token made before a
    # yield is reset after it, which fails in any other context than the one that set it
    log: list[str] = []
    judge = GatedJudge("never", log, pause=True)
    seen: list[str] = []

    def traces() -> Iterator[Any]:
        for i in range(12):
            token = held.set(f"c{i}")
            yield trace(f"c{i}", done=True, extra=f"marker-c{i}")
            seen.append(held.get())
            held.reset(token)

    summary = await _engine(judge, concurrency=4).run(traces())
    assert summary.scored == 12
    assert seen == [f"c{i}" for i in range(12)]
    assert held.get() == "outside"
