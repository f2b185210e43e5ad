"""A score run killed with SIGKILL part-way, then resumed, ends exactly like an uninterrupted one.

The run is a real ``agent-eval score`` subprocess against the fake server; it is killed once
some results are committed. ``--resume RUN_ID`` then finishes it: no result lost, none
duplicated, and no conversation that had finished is sent to the judge again.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_eval._result import MetricResult
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from .goal_script import script_goal_judge, trace

N = 60
MAIN = "from agent_eval.cli import main; main()"


def _command(inputs: Path, server: FakeModelServer, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", MAIN, "score", str(inputs), "--judge", "fake-model",
            "--base-url", server.base_url, "--api-key-env", "KILL_TEST_KEY", "--out", str(out),
            "--concurrency", "4", "--cache-path", str(out / "judge-cache.db"),
            *extra]  # fmt: skip  # each output its own cache: the baseline's must not answer


def _committed(out: Path) -> int:
    try:
        with sqlite3.connect(out / "results.db", timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM results").fetchone()[0])
    except sqlite3.Error:
        return 0


def _outcome(rows: list[MetricResult]) -> list[tuple[object, ...]]:
    fields = ("conversation_id", "status", "verdict", "score", "reason", "user_goal", "end_state")
    return sorted(tuple(getattr(r, f) for f in fields) for r in rows)


def _stage_1_markers(server: FakeModelServer, since: int = 0) -> list[str]:
    return [
        next(f"#{i}#" for i in range(N) if f"#{i}#" in r.text)
        for r in server.requests[since:]
        if r.schema_name == "GoalAndOutcome"
    ]


@pytest.mark.slow  # three CLI subprocesses: about 20-60 s depending on the machine
def test_sigkill_then_resume_equals_an_uninterrupted_run(tmp_path: Path) -> None:
    inputs = tmp_path / "traces.jsonl"
    traces = [trace(f"k{i:02d}", done=i % 2 == 0, extra=f"#{i}#") for i in range(N)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    env = {**os.environ, "KILL_TEST_KEY": "sk-kill"}
    with FakeModelServer(latency=0.05) as server:
        script_goal_judge(server)
        baseline = subprocess.run(_command(inputs, server, tmp_path / "baseline"), env=env,
                                  capture_output=True, text=True, check=False)  # fmt: skip
        assert baseline.returncode == 0, baseline.stderr
        server.clear()
        script_goal_judge(server)

        out = tmp_path / "killed"
        quiet = {"stdout": subprocess.DEVNULL, "stderr": subprocess.DEVNULL}
        process = subprocess.Popen(_command(inputs, server, out), env=env, **quiet)
        deadline = time.monotonic() + 60
        while _committed(out) < 10 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.02)
        process.send_signal(signal.SIGKILL)
        process.wait()
        finished = {r.conversation_id for r in load_results(out)}
        assert 10 <= len(finished) < N, "killed part-way"
        seen_before = len(server.requests)
        run_id = load_results(out)[0].run_id

        resumed = subprocess.run(_command(inputs, server, out, "--resume", run_id), env=env,
                                 capture_output=True, text=True, check=False)  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        after = _stage_1_markers(server, seen_before)

    rows = load_results(out)
    assert len(rows) == N and {r.run_id for r in rows} == {run_id}
    assert _outcome(rows) == _outcome(load_results(tmp_path / "baseline"))
    assert _outcome(load_results(out / "results.jsonl")) == _outcome(rows)
    finished_markers = {t.messages[0].content.split()[-1] for t in traces
                        if t.conversation_id in finished}  # fmt: skip
    assert not finished_markers & set(after), "a finished conversation was judged again"
    assert len(after) == len(set(after))  # and nothing was asked twice while resuming
    # Rows lost with the last uncommitted batch come back from the judge cache (each answer is
    # committed as it arrives): only a call in flight at the kill (at most --concurrency) is
    # asked again.
    every = _stage_1_markers(server)
    assert set(every) == {f"#{i}#" for i in range(N)}
    assert len(every) - len(set(every)) <= 4
    assert f"{N} + 0 + 0 = {N}" in resumed.stdout
    assert f"{len(finished)} already finished" in resumed.stdout
