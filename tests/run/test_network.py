"""agent-eval connects to nothing but the configured judge endpoint: no telemetry, no updates.

A real ``agent-eval score`` runs in a subprocess under ``netguard.py``, which records every
name resolution and socket connection and refuses any that is not loopback; the judge is the
fake server on 127.0.0.1. A blocked attempt would show in the log (and a library waiting on an
unreachable host would show in the wall time).
"""

from __future__ import annotations

import json
import os
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

from agent_eval.testing import FakeModelServer

from .goal_script import script_goal_judge, trace

NETGUARD = Path(__file__).with_name("netguard.py")


def test_score_contacts_only_the_judge_endpoint(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    inputs = tmp_path / "traces.jsonl"
    inputs.write_text(
        "".join(trace(f"n{i}", done=True, extra=str(i)).model_dump_json() + "\n" for i in range(3))
    )
    log = tmp_path / "net.jsonl"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env |= {"NET_TEST_KEY": "sk-net-test", "HOME": str(tmp_path)}
    env.pop("OPENAI_API_KEY", None)
    command = [sys.executable, str(NETGUARD), str(log), "agent_eval.cli:main", "score",
               str(inputs), "--judge", "fake-model", "--base-url", fake_server.base_url,
               "--api-key-env", "NET_TEST_KEY", "--out", str(tmp_path / "out")]  # fmt: skip
    start = time.monotonic()
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, cwd=tmp_path
    )
    elapsed = time.monotonic() - start
    assert done.returncode == 0, done.stderr
    assert "3 + 0 + 0 = 3" in done.stdout
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    connects = [e for e in entries if e["kind"] == "connect"]
    assert connects, "the judge was reached over a socket"
    assert all(e["allowed"] for e in entries), [e for e in entries if not e["allowed"]]
    assert {(e["host"], e["port"]) for e in connects} == {("127.0.0.1", fake_server.port)}
    assert len(fake_server.requests) == 4  # 3 distinct stage-1 requests, 1 shared stage-2
    assert elapsed < 60  # nothing waited on an unreachable host


def test_pricing_from_genai_prices_makes_no_network_connection(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """The judge is priced (gpt-4o-mini) from genai-prices' bundled data, never fetched."""
    from agent_eval._costs import PriceTable

    script_goal_judge(fake_server)
    inputs = tmp_path / "traces.jsonl"
    inputs.write_text(trace("p0", done=True).model_dump_json() + "\n")
    log = tmp_path / "net.jsonl"
    env = {k: v for k, v in os.environ.items() if "proxy" not in k.lower()}
    env |= {"NET_TEST_KEY": "sk-net-test", "HOME": str(tmp_path), "COLUMNS": "200"}
    env.pop("OPENAI_API_KEY", None)
    command = [sys.executable, str(NETGUARD), str(log), "agent_eval.cli:main", "score",
               str(inputs), "--judge", "gpt-4o-mini", "--base-url", fake_server.base_url,
               "--api-key-env", "NET_TEST_KEY", "--out", str(tmp_path / "out")]  # fmt: skip
    done = subprocess.run(
        command, check=False, capture_output=True, text=True, env=env, cwd=tmp_path
    )
    assert done.returncode == 0, done.stderr
    expected = PriceTable().cost("gpt-4o-mini", 150, 30)  # goal_script: 100+50 in, 20+10 out
    assert expected is not None and expected > 0
    assert f"${expected:.6f}" in done.stdout  # below $0.0001: six decimals, never $0.0000
    entries = [json.loads(line) for line in log.read_text().splitlines()]
    assert all(e["allowed"] for e in entries), [e for e in entries if not e["allowed"]]
    hosts = {e["host"] for e in entries if e["kind"] == "connect"}
    assert hosts == {"127.0.0.1"}
    record = sqlite3.connect(tmp_path / "out" / "results.db").execute("SELECT record FROM runs")
    prices = json.loads(record.fetchone()[0])["prices"]
    assert prices["database"] == "genai-prices" and prices["auto_update"] is False
    assert prices["models"]["gpt-4o-mini"]["source"].startswith("genai-prices ")
