"""Who may post to ``serve`` and how long a client may take (issue 33 items 4 and 5).

The token test posts with the OTel SDK's own OTLP/HTTP exporter configured the way users do it,
through ``OTEL_EXPORTER_OTLP_HEADERS``; slow and vanishing clients are raw sockets.
"""

from __future__ import annotations

import logging
import socket
import time
from pathlib import Path

import orjson
import pytest
import requests
from opentelemetry.exporter.otlp.proto.http.trace_exporter import OTLPSpanExporter
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.live._auth import authorized, check_exposure, is_loopback
from agent_eval.live._receiver import ReceiverLimits
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge
from .agent import live_receiver, provider, run_agent

TOKEN = "s3cret-token-for-tests"


def _export(url: str, conversation_id: str, monkeypatch: pytest.MonkeyPatch, header: str | None):
    """Export one conversation with the SDK exporter, headers from the standard variable."""
    if header is None:
        monkeypatch.delenv("OTEL_EXPORTER_OTLP_HEADERS", raising=False)
    else:
        monkeypatch.setenv("OTEL_EXPORTER_OTLP_HEADERS", header)
    sdk = provider(OTLPSpanExporter(endpoint=f"{url}/v1/traces"))
    run_agent(sdk.get_tracer("agent"), conversation_id, [("hi", "hello")])
    sdk.shutdown()


def test_a_token_is_required_when_set_missing_wrong_and_right(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    script_goal_judge(fake_server)
    with live_receiver(fake_server, tmp_path / "out", token=TOKEN) as live:
        _export(live.url, "no-token", monkeypatch, None)
        _export(live.url, "wrong-token", monkeypatch, "Authorization=Bearer%20nope")
        _export(live.url, "right-token", monkeypatch, f"Authorization=Bearer%20{TOKEN}")
        health = requests.get(f"{live.url}/healthz", timeout=10)  # no token needed
        live.wait_idle()
    counters = health.json()["counters"]
    # the SDK's simple processor posts each of a conversation's 2 spans on its own
    assert counters["http_401"] == 4
    assert counters["refused_token_missing"] == counters["refused_token_wrong"] == 2
    assert counters["spans_accepted"] == 2  # only the right token's spans were read
    assert [r.conversation_id for r in load_results(tmp_path / "out")] == ["right-token"]
    assert TOKEN not in health.text


def test_authorized_reads_the_bearer_scheme_only() -> None:
    assert authorized(f"Bearer {TOKEN}", TOKEN) and authorized(f"bearer  {TOKEN} ", TOKEN)
    assert not authorized(None, TOKEN) and not authorized(f"Basic {TOKEN}", TOKEN)
    assert not authorized("Bearer", TOKEN) and not authorized(f"Bearer {TOKEN}x", TOKEN)


def test_listening_beyond_loopback_needs_a_token_or_an_explicit_flag(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    assert is_loopback("127.0.0.1") and is_loopback("localhost") and is_loopback("::1")
    assert is_loopback("127.8.9.10") and is_loopback("[::1]")
    assert not is_loopback("0.0.0.0") and not is_loopback("::") and not is_loopback("example")
    check_exposure("0.0.0.0", TOKEN, allow_unauthenticated=False)
    check_exposure("0.0.0.0", None, allow_unauthenticated=True)
    monkeypatch.chdir(tmp_path)
    refused = CliRunner().invoke(app, ["serve", "--host", "0.0.0.0", "--judge", "fake-model"])
    assert refused.exit_code == 2
    said = " ".join(refused.stderr.split())
    assert "--host 0.0.0.0 listens beyond this machine" in said and "--token-env" in said
    monkeypatch.delenv("NO_SUCH_TOKEN_VAR", raising=False)
    unset = CliRunner().invoke(app, ["serve", "--token-env", "NO_SUCH_TOKEN_VAR"])
    assert unset.exit_code == 2
    assert "NO_SUCH_TOKEN_VAR: the variable is unset or empty" in " ".join(unset.stderr.split())


def _raw(port: int, head: bytes, body: bytes) -> socket.socket:
    client = socket.create_connection(("127.0.0.1", port), timeout=10)
    client.sendall(head + body)
    return client


def _head(port: int, length: int) -> bytes:
    return (
        f"POST /v1/traces HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\n"
        f"Content-Type: application/json\r\nContent-Length: {length}\r\n\r\n"
    ).encode()


def test_a_slow_client_is_closed_by_the_read_timeout(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    limits = ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1, read_timeout_seconds=0.5)
    with live_receiver(fake_server, tmp_path / "out", limits) as live:
        port = int(live.url.rsplit(":", 1)[1])
        client = _raw(port, _head(port, 1000), b'{"resourceSpans": [')  # then nothing more
        reply = b""
        while chunk := client.recv(4096):  # the server answers 408 and closes: recv() -> b""
            reply += chunk
        client.close()
        health = requests.get(f"{live.url}/healthz", timeout=10).json()
    assert reply.startswith(b"HTTP/1.1 408")
    assert health["counters"]["refused_read_timeout"] == 1


def test_a_client_gone_mid_body_is_one_counted_line_not_a_traceback(
    fake_server: FakeModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.INFO)
    with live_receiver(fake_server, tmp_path / "out") as live:
        port = int(live.url.rsplit(":", 1)[1])
        for _ in range(3):
            _raw(port, _head(port, 1000), b'{"resourceSpans": [').close()
        deadline = time.monotonic() + 10
        while time.monotonic() < deadline:
            health = requests.get(f"{live.url}/healthz", timeout=10).json()
            if health["counters"].get("refused_client_disconnected", 0) == 3:
                break
            time.sleep(0.05)
    assert health["counters"]["refused_client_disconnected"] == 3
    assert not [r for r in caplog.records if r.exc_info or r.levelno >= logging.ERROR]
    lines = [r for r in caplog.records if "client went away" in r.getMessage()]
    assert len(lines) == 3


def test_a_lone_surrogate_costs_nothing_the_batch_is_kept(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """A lone surrogate escape (valid JSON, not valid Unicode) was a 400 for the whole batch
    (``no low surrogate in string``) although ``ingest`` reads the same bytes: now both read it
    as U+FFFD and keep every span."""
    trace = "ab" * 16
    spans = [
        {"traceId": trace, "spanId": "cd" * 8, "name": "bad SURROGATE name"},
        {"traceId": trace, "spanId": "ef" * 8, "name": "good", "parentSpanId": "cd" * 8},
    ]
    document = {"resourceSpans": [{"scopeSpans": [{"spans": spans}]}]}
    body = orjson.dumps(document).decode().replace("SURROGATE", "\\ud800")
    assert "\\ud800" in body
    with live_receiver(fake_server, tmp_path / "out") as live:
        reply = requests.post(
            f"{live.url}/v1/traces",
            data=body.encode(),
            headers={"Content-Type": "application/json"},
            timeout=10,
        )
        health = requests.get(f"{live.url}/healthz", timeout=10).json()
    assert reply.status_code == 200, reply.text
    assert health["counters"]["spans_accepted"] == 2
    assert "http_400" not in health["counters"]
