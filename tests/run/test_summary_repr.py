"""``repr(RunSummary)`` leaves its result rows out (issue 15, a cached re-run's repeated work).

Regression: on Python 3.11 ``asyncio.run`` formats its main task, and so the list of summaries
the scoring coroutine returns, with ``%r`` as it ends; each summary's repr printed every result
row, ~33 us per row twice per run (about 65 ms of a 1,000-conversation re-run).
"""

from __future__ import annotations

from collections.abc import Callable

from agent_eval._result import MetricResult
from agent_eval.run._summary import RunSummary


def test_repr_shows_the_counts_but_not_the_rows(make_result: Callable[..., MetricResult]) -> None:
    summary = RunSummary(run_id="run-1", metric="goal_accuracy@1", formatter="f@1", judge_model="m")
    for n in range(50):
        summary.add(make_result(conversation_id=f"conversation-{n}", verdict="1"))
    text = repr(summary)
    assert len(summary.results) == 50
    assert "scored=50" in text and "run_id='run-1'" in text
    assert "conversation-" not in text and "results" not in text
