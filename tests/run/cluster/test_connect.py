"""``--engine ray:ADDRESS`` and ``$RAY_ADDRESS`` that name no cluster: one line, at once.

Ray retries an unreachable address for minutes, and a malformed one raised its own
``ValueError`` with a traceback (fresh-user trial). No cluster is started here: this module
must run in a process that has not joined one (the other modules' cluster is module-scoped).
"""

from __future__ import annotations

import os
import socket
import time
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app

from .scripted import write_traces

if not os.environ.get("CI"):  # CI installs the ray extra (.ci/run): there it must run
    pytest.importorskip("ray")

runner = CliRunner()


def test_a_cluster_address_that_is_malformed_or_unreachable_is_one_line(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ray

    assert not ray.is_initialized()
    with socket.socket() as probe:  # a port nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    inputs = write_traces(tmp_path / "traces.jsonl", 2)
    base = ["score", str(inputs), "--metric", "tool_errors", "--out", str(tmp_path / "out")]
    started = time.monotonic()
    for engine, says in (
        (f"ray:127.0.0.1:{port}", f"no Ray cluster answers at 127.0.0.1:{port}"),
        ("ray:badaddress", "not a Ray cluster address"),
    ):
        result = runner.invoke(app, [*base, "--engine", engine])
        assert result.exit_code == 2, result.output
        assert says in result.output and "ray start --head" in result.output
        assert "Traceback" not in result.output
    monkeypatch.setenv("RAY_ADDRESS", f"127.0.0.1:{port}")
    result = runner.invoke(app, [*base, "--engine", "ray"])
    assert result.exit_code == 2 and f"RAY_ADDRESS=127.0.0.1:{port}: no Ray" in result.output
    assert time.monotonic() - started < 30  # Ray alone retried for minutes
