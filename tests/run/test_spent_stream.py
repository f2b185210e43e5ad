"""The end of ``score`` folds the run's rows as they stream from the store, keeping none.

Regression (s6-scoremem, issue 15's memory goal): ``_finish`` loaded every result row of the
run (``load_results``: 42k rows with their reasons, ~140 MiB at a 1 GB input) to print the
usage tables and the per-unit atom lines, so a real ``score``'s peak grew with the input
(0.225 of the file's growth from 91 to 915 MiB; the goal is < 0.15). The rows now stream from
``results.db`` into tallies: same figures, same lines, memory of the groups only.
"""

from __future__ import annotations

import random
import tracemalloc
from pathlib import Path

from agent_eval._costs import JudgeUsageGroups, PriceTable, judge_usage, stage_usage
from agent_eval._result import Atom, MetricResult
from agent_eval.cli._score_cmds import _Spent, unit_lines
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._store import ResultStore, iter_results, load_results, load_superseded
from agent_eval.run._usage import RunUsage, UsageTally, run_usage, usage_of


def _row(
    conversation: str,
    *,
    metric: str = "goal_accuracy@1",
    attempts: int = 2,
    tokens: tuple[int, int] = (100, 10),
    status: str = "ok",
    error_type: str | None = None,
    usage_known: bool = True,
    estimate: tuple[int, int] | None = None,
    details: dict[str, object] | None = None,
    atoms: tuple[Atom, ...] | None = None,
    score: float | None = 1.0,
    reason: str | None = None,
) -> MetricResult:
    return MetricResult.model_validate(
        {
            "run_id": "r",
            "conversation_id": conversation,
            "metric": metric,
            "formatter": "transcript@1",
            "formatter_fingerprint": "f" * 64,
            "prompt_sha256": "p" * 64,
            "judge_model": "gpt-4o-mini",
            "status": status,
            "score": score if status == "ok" else None,
            "error_type": error_type,
            "input_tokens": tokens[0],
            "output_tokens": tokens[1],
            "usage_known": usage_known,
            "estimated_input_tokens": estimate[0] if estimate else None,
            "estimated_output_tokens": estimate[1] if estimate else None,
            "attempts": attempts,
            "judge_calls": 2,
            "cached_calls": 1,
            "details": details or {},
            "atoms": atoms,
            "reason": reason,
            "started_at": "2026-01-01T00:00:00Z",
        }
    )


def _stages(attempts: int, tokens_in: int, tokens_out: int) -> dict[str, object]:
    usage = {"calls": 1, "attempts": attempts, "input_tokens": tokens_in}
    return {"stages": {"decompose": usage | {"output_tokens": tokens_out}, "verify": "n/a"}}


def test_usage_tally_counts_rows_replaced_rows_estimates_and_interrupts() -> None:
    rows = [
        _row("a"),
        _row("b", usage_known=False, tokens=(5, 1), estimate=(80, 8)),
        _row(
            "c",
            status="skipped",
            error_type=INTERRUPTED_SKIP,
            attempts=3,
            details={INTERRUPTED_SKIP: {"unanswered": 2}},
        ),
    ]
    replaced = [_row("a", attempts=1, tokens=(40, 4))]
    tally = UsageTally()
    for row in reversed(rows):  # any order
        tally.add(row)
    tally.add(replaced[0], replaced=True)
    expected = RunUsage(
        rows=3,
        replaced_rows=1,
        judge_requests=2 + 2 + 3 + 1,
        judge_input_tokens=100 + 80 + 100 + 40,
        judge_output_tokens=10 + 8 + 10 + 4,
        estimated_rows=1,
        interrupted_rows=1,
        interrupted_requests=3,
        unanswered_requests=2,
    )
    assert tally.usage() == expected
    assert usage_of(iter(rows), iter(replaced)) == expected  # iterators: consumed once


def test_usage_groups_in_any_order_give_the_same_lines() -> None:
    rows = [_row(f"c{i}", details=_stages(i % 3, 10 * i, i)) for i in range(30)]
    rows += [_row(f"d{i}", metric="faithfulness@1", tokens=(i, 1)) for i in range(5)]
    replaced = [_row("c1", details=_stages(1, 7, 1)), _row("d1", metric="faithfulness@1")]
    lines = judge_usage(rows, PriceTable(), replaced)
    stages = stage_usage(rows, PriceTable(), replaced)
    shuffled = random.Random(7).sample(rows, len(rows))
    for by_stage, expected in ((False, lines), (True, stages)):
        groups = JudgeUsageGroups(by_stage=by_stage)
        groups.add(replaced[1], replaced=True)
        for row in shuffled:
            groups.add(row)
        groups.add(replaced[0], replaced=True)
        assert groups.lines(PriceTable()) == expected
    goal = next(line for line in lines if line.key[0] == "goal_accuracy@1")
    assert (goal.rows, goal.replaced_rows, goal.input_tokens) == (31, 1, 3100)
    (decompose,) = stages  # "verify" is not a dict of counts: no line
    assert decompose.key == ("goal_accuracy@1", "decompose", "gpt-4o-mini")
    assert (decompose.rows, decompose.replaced_rows) == (31, 1)
    assert decompose.input_tokens == sum(10 * i for i in range(30)) + 7
    assert decompose.calls == sum(i % 3 for i in range(30)) + 1


def _atoms(passed: int, failed: int) -> tuple[Atom, ...]:
    atoms = [Atom(text=f"ok {i}", label="1", passed=True) for i in range(passed)]
    return (*atoms, *(Atom(text=f"bad {i}", label="0", passed=False) for i in range(failed)))


def test_unit_lines_keep_the_lowest_units_in_order_ties_by_key() -> None:
    rows = [
        _row(f"c{i:02d}", score=[0.5, 0.25, 0.5][i % 3], atoms=_atoms(1, 1 + i % 3 // 2))
        for i in range(30)
    ]
    rows.append(_row("all", score=1.0, atoms=_atoms(2, 0)))
    rows.append(_row("none", atoms=None))
    shuffled = random.Random(3).sample(rows, len(rows))
    text = unit_lines(shuffled, limit=4)
    # the 10 rows scoring 0.25 are c01, c04, ..., c28 (by subject); the first four are shown
    assert text.splitlines() == [
        "units with every atom passed: goal_accuracy@1 1 of 31",
        "  goal_accuracy@1 c01: 1 of 2 passed; first failing (0): bad 0",
        "  goal_accuracy@1 c04: 1 of 2 passed; first failing (0): bad 0",
        "  goal_accuracy@1 c07: 1 of 2 passed; first failing (0): bad 0",
        "  goal_accuracy@1 c10: 1 of 2 passed; first failing (0): bad 0",
        "  ... and 26 more (see results.jsonl)",
    ]
    assert unit_lines(rows, limit=4) == text
    assert unit_lines([_row("x")]) == ""


def _store(directory: Path, n: int) -> None:
    reason = "a judge's reason, as long as real ones are. " * 40  # ~1.8 KB per row
    with ResultStore(directory) as store:
        for i in range(n):
            store.add(_row(f"c{i:05d}", reason=reason, details=_stages(1, i, 1)))
        store.add(_row("c00001", attempts=5, details=_stages(2, 1, 1)))  # replaces a row


def _peak(work: object) -> int:
    tracemalloc.start()
    try:
        tracemalloc.reset_peak()
        kept = work() if callable(work) else None
        peak = tracemalloc.get_traced_memory()[1]
        del kept
        return peak
    finally:
        tracemalloc.stop()


def test_the_spend_of_a_run_streams_its_rows_and_keeps_none(tmp_path: Path) -> None:
    n = 3000
    _store(tmp_path, n)
    spent = _Spent(tmp_path, "r")
    rows, replaced = load_results(tmp_path, "r"), load_superseded(tmp_path, "r")
    assert len(rows) == n and len(replaced) == 1
    assert list(iter_results(tmp_path, "r")) == rows
    assert list(iter_results(tmp_path, "r", superseded=True)) == replaced
    assert spent.run_total("goal_accuracy@1") == usage_of(rows, replaced)
    assert spent.run_total("other@1") == RunUsage()
    assert run_usage(tmp_path, "r") == run_usage(tmp_path, "r", "goal_accuracy@1")
    assert run_usage(tmp_path, "r") == usage_of(rows, replaced)
    assert run_usage(tmp_path, "r", "other@1") == RunUsage()
    assert spent.judge.lines(PriceTable()) == judge_usage(rows, PriceTable(), replaced)
    assert spent.stages.lines(PriceTable()) == stage_usage(rows, PriceTable(), replaced)
    # memory: the rows loaded as a list (what _finish did) against the streamed tallies
    held = _peak(lambda: load_results(tmp_path, "r"))
    streamed = _peak(lambda: _Spent(tmp_path, "r"))
    assert held > n * 2000  # the rows with their reasons: > 2 KB each
    assert streamed < held / 8, (streamed, held)  # measured: 1/12
