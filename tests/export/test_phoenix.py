"""``agent-eval export phoenix`` against a real Phoenix server (``arize-phoenix``), started here
on free loopback ports. Phoenix first receives the agent's traces over OTLP from the SDK; the
same spans are scored with ``agent-eval score``; the annotations are read back with Phoenix's
client.

Phoenix needs openai>=3, which the main package's ``openai<3`` pin excludes, so the server runs
from its own virtualenv: ``.venv-phoenix`` (``.ci/run`` creates it), or the ``phoenix``
executable named by ``AGENT_EVAL_PHOENIX_SERVER``. The test skips when neither exists outside
CI; with ``CI`` set it must run.
"""

from __future__ import annotations

import os
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import requests
from opentelemetry.exporter.otlp.proto.common.trace_encoder import encode_spans
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor
from opentelemetry.sdk.trace.export.in_memory_span_exporter import InMemorySpanExporter
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.export._phoenix import export_annotations
from agent_eval.testing import FakeModelServer

from ..live.agent import DONE, run_agent
from ..run.goal_script import script_goal_judge

REPO = Path(__file__).resolve().parents[2]
PROJECT = "agent-eval-test"
runner = CliRunner()
if not os.environ.get("CI"):  # CI installs the phoenix extra (.ci/run): there it must run
    pytest.importorskip("phoenix.client")
import phoenix.client as phoenix_client  # noqa: E402


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _server_executable() -> str | None:
    named = os.environ.get("AGENT_EVAL_PHOENIX_SERVER")
    default = REPO / ".venv-phoenix" / "bin" / "phoenix"
    if named:
        return named
    return str(default) if default.exists() else None


@pytest.fixture(scope="module")
def phoenix_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    executable = _server_executable()
    if executable is None:
        if os.environ.get("CI"):
            pytest.fail("CI must run the Phoenix test: .ci/run creates .venv-phoenix")
        pytest.skip("no Phoenix server (.venv-phoenix or AGENT_EVAL_PHOENIX_SERVER)")
    port, grpc = _free_port(), _free_port()
    workdir = tmp_path_factory.mktemp("phoenix")
    env = {
        **{k: v for k, v in os.environ.items() if not k.startswith(("PHOENIX_", "OTEL_"))},
        "PHOENIX_HOST": "127.0.0.1",
        "PHOENIX_PORT": str(port),
        "PHOENIX_GRPC_PORT": str(grpc),
        "PHOENIX_WORKING_DIR": str(workdir),
        "PHOENIX_TELEMETRY_ENABLED": "false",
    }
    log = (workdir / "server.log").open("wb")
    process = subprocess.Popen([executable, "serve"], env=env, stdout=log, stderr=log)
    url = f"http://127.0.0.1:{port}"
    try:
        deadline = time.monotonic() + 240
        while time.monotonic() < deadline:
            if process.poll() is not None:
                pytest.fail(f"Phoenix exited: {(workdir / 'server.log').read_text()[-2000:]}")
            try:
                if requests.get(f"{url}/healthz", timeout=2).status_code == 200:
                    break
            except requests.RequestException:
                pass
            time.sleep(0.5)
        else:
            pytest.fail("Phoenix did not start within 240 s")
        yield url
    finally:
        process.terminate()
        try:
            process.wait(30)
        except subprocess.TimeoutExpired:
            process.kill()
        log.close()


def _wait_for_spans(client: Any, count: int) -> None:
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        try:
            if len(client.spans.get_spans(project_identifier=PROJECT, limit=100)) >= count:
                return
        except Exception:  # the project appears with its first span
            pass
        time.sleep(0.3)
    raise AssertionError(f"Phoenix did not receive {count} spans")


def session_annotations(url: str, session_ids: list[str]) -> list[dict[str, Any]]:
    """The session annotations Phoenix holds for ``session_ids`` (its REST API, v1)."""
    response = requests.get(
        f"{url}/v1/projects/{PROJECT}/session_annotations",
        params={"session_ids": session_ids},
        timeout=10,
    )
    response.raise_for_status()
    return list(response.json()["data"])


def test_results_become_session_and_root_span_annotations(
    phoenix_url: str,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    make_result: Any,
) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG", "PHOENIX_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    script_goal_judge(fake_server)
    # the agent's traces go to Phoenix over OTLP (and to memory, for agent-eval score)
    memory = InMemorySpanExporter()
    sdk = TracerProvider(resource=Resource.create({"openinference.project.name": PROJECT}))
    sdk.add_span_processor(SimpleSpanProcessor(OTLPSpanExporter(f"{phoenix_url}/v1/traces")))
    sdk.add_span_processor(SimpleSpanProcessor(memory))
    tracer = sdk.get_tracer("agent")
    # Phoenix groups a trace into a session by OpenInference's session.id
    done = run_agent(
        tracer,
        "px-done",
        [("book it", "hm"), ("so?", f"booked {DONE}")],
        {"session.id": "px-done"},
    )
    missed = run_agent(tracer, "px-missed", [("refund me", "no")], {"session.id": "px-missed"})
    sdk.shutdown()
    roots = {
        s.attributes["gen_ai.conversation.id"]: format(s.context.span_id, "016x")
        for s in memory.get_finished_spans()
        if s.parent is None
    }
    trace_id = format(memory.get_finished_spans()[0].context.trace_id, "032x")
    spans = tmp_path / "spans.pb"
    spans.write_bytes(encode_spans(memory.get_finished_spans()).SerializeToString())
    run = tmp_path / "run"
    scored = runner.invoke(
        app,
        [
            "score",
            str(spans),
            "--judge",
            "fake-model",
            "--base-url",
            fake_server.base_url,
            "--out",
            str(run),
            "--no-cache",
        ],
    )
    assert scored.exit_code == 0, scored.stderr
    client = phoenix_client.Client(base_url=phoenix_url)
    _wait_for_spans(client, 5)

    # Phoenix down: nothing written, said so, exit 5 (output not written)
    down = runner.invoke(
        app, ["export", "phoenix", str(run), "--endpoint", f"http://127.0.0.1:{_free_port()}"]
    )
    assert down.exit_code == 5
    assert "written 0, not written 4" in down.stdout
    assert "run the same command again" in down.stderr

    for _ in range(2):  # the retry; and once more: annotations are updated, not duplicated
        exported = runner.invoke(app, ["export", "phoenix", str(run), "--endpoint", phoenix_url])
        assert exported.exit_code == 0, exported.stderr
        assert "written 4 (session: 2, span: 2), not written 0, skipped 0" in exported.stdout

    # the conversation-level verdict is on each conversation's root (agent) span ...
    annotations = client.spans.get_span_annotations(
        span_ids=[roots["px-done"], roots["px-missed"], done[-1], missed[-1]],
        project_identifier=PROJECT,
    )
    by_span = {a["span_id"]: a for a in annotations}
    assert len(annotations) == 2 and set(by_span) == {roots["px-done"], roots["px-missed"]}
    good, bad = by_span[roots["px-done"]], by_span[roots["px-missed"]]
    assert good["name"] == bad["name"] == "goal_accuracy"
    assert good["annotator_kind"] == "LLM"
    assert (good["result"]["label"], good["result"]["score"]) == ("pass", 1.0)
    assert (bad["result"]["label"], bad["result"]["score"]) == ("fail", 0.0)
    assert good["result"]["explanation"] == "compared"
    assert good["metadata"]["conversation_id"] == "px-done"
    assert good["metadata"]["formatter"] == "transcript@2"  # the default
    # ... and on its Phoenix session, once (the repeated export updated it)
    sessions = session_annotations(phoenix_url, ["px-done", "px-missed"])
    assert sorted((a["session_id"], a["result"]["label"]) for a in sessions) == [
        ("px-done", "pass"),
        ("px-missed", "fail"),
    ]
    assert {a["name"] for a in sessions} == {"goal_accuracy"}
    assert {a["metadata"]["run_id"] for a in sessions} == {good["metadata"]["run_id"]}

    # a conversation id Phoenix has no session for: Phoenix refuses the whole batch (404), so
    # the batch is sent again singly; the unknown one is skipped, the known one written
    known = make_result("px-done", "1", trace_ids=(trace_id,), span_id=roots["px-done"])
    unknown = make_result("px-unknown", "0", trace_ids=(trace_id,), span_id=roots["px-done"])
    report = export_annotations([known, unknown], endpoint=phoenix_url)
    assert report.line() == (
        "written 3 (session: 1, span: 2), not written 0, skipped 1 (no_phoenix_session: 1)"
    )
