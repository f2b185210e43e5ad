"""RunSummary.nothing_scored: the one line that explains a run in which nothing was scored."""

from __future__ import annotations

from collections import Counter

from agent_eval.run._summary import RunSummary


def summary(**counts: object) -> RunSummary:
    return RunSummary(run_id="r", metric="m@1", formatter="f@1", judge_model="j", **counts)  # type: ignore[arg-type]


def test_none_when_something_was_scored_or_nothing_came_in() -> None:
    assert summary(input=3, scored=1, errored=2).nothing_scored() is None
    assert summary().nothing_scored() is None


def test_mixed_errors_and_skips_name_each_dominant_reason() -> None:
    line = summary(
        input=5,
        errored=3,
        error_types=Counter(judge_unavailable=2, invalid_judge_output=1),
        skipped=2,
        skip_reasons=Counter(missing_reference=2),
    ).nothing_scored()
    assert line == (
        "nothing was scored: 3 errored (mostly judge_unavailable: 2 of 3) and "
        "2 were skipped (mostly missing_reference: 2 of 2)"
    )
