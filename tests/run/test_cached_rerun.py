"""A fully cached re-run imports no openai and loads no o200k encoding (issue 15).

Neither is needed when every answer comes from the judge-call cache and every rendering fits
``--max-context-tokens`` by its bytes (the encoding costs about 0.3 s per command).
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]

PROBE = """\
import atexit, sys
import agent_eval._tokens as tokens
def report():
    print("openai:", "openai" in sys.modules, "encoding:", tokens.encoding.cache_info().currsize)
atexit.register(report)
from agent_eval.cli import main
sys.argv = ["agent-eval", *sys.argv[1:]]
main()
"""


def test_fully_cached_rerun_imports_no_openai_and_loads_no_encoding(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    load_script(ROOT / "fixtures" / "fake-judge.json", fake_server)
    monkeypatch.setenv("AGENT_EVAL_CACHE_PATH", str(tmp_path / "cache.db"))
    args = [
        "score", str(ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"),
        "--metric", "goal_accuracy", "--judge", "fake", "--base-url", fake_server.base_url,
    ]  # fmt: skip
    first = CliRunner().invoke(app, [*args, "--out", str(tmp_path / "first")])
    assert first.exit_code == 0, first.output
    served = len(fake_server.requests)
    again = subprocess.run(
        [sys.executable, "-c", PROBE, *args, "--out", str(tmp_path / "again")],
        capture_output=True, text=True, check=False,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert "openai: False encoding: 0" in again.stdout
    assert len(fake_server.requests) == served  # every answer from the cache
    key = ("conversation_id", "status", "verdict", "user_goal", "end_state")
    assert [r.model_dump(include=set(key)) for r in load_results(tmp_path / "again")] == [
        r.model_dump(include=set(key)) for r in load_results(tmp_path / "first")
    ]
