"""An interrupted ``score`` counts what it sent, says what it kept, and ``--resume`` adds up.

trial6 #2-#5 and s4's "not done" (#7): the calls in flight at SIGTERM were in no total (56
requests received, 54 counted); ``score --json`` printed no document; nothing said how many
results were kept or to ``--resume``; the resumed invocation's summary counted the earlier
invocation's requests as its own; the usage table counted only current rows, so after a
resume its lines did not add up to the run's total.

A real ``agent-eval score`` subprocess scores 6 conversations that finish and 4 whose stage 2
hangs; once the 4 hanging requests reached the fake server it gets SIGTERM. Every figure is
checked against the server's own count of requests.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from agent_eval.cli._json_output import SCHEMA_VERSION, InterruptedPayload
from agent_eval.testing import FakeModelServer, Structured, Usage

from ..run.goal_script import script_goal_judge, trace

SLOW = "#slow#"
MAIN = (  # as in test_interrupt: the child gets the SIGINT handler a terminal gives
    "import signal; signal.signal(signal.SIGINT, signal.default_int_handler); "
    "from agent_eval.cli import main; main()"
)


def _hang_stage_2_once(server: FakeModelServer) -> None:
    """The slow traces' first stage-2 requests hang; later ones (the resume's) answer."""
    inferred = {"user_goal": "get the thing done", "end_state": f"goal reached {SLOW}"}
    server.add_rule(
        Structured(inferred, usage=Usage(100, 20)), schema="GoalAndOutcome", contains=SLOW
    )
    late = Structured({"reason": "late", "verdict": "1"})
    server.add_rule(late, schema="OutcomeComparison", contains=SLOW, latency=60, times=4)
    script_goal_judge(server)


def _agent_eval(server: FakeModelServer, *args: str) -> list[str]:
    return [sys.executable, "-c", MAIN, *args, "--judge", "fake-model", "--base-url",
            server.base_url, "--api-key-env", "INTERRUPT_TEST_KEY", "--no-cache",
            "--concurrency", "4"]  # fmt: skip


def _json(stdout: str) -> dict[str, Any]:
    document: dict[str, Any] = json.loads(stdout)  # stdout: exactly one document
    return document


def _runs_show(out: Path) -> dict[str, Any]:
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "runs", "show", str(out), "--json"],
        capture_output=True, text=True, check=True, timeout=120,
    )  # fmt: skip
    usage: dict[str, Any] = _json(done.stdout)["usage"]
    return usage


def _hanging(server: FakeModelServer) -> int:
    return sum(r.schema_name == "OutcomeComparison" and SLOW in r.text for r in server.requests)


def _interrupted(
    server: FakeModelServer, args: list[str], hanging: int, sig: signal.Signals
) -> tuple[int, str, str]:
    """Run ``agent-eval ARGS``, send ``sig`` once ``hanging`` stage-2 calls hang; the outcome.

    Returns the exit code, stdout and stderr (the server stays up: its count can be read).
    """
    env = {**os.environ, "INTERRUPT_TEST_KEY": "sk-interrupt"}
    process = subprocess.Popen(
        _agent_eval(server, *args),
        env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )  # fmt: skip
    deadline = time.monotonic() + 90
    while _hanging(server) < hanging and process.poll() is None and time.monotonic() < deadline:
        time.sleep(0.01)
    process.send_signal(sig)
    stdout, stderr = process.communicate(timeout=90)
    return process.returncode, stdout, stderr


def test_an_interrupted_score_counts_every_request_and_resume_adds_up(tmp_path: Path) -> None:
    inputs = tmp_path / "traces.jsonl"
    traces = [trace(f"fast{i}", done=True) for i in range(6)]
    traces += [trace(f"slow{i}", done=True, extra=SLOW) for i in range(4)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    env = {**os.environ, "INTERRUPT_TEST_KEY": "sk-interrupt"}
    out = tmp_path / "run"
    score = ["score", str(inputs), "--out", str(out)]
    with FakeModelServer() as server:
        _hang_stage_2_once(server)
        returncode, stdout, stderr = _interrupted(server, [*score, "--json"], 4, signal.SIGTERM)
        first = len(server.requests)
        assert returncode == 143, stderr
        assert first == 6 * 2 + 4 * 2  # the 4 hanging stage-2 requests were received

        # --json: one document, the error document's keys and the counts so far (#3 of trial6)
        document = _json(stdout)
        assert (document.pop("schema_version"), document.pop("command")) == (
            SCHEMA_VERSION,
            "score",
        )
        stopped = InterruptedPayload.model_validate(document)
        assert stopped.exit_code == 143 and stopped.error.type == "Interrupted"
        assert stopped.out == str(out)
        (metric,) = stopped.metrics
        assert (metric.units, metric.scored, metric.skipped, metric.errored) == (10, 6, 4, 0)
        assert metric.skip_reasons == {"interrupted": 4}
        assert metric.judge_requests == first  # every request sent, the cut-off ones too
        assert metric.run_total is not None and metric.run_total["judge_requests"] == first
        assert metric.run_total["interrupted"] == {"rows": 4, "requests": 8, "unanswered": 4}

        # stderr: what was kept and how to continue (#4 of trial6), the same line as the JSON
        said = (
            f"stopped by SIGTERM: 6 result(s) kept in {out} (6 scored), and 4 unit(s) cut short "
            "kept as skipped (interrupted; the 8 judge request(s) they sent are counted); "
            f"continue with --resume {out}"
        )
        assert stopped.error.message == said
        assert said in " ".join(stderr.split())
        assert _runs_show(out)["judge_requests"] == first  # runs show adds up with the server

        resumed = subprocess.run(
            _agent_eval(server, *score, "--resume", str(out), "--json"),
            env=env, capture_output=True, text=True, check=False, timeout=120,
        )  # fmt: skip
        assert resumed.returncode == 0, resumed.stderr
        total = len(server.requests)
        assert total - first == 4 * 2  # the 4 cut-short units judged again from the start
        (again,) = _json(resumed.stdout)["metrics"]
        assert (again["units"], again["scored"], again["resumed"]) == (10, 10, 6)
        assert again["judge_requests"] == again["judge_calls"] == total - first  # its own (#5)
        assert again["input_tokens"] == 4 * (100 + 50)  # stage 1 and 2 of the 4 only
        assert again["run_total"]["judge_requests"] == total  # the run's, apart
        assert again["run_total"]["replaced_rows"] == 4
        assert _runs_show(out)["judge_requests"] == total

        finished = subprocess.run(  # nothing left: the terminal tables, labelled
            _agent_eval(server, *score, "--resume", str(out)),
            env={**env, "COLUMNS": "200"}, capture_output=True, text=True, check=False,
            timeout=120,
        )  # fmt: skip
        assert finished.returncode == 0, finished.stderr
        assert len(server.requests) == total
    lines = finished.stdout.splitlines()
    assert any("judge requests (this invocation)" in x and "│ 0" in x for x in lines), lines
    assert any(
        "run total (all invocations)" in x and f"{total} requests" in x and "4 they replaced" in x
        for x in lines
    ), lines
    # the usage table counts the replaced rows too, so it adds up to the run total (#7)
    (judge,) = [x for x in lines if "goal_accuracy@2" in x and "fake-model" in x]
    cells = [c.strip() for c in judge.strip("│ ").split("│")]
    assert cells[4:6] == ["14 (4 replaced)", str(total)], cells


def test_any_other_json_command_stopped_by_a_signal_prints_the_interrupted_document(
    tmp_path: Path,
) -> None:
    inputs = tmp_path / "traces.jsonl"
    inputs.write_text(trace("slow0", done=True, extra=SLOW).model_dump_json() + "\n")
    args = ["stability", str(inputs), "--repeats", "2", "--out", str(tmp_path / "st"), "--json"]
    with FakeModelServer() as server:
        _hang_stage_2_once(server)
        returncode, stdout, stderr = _interrupted(server, args, 1, signal.SIGINT)
    assert returncode == 130, stderr
    assert len(server.requests) == 2  # stage 1, then stage 2 hanging in repeat 0
    out = tmp_path / "st"
    said = (
        f"interrupted by Ctrl-C (SIGINT): 0 result(s) kept in {out}, and 1 unit(s) cut short "
        "kept as skipped (interrupted; the 2 judge request(s) they sent are counted); judge "
        "usage: 2 requests, "
    )
    document = _json(stdout)
    message = document["error"]["message"]  # what was kept and spent, as on stderr
    assert document == {
        "schema_version": SCHEMA_VERSION,
        "command": "stability",
        "exit_code": 130,
        "error": {"message": message, "type": "Interrupted"},
    }
    assert message.startswith(said) and message.endswith(f"; agent-eval runs show {out}")
    assert message in " ".join(stderr.split())
    usage = _runs_show(out)  # s5-fixes gap: the cut-short unit's spend is in the run record
    assert usage["judge_requests"] == 2
    assert usage["interrupted"] == {"rows": 1, "requests": 2, "unanswered": 1}


def test_an_interrupted_compare_counts_the_requests_of_the_units_cut_short(
    tmp_path: Path,
) -> None:
    """s5-fixes gap: ``compare`` stopped by SIGTERM kept no trace of the calls in flight; the
    run's usage (``runs show``) and the closing line now add up to the server's count."""
    inputs = tmp_path / "traces.jsonl"
    traces = [trace(f"fast{i}", done=True) for i in range(3)]
    traces += [trace(f"slow{i}", done=True, extra=SLOW) for i in range(2)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    out = tmp_path / "cmp"
    args = ["compare", str(inputs), "--formatters", "ragas-pretty@1,json@1", "--out", str(out)]
    with FakeModelServer() as server:
        _hang_stage_2_once(server)
        returncode, _, stderr = _interrupted(server, args, 2, signal.SIGTERM)
        received = len(server.requests)
    assert returncode == 143, stderr
    assert received == 3 * 2 + 2 * 2  # the first formatter's: the 2 hanging ones included
    usage = _runs_show(out)
    assert usage["judge_requests"] == received
    assert usage["interrupted"] == {"rows": 2, "requests": 4, "unanswered": 2}
    said = (
        f"stopped by SIGTERM: 3 result(s) kept in {out} (3 scored), and 2 unit(s) cut short "
        "kept as skipped (interrupted; the 4 judge request(s) they sent are counted); judge "
        f"usage: {received} requests, "
    )
    assert said in " ".join(stderr.split())
    assert f"agent-eval runs show {out}" in " ".join(stderr.split())
