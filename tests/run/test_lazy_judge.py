"""The judge adapter is built only when a request misses the cache (issue 15).

A fully cached re-run must not import openai nor load the o200k encoding: both cost about
0.3 s per command and are not needed when every answer comes from the judge-call cache and
every rendering fits ``--max-context-tokens`` by its bytes.
"""

from __future__ import annotations

import asyncio
import subprocess
import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.judges.lazy import LazyJudge
from agent_eval.run.store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing.script import load_script

from .fakes import CountingJudge, request

ROOT = Path(__file__).resolve().parents[2]

PROBE = """\
import atexit, sys
import agent_eval.tokens as tokens
def report():
    print("openai:", "openai" in sys.modules, "encoding:", tokens.encoding.cache_info().currsize)
atexit.register(report)
from agent_eval.cli import main
sys.argv = ["agent-eval", *sys.argv[1:]]
main()
"""


def test_lazy_judge_builds_on_the_first_request_only() -> None:
    built: list[CountingJudge] = []

    def build() -> CountingJudge:
        built.append(CountingJudge("m"))
        return built[-1]

    judge = LazyJudge("m", build)
    assert judge.model == "m" and not judge.built and "not built" in repr(judge)
    asyncio.run(judge.aclose())  # nothing to close
    assert built == []

    async def twice() -> None:
        await judge.ask(request("a"))
        await judge.ask(request("b"))
        await judge.aclose()

    asyncio.run(twice())
    assert judge.built and len(built) == 1 and len(built[0].calls) == 2


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
