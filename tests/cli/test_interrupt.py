"""Ctrl-C and SIGTERM stop a ``score`` run cleanly: every finished result committed, exit 130 / 143.

A real ``agent-eval score`` subprocess against the fake server (50 ms per call, 16 in flight) is
sent the signal once 40 conversations have reached stage 2. The store then holds, in both of its
files, every conversation the judge finished: at least the stage-2 requests the server saw minus
the 16 that can be in flight (a SIGKILL may lose up to a 128-row / 0.2 s batch), and ``--resume``
scores the rest.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace

N = 300
CONCURRENCY = 16
MAIN = (  # a shell without job control (a CI runner's) starts background jobs with SIGINT
    # ignored, and children inherit that: the run gets the Ctrl-C a terminal gives
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from agent_eval.cli import main; main()"
)


def _score(inputs: Path, server: FakeModelServer, out: Path, *extra: str) -> list[str]:
    return [sys.executable, "-c", MAIN, "score", str(inputs), "--judge", "fake-model",
            "--base-url", server.base_url, "--api-key-env", "INTERRUPT_TEST_KEY",
            "--out", str(out), "--concurrency", str(CONCURRENCY), "--no-cache",
            *extra]  # fmt: skip


def _stage_2(server: FakeModelServer) -> int:
    return sum(r.schema_name != "GoalAndOutcome" for r in server.requests)


@pytest.mark.parametrize(("signum", "code"), [(signal.SIGINT, 130), (signal.SIGTERM, 143)])
def test_a_signal_stops_score_cleanly_and_resume_finishes(
    tmp_path: Path, signum: int, code: int
) -> None:
    inputs = tmp_path / "traces.jsonl"
    traces = [trace(f"s{i:03d}", done=i % 2 == 0, extra=f"#{i}#") for i in range(N)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    env = {**os.environ, "INTERRUPT_TEST_KEY": "sk-interrupt"}
    out = tmp_path / "run"
    with FakeModelServer(latency=0.05) as server:
        script_goal_judge(server)
        process = subprocess.Popen(
            _score(inputs, server, out),
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        deadline = time.monotonic() + 60
        while _stage_2(server) < 40 and process.poll() is None and time.monotonic() < deadline:
            time.sleep(0.005)
        process.send_signal(signum)
        _, stderr = process.communicate(timeout=60)
        asked = _stage_2(server)
        assert process.returncode == code, stderr.decode()

        rows = load_results(out)
        assert asked - CONCURRENCY <= len(rows) < N
        assert sorted(r.conversation_id for r in load_results(out / "results.jsonl")) == sorted(
            r.conversation_id for r in rows
        )

        resumed = subprocess.run(
            _score(inputs, server, out, "--resume", rows[0].run_id),
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
    assert resumed.returncode == 0, resumed.stderr
    finished = [r for r in rows if r.error_type != "interrupted"]  # cut short: judged again
    assert f"{len(finished)} already finished" in resumed.stdout
    assert sorted(r.conversation_id for r in load_results(out)) == sorted(
        t.conversation_id for t in traces
    )
