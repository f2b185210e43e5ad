"""The judge-call cache says which endpoint filled an answer (trial8 #12).

``score --base-url http://127.0.0.1:1/v1`` (nothing listening) exited 0 with every verdict
from the cache that another server's run had filled, without a word. The key stays what is
sent (model, parameters, messages, schema), so a moved gateway still hits; the endpoint is
kept beside each entry, bare (no userinfo, no query: never a credential), and a run counts and
names the answers another endpoint filled: in the cache line, on stderr and in ``--json``.
"""

from __future__ import annotations

import json
import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._redaction import bare_endpoint
from agent_eval.cli._app import app
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "300"}
SECRET = "s3cret-Pa55"
DEAD = "http://127.0.0.1:1/v1"


def _score(
    traces: Path, cache: Path, base_url: str, out: Path, *extra: str
) -> tuple[int, str, str]:
    args = ["score", str(traces), "--formatter", "transcript@1", "--judge", "fake-model",
            "--base-url", base_url, "--cache-path", str(cache), "--out", str(out),
            "--max-retries", "0", *extra]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_answers_filled_by_another_endpoint_are_counted_and_named(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": ""})
    cache = tmp_path / "cache.db"
    served = fake_server.base_url.rstrip("/")
    with_userinfo = served.replace("http://", f"http://judge:{SECRET}@")
    code, stdout, stderr = _score(traces, cache, with_userinfo, tmp_path / "first")
    assert code == 0, stderr
    assert "filled by another endpoint" not in stdout + stderr
    with sqlite3.connect(cache) as db:
        endpoints = {row[0] for row in db.execute("SELECT endpoint FROM judge_calls")}
    assert endpoints == {served}  # bare: the userinfo is gone, not masked
    assert SECRET.encode() not in b"".join(p.read_bytes() for p in tmp_path.glob("cache.db*"))
    # the same endpoint again: hits, nothing said
    code, stdout, stderr = _score(traces, cache, served, tmp_path / "again")
    assert code == 0 and "judge cache: 4 hits, 0 calls" in " ".join(stdout.split())
    assert "another endpoint" not in stderr
    # a dead endpoint: every answer from the cache, and the run says whose they are
    code, stdout, stderr = _score(traces, cache, DEAD, tmp_path / "dead")
    assert code == 0, stderr
    assert f"judge cache: 4 hits (4 filled by another endpoint: {served}), 0 calls" in " ".join(
        stdout.split()
    )
    assert (
        f"warning: 4 of 4 judge answers came from the cache, filled by another endpoint "
        f"({served}), not from {DEAD}; --refresh-cache asks this endpoint again"
    ) in stderr
    code, stdout, _ = _score(traces, cache, DEAD, tmp_path / "dead-json", "--json")
    assert code == 0
    assert json.loads(stdout)["cache"] == {
        "hits": 4,
        "calls": 0,
        "endpoint": DEAD,
        "other_endpoint_hits": 4,
        "other_endpoints": {served: 4},
        "unknown_endpoint_hits": 0,
    }


def test_answers_from_entries_that_name_no_endpoint_count_as_an_unknown_endpoints(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial9 #4: entries an older agent-eval wrote (``endpoint`` NULL) were served silently."""
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": ""})
    cache = tmp_path / "cache.db"
    served = fake_server.base_url.rstrip("/")
    assert _score(traces, cache, served, tmp_path / "first")[0] == 0
    with sqlite3.connect(cache) as db:  # what a version before the endpoint column left
        keys = [row[0] for row in db.execute("SELECT key FROM judge_calls ORDER BY key")]
        db.execute("UPDATE judge_calls SET endpoint = NULL WHERE key IN (?, ?)", keys[:2])
    # the same endpoint: the two entries naming none are not known to be its answers
    code, stdout, stderr = _score(traces, cache, served, tmp_path / "same")
    assert code == 0, stderr
    assert "judge cache: 4 hits (2 filled by an unknown endpoint), 0 calls" in " ".join(
        stdout.split()
    )
    assert (
        "warning: 2 of 4 judge answers came from the cache, filled by an unknown endpoint "
        f"(entries an older agent-eval wrote name no endpoint), not known to be from {served}; "
        "--refresh-cache asks this endpoint again"
    ) in stderr
    # another endpoint: two hits another endpoint filled, two an unknown one
    code, stdout, stderr = _score(traces, cache, DEAD, tmp_path / "dead")
    assert code == 0, stderr
    assert (
        f"judge cache: 4 hits (2 filled by another endpoint: {served}; 2 filled by an unknown "
        "endpoint), 0 calls"
    ) in " ".join(stdout.split())
    assert (
        f"warning: 4 of 4 judge answers came from the cache, filled by another endpoint (2: "
        f"{served}), not from {DEAD}, or by an unknown one (2: entries an older agent-eval "
        "wrote name no endpoint), not known to be from it; --refresh-cache asks this endpoint "
        "again"
    ) in stderr
    code, stdout, _ = _score(traces, cache, DEAD, tmp_path / "dead-json", "--json")
    assert code == 0
    assert json.loads(stdout)["cache"] == {
        "hits": 4,
        "calls": 0,
        "endpoint": DEAD,
        "other_endpoint_hits": 2,
        "other_endpoints": {served: 2},
        "unknown_endpoint_hits": 2,
    }
    # --refresh-cache asks again and the entries name the endpoint from then on
    assert _score(traces, cache, served, tmp_path / "refresh", "--refresh-cache")[0] == 0
    code, stdout, stderr = _score(traces, cache, served, tmp_path / "after")
    assert code == 0 and "judge cache: 4 hits, 0 calls" in " ".join(stdout.split())
    assert "unknown endpoint" not in stderr


def test_refresh_cache_asks_the_configured_endpoint(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE"})
    cache = tmp_path / "cache.db"
    assert _score(traces, cache, fake_server.base_url, tmp_path / "one")[0] == 0
    code, _, stderr = _score(traces, cache, DEAD, tmp_path / "two", "--refresh-cache")
    assert code == 4  # the dead endpoint was asked: judge_unavailable, nothing scored
    assert "judge_unavailable" in stderr


@pytest.mark.parametrize(
    ("url", "bare"),
    [
        ("https://u:p%40ss@Gateway.Example:8443/v1/?api-key=k&api-version=1#x",
         "https://gateway.example:8443/v1"),
        ("http://[::1]:8000/v1", "http://[::1]:8000/v1"),
        ("HTTP://localhost:11434/v1/", "http://localhost:11434/v1"),
        ("not a url", "***"),
        ("http://host:99999/v1", "***"),
    ],
)  # fmt: skip
def test_bare_endpoint_keeps_no_credential(url: str, bare: str) -> None:
    assert bare_endpoint(url) == bare
