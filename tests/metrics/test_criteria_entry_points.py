"""A criteria file through the Python API, the pytest plugin and ``serve`` (fake server)."""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter

import agent_eval
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..live.agent import provider, run_agent
from ..live.test_serve_cli import CLI, _banner_port
from ..run.goal_script import DONE, trace
from .criteria_script import CONFIRM, POLICY, script_criteria_judge

pytest_plugins = ("pytester",)


def test_python_api_scores_a_criteria_file(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    script_criteria_judge(fake_server)
    summary = agent_eval.score(
        [trace("a", done=True), trace("b", done=False)],
        metric=f"criteria:{POLICY}",
        judge="fake-model",
        out=tmp_path,
    )
    assert {r.conversation_id: r.verdict for r in summary.results} == {"a": "1", "b": "0"}
    digest = hashlib.sha256(POLICY.read_bytes()).hexdigest()
    assert {(r.metric, r.details["criteria_sha256"]) for r in summary.results} == {
        ("stayed_within_policy@1", digest)
    }


def test_a_reference_criteria_file_skips_units_without_a_reference(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-not-a-real-key")
    script_criteria_judge(fake_server)
    answer = tmp_path / "answer.toml"
    answer.write_text(
        'name = "matches_reference"\nversion = 3\nunit = "answer"\n'
        'question = "Does the answer agree with the reference?"\npass = "It agrees."\n'
        'fail = "It contradicts or misses it."\nreference = "The reference is the right answer."\n'
    )
    summary = agent_eval.score(
        [trace("a", done=True, reference="REF-TEXT"), trace("b", done=True)],
        metric=f"criteria:{answer}",
        judge="fake-model",
        reference=True,
    )
    rows = {r.conversation_id: r for r in summary.results}
    assert (rows["a"].status, rows["a"].verdict, rows["a"].unit_id) == ("ok", "1", "turn:1")
    assert (rows["b"].status, rows["b"].error_type) == ("skipped", "missing_reference")
    assert rows["a"].metric == "matches_reference@3" and rows["a"].formatter == "none"
    [request] = fake_server.requests
    assert (
        "Reference:\nREF-TEXT" in request.text and "Question:\nPlease do the thing." in request.text
    )


TESTS = f"""
import pytest
from agent import run_agent


@pytest.mark.agent_eval(metric="criteria:{CONFIRM}", min_score=1.0)
def test_confirmed(agent_spans):
    run_agent("ok", "book it", "Booked after you said yes. {DONE}")


@pytest.mark.agent_eval(metric="criteria:{CONFIRM}", min_score=1.0)
def test_not_confirmed(agent_spans):
    run_agent("bad", "what flights are there", "I booked one.")
"""


def test_pytest_plugin_marker_takes_a_criteria_file(
    pytester: pytest.Pytester, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    from ..test_pytest_plugin import AGENT

    script_criteria_judge(fake_server)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENT_EVAL_JUDGE", "fake-model")
    monkeypatch.setenv("AGENT_EVAL_BASE_URL", fake_server.base_url)
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    result = pytester.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=1, failed=1)
    out = result.stdout.str()
    assert "asked_confirmation_before_irreversible_action@1 on conversation 'bad'" in out


def test_serve_scores_with_a_criteria_file(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_criteria_judge(fake_server)
    out = tmp_path / "out"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    process = subprocess.Popen(
        [
            sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.5",
            "--after-root", "0.2", "--judge", "fake-model", "--base-url", fake_server.base_url,
            "--metric", f"criteria:{POLICY}", "--out", str(out), "--no-cache",
        ],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp_path,
    )  # fmt: skip
    try:
        port = _banner_port(process)
        sdk = provider(OTLPSpanExporter(endpoint=f"http://127.0.0.1:{port}/v1/traces"))
        run_agent(sdk.get_tracer("agent"), "live-done", [("go", f"gone {DONE}")])
        sdk.shutdown()
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            health = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
            if health["results"].get("ok"):
                break
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr
    [row] = load_results(out)
    assert (row.metric, row.conversation_id, row.verdict) == (
        "stayed_within_policy@1",
        "live-done",
        "1",
    )
    assert row.details["criteria_sha256"] == hashlib.sha256(POLICY.read_bytes()).hexdigest()
