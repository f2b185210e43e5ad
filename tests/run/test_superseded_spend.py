"""Rows replaced by a later invocation of the run: both files agree, and their spend still counts.

Regression (trial5 #3): a run stopped by ``--max-judge-tokens`` (every unit skipped: budget),
then ``--resume``d, left ``results.jsonl`` with twice the rows of ``results.db`` (its readers
took the last line per key, which was documented nowhere in the README), and the tokens the
first invocation spent on the skipped units were gone from ``results.db``, ``report`` and
``runs show``: the run's judge spend was under-reported.
"""

from __future__ import annotations

import json
import re
import sqlite3
from collections.abc import Callable
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval.cli import app
from agent_eval.run._store import ResultStore, load_results, load_superseded, result_key
from agent_eval.testing import FakeModelServer

from .goal_script import script_goal_judge, trace

runner = CliRunner()
N = 6
pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def _score(server: FakeModelServer, path: Path, out: Path, *extra: str) -> tuple[int, str]:
    result = runner.invoke(
        app,
        ["score", str(path), "--judge", "fake-model", "--base-url", server.base_url,
         "--out", str(out), *extra],
    )  # fmt: skip
    return result.exit_code, result.stdout + result.stderr


def test_resume_after_a_budget_stop_keeps_the_first_invocations_spend(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)  # stage 1 reports 100 in / 20 out, stage 2 50 / 10
    traces = [trace(f"c{i}", done=i % 2 == 0, extra=f"conv-c{i}") for i in range(N)]
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    out = tmp_path / "run"
    # a stage-1 request is planned at 513 tokens: one fits in 1000, a second one in flight
    # beside it does not, and that refusal stops the run before the first unit's stage 2
    code, text = _score(fake_server, path, out, "--max-judge-tokens", "1000", "--concurrency", "2")
    assert code == 4, text
    first = load_results(out)
    assert [r.status for r in first] == ["skipped"] * N
    assert len(fake_server.requests) == 1  # one unit's stage 1, then the stop
    assert (sum(r.input_tokens for r in first), sum(r.output_tokens for r in first)) == (100, 20)

    code, text = _score(fake_server, path, out, "--resume", str(out))
    assert code == 0, text
    # the resume sends stage 1 of the 5 other units (the first one's comes from the
    # judge-call cache) and 2 distinct stage-2 requests (goal reached / nothing done)
    stages = sorted(r.schema_name for r in fake_server.requests)
    assert stages == ["GoalAndOutcome"] * N + ["OutcomeComparison"] * 2
    spent_in, spent_out = N * 100 + 2 * 50, N * 20 + 2 * 10  # every request the server answered
    assert (spent_in, spent_out) == (700, 140)

    rows = load_results(out)
    assert [r.status for r in rows] == ["ok"] * N
    resumed_in, resumed_out = sum(r.input_tokens for r in rows), sum(r.output_tokens for r in rows)
    assert (resumed_in, resumed_out) == (600, 120)

    # (a) results.jsonl is an append-only log; its readers take the last line per key
    jsonl = out / "results.jsonl"
    assert len(jsonl.read_text().splitlines()) == 2 * N
    assert load_results(jsonl) == rows
    # (b) the replaced rows are kept, in results.db and (as earlier lines) in results.jsonl
    replaced = load_superseded(out)
    assert sorted(map(result_key, replaced)) == sorted(map(result_key, first))
    assert sorted(replaced, key=result_key) == first
    assert sorted(load_superseded(jsonl), key=result_key) == first
    with ResultStore(out) as store:
        assert sorted(store.superseded(rows[0].run_id), key=result_key) == first

    report = runner.invoke(app, ["report", str(out), "--html", str(tmp_path / "r.html")])
    assert report.exit_code == 0, report.output
    html = (tmp_path / "r.html").read_text()
    tokens = re.search(r"Judge tokens in / out</th><td[^>]*>([^<]*)<", html)
    assert tokens is not None and tokens.group(1).strip() == f"{spent_in} / {spent_out}"
    assert f"all {N} rows and the {N} they replaced" in html
    assert re.search(rf"Rows replaced by a later invocation</th><td[^>]*>{N} ", html)

    shown = runner.invoke(app, ["runs", "show", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    usage = json.loads(shown.stdout)["usage"]
    assert usage == {
        "rows": N,
        "status": {"ok": N},
        "replaced_rows": N,
        "judge_requests": 1 + 7,
        "judge_input_tokens": spent_in,
        "judge_output_tokens": spent_out,
        "estimated_rows": 0,
        "interrupted": {"rows": 0, "requests": 0, "unanswered": 0},  # none here
    }
    table = runner.invoke(app, ["runs", "show", str(out)])
    assert f"usage.judge_input_tokens: {spent_in}\n" in table.stdout
    assert f"usage.replaced_rows: {N}\n" in table.stdout


def test_a_key_written_again_keeps_the_row_it_replaced_in_both_files(
    make_result: Callable[..., MetricResult], tmp_path: Path
) -> None:
    # --retry-errors: an error row (its 1000 / 50 tokens paid), retried twice
    rows = [
        make_result("c1", None),
        make_result("c1", None, input_tokens=700, output_tokens=30),
        make_result("c1", "1", input_tokens=400, output_tokens=20),
        make_result("c2", "0", input_tokens=10, output_tokens=1),
    ]
    with ResultStore(tmp_path, flush_rows=1) as store:
        for row in rows:
            store.add(row)
        assert store.results() == [rows[2], rows[3]]
        assert store.superseded() == rows[:2]
        assert store.superseded("another-run") == []
    assert load_superseded(tmp_path) == rows[:2]
    assert load_superseded(tmp_path / "results.jsonl") == rows[:2]
    assert load_results(tmp_path / "results.jsonl") == load_results(tmp_path) == rows[2:]
    with ResultStore(tmp_path) as store:  # reopening copies nothing twice
        assert store.superseded() == rows[:2] and store.repaired == 0


def test_a_store_written_before_the_table_existed_has_no_replaced_rows(tmp_path: Path) -> None:
    (tmp_path / "results.jsonl").write_text("")
    with sqlite3.connect(tmp_path / "results.db") as db:
        db.execute("CREATE TABLE results (run_id TEXT)")
    assert load_superseded(tmp_path / "results.db") == []
