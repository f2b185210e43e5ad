"""The engine leaves the objects older than its runs out of garbage collection while they run."""

from __future__ import annotations

import asyncio
import gc
from collections.abc import Iterator

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.formatting import get_formatter
from agent_eval.metrics._tool_errors import ToolErrors
from agent_eval.run._engine import Engine


def _traces(n: int, seen: list[int]) -> Iterator[AgentTrace]:
    for i in range(n):
        seen.append(gc.get_freeze_count())  # read while the run consumes its input
        yield AgentTrace(
            conversation_id=f"c{i}",
            messages=(UserMessage(content="hi"), AssistantMessage(content="hello")),
        )


def _engine() -> Engine:
    return Engine(metric=ToolErrors(), formatter=get_formatter("transcript@1"), judge=None)


def test_objects_older_than_the_runs_are_frozen_while_they_run_and_unfrozen_after() -> None:
    gc.unfreeze()
    older = gc.get_count()[2] + len(gc.get_objects(generation=2))
    seen: list[int] = []

    async def two_runs() -> None:  # overlapping runs: frozen once, unfrozen after the last
        await asyncio.gather(_engine().run(_traces(3, seen)), _engine().run(_traces(3, seen)))

    asyncio.run(two_runs())
    assert len(seen) == 6
    assert min(seen) >= older > 0
    assert gc.get_freeze_count() == 0


def test_a_process_that_froze_objects_itself_keeps_them_frozen() -> None:
    gc.freeze()
    try:
        frozen = gc.get_freeze_count()
        seen: list[int] = []
        summary = asyncio.run(_engine().run(_traces(2, seen)))
        assert len(summary.results) == 2
        assert seen == [frozen, frozen]
        assert gc.get_freeze_count() == frozen
    finally:
        gc.unfreeze()
