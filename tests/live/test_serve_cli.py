"""``agent-eval serve`` as a process: it listens, scores what an SDK exporter sends, writes the
evaluation events file, and stops cleanly on SIGTERM with a summary."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import orjson
import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.live._receiver import UNSCORED_NAME, UNSCORED_SPEND_KEY
from agent_eval.otel._events import EVENTS_FILE_NAME
from agent_eval.run._artifacts import read_conversations, read_renderings
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer, Hang

from ..run.goal_script import script_goal_judge
from .agent import DONE, provider, run_agent

CLI = "from agent_eval.cli import main; main()"


def _banner_port(process: subprocess.Popen[str]) -> int:
    assert process.stderr is not None
    deadline = time.monotonic() + 60
    lines = []
    while time.monotonic() < deadline:
        line = process.stderr.readline()
        lines.append(line)
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
        if not line and process.poll() is not None:
            break
    raise AssertionError("serve did not start:\n" + "".join(lines))


def test_serve_scores_sdk_spans_and_stops_cleanly_on_sigterm(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    process = subprocess.Popen(
        [
            sys.executable,
            "-c",
            CLI,
            "serve",
            "--port",
            "0",
            "--idle",
            "0.5",
            "--after-root",
            "0.2",
            "--judge",
            "fake-model",
            "--base-url",
            fake_server.base_url,
            "--out",
            str(out),
            "--no-cache",
            "--events-file",
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        port = _banner_port(process)
        health = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
        assert health["status"] == "ok"
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        tracer = sdk.get_tracer("agent")
        run_agent(tracer, "cli-done", [("go", f"gone {DONE}")])
        sdk.shutdown()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
            if health["results"].get("ok"):
                break
            time.sleep(0.1)
        # one more conversation whose root is still open when the signal comes: the shutdown
        # closes and scores it
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces", timeout=1))
        with sdk.get_tracer("agent").start_as_current_span("open root"):
            run_agent(sdk.get_tracer("agent"), "cli-held", [("hi", "hello")])
            held = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
            process.send_signal(signal.SIGTERM)
            stdout, stderr = process.communicate(timeout=60)
        assert held["pending_traces"] == 1
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["results"] == {"ok": 2} and summary["unscored"] == 0
    rows = {r.conversation_id: r.verdict for r in load_results(out)}
    assert rows == {"cli-done": "1", "cli-held": "0"}
    # trial7 #2: what the judge saw is kept, as score keeps it, and the command line recorded
    stored = read_conversations(out)
    assert set(stored) == {"cli-done", "cli-held"}
    assert stored["cli-done"].messages[-1].content == f"gone {DONE}"
    renderings = read_renderings(out)
    assert set(renderings) == {("cli-done", "transcript@2"), ("cli-held", "transcript@2")}
    assert DONE in renderings[("cli-done", "transcript@2")]
    with ResultStore(out) as store:
        [run] = store.runs()
    assert run.argv[1:4] == ("serve", "--port", "0") and "--judge" in run.argv
    events = [
        record
        for line in (out / EVENTS_FILE_NAME).read_bytes().splitlines()
        for resource in orjson.loads(line)["resourceLogs"]
        for scope in resource["scopeLogs"]
        for record in scope["logRecords"]
    ]
    assert len(events) == 2
    assert "stopping; scoring what is held" in stderr


def test_serve_without_a_judge_is_a_usage_error(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    done = subprocess.run(
        [sys.executable, "-c", CLI, "serve", "--port", "0"],
        capture_output=True,
        text=True,
        env=env,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    assert done.returncode == 2
    # regression (trial5 #9): the hint was score's ("nothing was scored", "--dry-run shows this
    # plan"), and serve has no --dry-run
    assert "No judge is configured, so serve did not start" in done.stderr
    assert "--base-url http://localhost:11434/v1 --judge qwen2.5:7b-instruct" in done.stderr
    assert "--dry-run" not in done.stderr and "nothing was scored" not in done.stderr
    assert "Traceback" not in done.stderr


def test_serve_scores_several_metrics_on_the_filtered_sample(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Issue 31 part 4: a metric list, --where and --sample, as a process; every conversation
    gets a row per metric (judged or skipped with its reason) and the summary adds up."""
    from agent_eval.live._selection import Selection

    script_goal_judge(fake_server)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    process = subprocess.Popen(
        [
            *(sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.5"),
            *("--after-root", "0.2", "--judge", "fake-model", "--base-url", fake_server.base_url),
            *("--out", str(out), "--no-cache", "--metric", "goal_accuracy,steering"),
            *("--where", "service.name=test-agent", "--where", "env!=dev"),
            *("--sample", "0.5", "--sample-seed", "5"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    ids = [f"conv-{n}" for n in range(8)]
    try:
        port = _banner_port(process)
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        tracer = sdk.get_tracer("agent")
        for n, cid in enumerate(ids):  # conv-0 and conv-1 come from dev
            run_agent(tracer, cid, [("go", f"gone {DONE}")], {"env": "dev" if n < 2 else "prod"})
        sdk.shutdown()
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            health = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
            tally = health["conversations"]
            if tally["received"] == len(ids) and not tally["pending"]:
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    summary = json.loads(stdout.strip().splitlines()[-1])
    sample = Selection(rate=0.5, seed=5)
    judged = {c for c in ids[2:] if sample.sampled(c)}
    assert 0 < len(judged) < len(ids) - 2  # the seed leaves some of each kind
    assert summary["conversations"] == {
        "received": len(ids),
        "scored": len(judged),
        "errored": 0,
        "skipped": {"filtered_out": 2, "sampled_out": len(ids) - 2 - len(judged)},
        "pending": 0,
        "unscored": 0,
    }
    rows = load_results(out)
    assert len(rows) == 2 * len(ids)  # a row per conversation and metric
    assert {r.conversation_id for r in rows if r.status == "ok"} == judged
    assert {r.metric for r in rows} == {"goal_accuracy@2", "steering@1"}
    assert summary["judge_usage"]["judge_requests"] == len(fake_server.requests)
    with ResultStore(out) as store:
        [run] = store.runs()
    assert run.config["selection"] == [
        "--where service.name=test-agent",
        "--where env!=dev",
        "--sample 0.5 --sample-seed 5",
    ]


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--where", "=dev"], "--where '=dev' is not a condition"),
        (["--sample", "0"], "--sample 0 is not a share in (0, 1]"),
        (["--metric", "goal_accuracy,goal_accuracy"], "--metric names a metric twice"),
    ],
)
def test_a_bad_selection_is_a_usage_error(
    flags: list[str], message: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)
    result = CliRunner().invoke(
        app,
        ["serve", "--port", "0", "--judge", "m", "--base-url", "http://127.0.0.1:9/v1", *flags],
    )
    assert result.exit_code == 2, result.output
    assert message in " ".join(result.output.split())
    assert "listening" not in result.output


def test_a_malformed_metric_spec_gets_a_metric_example() -> None:
    from agent_eval.errors import ConfigError
    from agent_eval.metrics._spec import build_metric

    with pytest.raises(ConfigError, match=r"e\.g\. 'faithfulness@1\[per_statement=true\]'"):
        build_metric("goal accuracy!")


def test_a_shutdown_keeps_the_spend_of_the_judge_calls_it_cuts_short(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """s5-fixes gap: a conversation whose judge call the shutdown cut short went to
    ``unscored.jsonl`` and its request was in no total. The entry now carries it, and the
    closing summary's ``judge_usage`` adds up to the requests the endpoint received."""
    fake_server.add_rule(Hang(60), contains="STUCK")  # tried first: stage 1 never answers
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.3", "--after-root",
         "0.1", "--shutdown-timeout", "0.5", "--judge", "fake-model", "--base-url",
         fake_server.base_url, "--out", str(out), "--no-cache"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        port = _banner_port(process)
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        run_agent(sdk.get_tracer("agent"), "done", [("go", f"gone {DONE}")])
        run_agent(sdk.get_tracer("agent"), "stuck", [("STUCK here", "hm")])
        sdk.shutdown()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:  # "done" scored (2 requests), "stuck" hanging (1)
            health = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
            if health["results"].get("ok") and len(fake_server.requests) == 3:
                break
            time.sleep(0.05)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    received = len(fake_server.requests)
    assert received == 3
    summary = json.loads(stdout.strip().splitlines()[-1])
    assert summary["results"] == {"ok": 1} and summary["unscored"] == 1
    usage = summary["judge_usage"]
    assert usage["judge_requests"] == received
    assert usage["rows"] == 2  # done's row and stuck's cut-short unit (never stored)
    assert usage["interrupted"] == {"rows": 1, "requests": 1, "unanswered": 1}
    assert {r.conversation_id for r in load_results(out)} == {"done"}  # no row for stuck
    (line,) = (out / UNSCORED_NAME).read_bytes().splitlines()
    stuck = AgentTrace.model_validate_json(line)  # still an AgentTrace line score reads
    assert stuck.conversation_id == "stuck"
    spend = stuck.metadata[UNSCORED_SPEND_KEY]
    assert isinstance(spend, dict)
    assert {k: spend[k] for k in ("units", "judge_requests", "unanswered_requests")} == {
        "units": 1,
        "judge_requests": 1,
        "unanswered_requests": 1,
    }
    assert spend["metric"] == "goal_accuracy@2" and spend["tokens_estimated"] is True
    assert spend["judge_input_tokens"] > 0  # the unread reply's request, at its estimate


def test_runs_show_of_a_serve_run_counts_and_lists_the_conversations_left_unscored(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """s6-leftovers "looks wrong": serve keeps no row for a conversation its shutdown cuts
    short, so ``runs show`` of the run missed its requests. It now reads ``unscored.jsonl``:
    the requests add up to the server's, and each unscored conversation is listed with its
    reason (being scored and cut short, or never started) and spend. Serve's "no row" stays."""
    fake_server.add_rule(Hang(60), contains="STUCK")  # tried first: stage 1 never answers
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.3", "--after-root",
         "0.1", "--shutdown-timeout", "0.5", "--judge", "fake-model", "--base-url",
         fake_server.base_url, "--out", str(out), "--no-cache", "--concurrency", "1"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip

    def wait_for(done: Callable[[dict[str, Any]], bool]) -> None:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            if done(requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()):
                return
            time.sleep(0.05)
        raise AssertionError("serve did not get there in 60 s")

    try:
        port = _banner_port(process)
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        run_agent(sdk.get_tracer("agent"), "done", [("go", f"gone {DONE}")])
        sdk.force_flush()
        wait_for(lambda h: h["results"].get("ok") == 1 and len(fake_server.requests) == 2)
        run_agent(sdk.get_tracer("agent"), "stuck", [("STUCK here", "hm")])
        sdk.force_flush()
        wait_for(lambda h: len(fake_server.requests) == 3)  # stuck's stage 1 hangs
        run_agent(sdk.get_tracer("agent"), "queued", [("later", f"ok {DONE}")])
        sdk.shutdown()
        wait_for(lambda h: h["backlog"] == 2)  # one worker: queued waits behind stuck
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    received = len(fake_server.requests)
    assert received == 3
    served = json.loads(stdout.strip().splitlines()[-1])["judge_usage"]
    assert {r.conversation_id for r in load_results(out)} == {"done"}  # no row: the contract
    shown = CliRunner().invoke(app, ["runs", "show", str(out), "--json"])
    assert shown.exit_code == 0, shown.output
    document = json.loads(shown.stdout)
    usage = document["usage"]
    assert usage["judge_requests"] == received == served["judge_requests"]
    assert (usage["rows"], usage["status"]) == (1, {"ok": 1})  # the stored rows
    assert usage["interrupted"] == served["interrupted"] == {
        "rows": 1, "requests": 1, "unanswered": 1,
    }  # fmt: skip
    assert usage["unscored"] == {"conversations": 2, "units": 1, "judge_requests": 1,
                                 "unattributed": 0}  # fmt: skip
    assert usage["rows"] + usage["unscored"]["units"] == served["rows"]
    for key in ("judge_input_tokens", "judge_output_tokens", "estimated_rows"):
        assert usage[key] == served[key], key
    listed = {e["conversation_id"]: e for e in document["unscored"]}
    assert sorted(listed) == ["queued", "stuck"]
    assert {k: listed["stuck"][k] for k in ("reason", "units", "judge_requests",
                                            "unanswered_requests", "revision")} == {
        "reason": "interrupted", "units": 1, "judge_requests": 1, "unanswered_requests": 1,
        "revision": 0,
    }  # fmt: skip
    assert listed["stuck"]["tokens_estimated"] is True and listed["stuck"]["judge_input_tokens"]
    assert {k: listed["queued"][k] for k in ("reason", "units", "judge_requests",
                                             "judge_input_tokens")} == {
        "reason": "not_started", "units": 0, "judge_requests": 0, "judge_input_tokens": 0,
    }  # fmt: skip
    text = CliRunner().invoke(app, ["runs", "show", str(out)], env={"COLUMNS": "200"})
    assert text.exit_code == 0, text.output
    flat = " ".join(text.stdout.split())
    assert "2 conversation(s) left unscored by the shutdown" in flat
    assert "usage.unscored.conversations: 2" in flat and "usage.judge_requests: 3" in flat
    assert "not_started: waiting for the judge" in flat
    assert "interrupted: being scored at shutdown;" in flat


def test_serve_with_judge_free_metrics_only_needs_no_judge(tmp_path: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    out = tmp_path / "out"
    process = subprocess.Popen(
        [
            *(sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.3"),
            *("--after-root", "0.1", "--metric", "steering,loops", "--out", str(out)),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
        cwd=tmp_path,
    )
    try:
        port = _banner_port(process)
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        run_agent(sdk.get_tracer("agent"), "free", [("hi", "hello")])
        sdk.shutdown()
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    rows = load_results(out)
    assert {(r.conversation_id, r.metric, r.judge_model) for r in rows} == {
        ("free", "steering@1", "none"),
        ("free", "loops@1", "none"),
    }
    assert json.loads(stdout.strip().splitlines()[-1])["judge_usage"]["judge_requests"] == 0
