"""Parity through the real front doors: the same spans scored by ``agent-eval score`` (the
console command's app), ``agent_eval.score(out=...)``, the pytest plugin in a real pytest
session (pytester, ``--agent-eval-out DIR``) and a started ``agent-eval serve`` receiving them
over HTTP from the OTel SDK's OTLP/HTTP exporter leave run directories with the same files and
the same rows (run ids and times aside), and the same conversations and renderings."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

import agent_eval
from agent_eval.cli import app
from agent_eval.judges import OpenAIJudge
from agent_eval.testing import FakeModelServer

from . import parity_agent
from .goal_script import script_goal_judge

pytest_plugins = ("pytester",)

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
VARY = {"run_id", "started_at", "latency_ms"}
"""What differs between two runs of the same inputs: the run, the clock."""
CLI = "from agent_eval.cli import main; main()"
N = len(parity_agent.CONVERSATIONS)

INNER_CONFTEST = """
from opentelemetry import trace
from parity_agent import new_provider

trace.set_tracer_provider(new_provider())  # before the plugin's collector: fixed ids
"""
INNER_TEST = """
from opentelemetry import trace
from parity_agent import CONVERSATIONS, SCOPE, run_all


def test_parity(agent_spans):
    run_all(trace.get_tracer(SCOPE))
    results = agent_spans.score()
    assert len(results) == len(CONVERSATIONS)
"""


def _spans_file(path: Path) -> Path:
    """The agent's spans as one OTLP/protobuf request, encoded by the SDK's own encoder."""
    memory = InMemorySpanExporter()
    provider = parity_agent.new_provider()
    provider.add_span_processor(SimpleSpanProcessor(memory))
    parity_agent.run_all(provider.get_tracer(parity_agent.SCOPE))
    provider.shutdown()
    path.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    return path


def _plugin(pytester: pytest.Pytester, base_url: str, out: Path) -> Path:
    pytester.makepyfile(
        parity_agent=Path(parity_agent.__file__).read_text(encoding="utf-8"),
        conftest=INNER_CONFTEST,
        test_parity=INNER_TEST,
    )
    pytester.makeini(f"[pytest]\nagent_eval_judge = fake-model\nagent_eval_base_url = {base_url}\n")
    result = pytester.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:asyncio", "--agent-eval-out", str(out)
    )
    result.assert_outcomes(passed=1)
    [directory] = [p for p in out.iterdir() if p.is_dir()]
    return directory


def _banner_port(process: subprocess.Popen[str]) -> int:
    assert process.stderr is not None
    lines = []
    for line in process.stderr:
        lines.append(line)
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if found:
            return int(found.group(1))
    raise AssertionError("serve did not start:\n" + "".join(lines))


def _serve(base_url: str, out: Path, cwd: Path) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    argv = [sys.executable, "-c", CLI, "serve", "--port", "0", "--idle", "0.3"]
    argv += ["--after-root", "0.1", "--judge", "fake-model", "--base-url", base_url]
    argv += ["--out", str(out), "--no-cache"]
    process = subprocess.Popen(
        argv, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=cwd
    )
    try:
        url = f"http://127.0.0.1:{_banner_port(process)}"
        provider = parity_agent.new_provider()
        provider.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{url}/v1/traces")))
        parity_agent.run_all(provider.get_tracer(parity_agent.SCOPE))
        provider.shutdown()
        deadline = time.monotonic() + 60
        while sum(requests.get(f"{url}/healthz", timeout=10).json()["results"].values()) < N:
            assert time.monotonic() < deadline, "serve did not score every conversation"
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        _, stderr = process.communicate(timeout=60)
    finally:
        if process.poll() is None:
            process.kill()
    assert process.returncode == 0, stderr


def _rows(directory: Path) -> list[dict[str, Any]]:
    rows = [r.model_dump(mode="json", exclude=VARY) for r in agent_eval.load_results(directory)]
    return sorted(rows, key=lambda r: (r["conversation_id"], r["unit_id"]))


def _files(directory: Path) -> set[str]:
    return {p.name for p in directory.iterdir() if not p.name.startswith(".")}


def _conversations(directory: Path) -> tuple[list[dict[str, Any]], set[str]]:
    """The stored conversations without their source, and the containers they came from."""
    rows = [json.loads(line) for line in _lines(directory / "conversations.jsonl")]
    sources = {row.pop("source")["container"] for row in rows}
    return sorted(rows, key=lambda r: r["conversation_id"]), sources


def _lines(path: Path) -> list[str]:
    return sorted(path.read_text(encoding="utf-8").splitlines())


def test_score_api_plugin_session_and_http_serve_write_the_same_run_directory(
    fake_server: FakeModelServer,
    pytester: pytest.Pytester,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    script_goal_judge(fake_server)
    monkeypatch.setenv("OPENAI_API_KEY", ENV["OPENAI_API_KEY"])
    spans = _spans_file(tmp_path / "spans.pb")
    cli_dir, api_dir, serve_dir = tmp_path / "cli", tmp_path / "api", tmp_path / "serve"

    common = ["--judge", "fake-model", "--base-url", fake_server.base_url, "--no-cache"]
    done = CliRunner().invoke(app, ["score", str(spans), "--out", str(cli_dir), *common], env=ENV)
    assert done.exit_code == 0, done.output

    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-test")
    summary = agent_eval.score(list(agent_eval.ingest([spans])), judge=judge, out=api_dir)
    assert summary.scored == N

    plugin_dir = _plugin(pytester, fake_server.base_url, tmp_path / "plugin")
    _serve(fake_server.base_url, serve_dir, tmp_path)

    files = _files(cli_dir)
    assert {"results.db", "results.jsonl", "conversations.jsonl", "renderings.jsonl"} <= files
    assert _files(api_dir) == files == _files(plugin_dir) == _files(serve_dir)
    rows = _rows(cli_dir)
    assert [r["verdict"] for r in rows] == ["1", "0", "1", "0"]
    assert _rows(api_dir) == rows == _rows(plugin_dir) == _rows(serve_dir)
    renderings = _lines(cli_dir / "renderings.jsonl")
    assert len(renderings) == N
    for directory in (api_dir, plugin_dir, serve_dir):
        assert _lines(directory / "renderings.jsonl") == renderings, directory.name
    # the conversations are the same but for where their spans came from
    conversations, sources = _conversations(cli_dir)
    assert sources == {"otlp-proto"}
    assert _conversations(api_dir) == (conversations, {"otlp-proto"})
    assert _conversations(plugin_dir) == (conversations, {"otel-sdk"})
    assert _conversations(serve_dir) == (conversations, {"otlp-http"})
