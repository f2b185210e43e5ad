"""``score --engine ray`` on a local two-CPU Ray cluster against the fake server.

The rows are those of one process (every field but the run id and the times); the API key
reaches the workers and appears in no file of the run directory nor in Ray's logs; the run's
one authority holds the calls in flight (measured at the server) and the budget (crossed by at
most the calls in flight); a worker whose process is killed mid-run costs no judge call paid
twice and no row lost or duplicated; ``--resume`` finishes a run the budget stopped.
"""

from __future__ import annotations

import os
import signal
import sqlite3
import tempfile
import threading
import time
from pathlib import Path
from types import ModuleType

import pytest
from typer.testing import CliRunner

import agent_eval
from agent_eval._result import MetricResult
from agent_eval.cli import app
from agent_eval.errors import ConfigError
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.run._store import load_results, result_key
from agent_eval.testing import ClaimScript, FakeModelServer, Hang
from agent_eval.testing._split_traffic import write_split_traffic

from .scripted import ScriptedJudge, answered_twice, traces, write_traces

runner = CliRunner()
KEY_ENV = "RAY_TEST_JUDGE_KEY"
SECRET = "sk-ray-test-4f1c9a7e52d8b3"
TIMES = {"run_id", "started_at", "latency_ms"}


def _score(inputs: Path, server: FakeModelServer, out: Path, *extra: str) -> str:
    result = runner.invoke(app, [
        "score", str(inputs), "--judge", "fake-model", "--base-url", server.base_url,
        "--api-key-env", KEY_ENV, "--out", str(out), "--cache-path", str(out) + "-cache.db",
        *extra,
    ])  # fmt: skip
    assert result.exit_code == 0, result.output
    return result.output


def _fields(rows: list[MetricResult]) -> list[dict[str, object]]:
    return sorted((r.model_dump(mode="json", exclude=TIMES) for r in rows),
                  key=lambda r: str(r["conversation_id"]))  # fmt: skip


def _views(out: Path) -> list[bytes]:
    """What the run directory says the judge saw, in any order."""
    lines = (out / "conversations.jsonl").read_bytes().splitlines()
    return sorted(lines + (out / "renderings.jsonl").read_bytes().splitlines())


def _files_holding(root: Path, secret: bytes) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


def test_rows_equal_one_process_and_the_key_stays_out(
    ray_cluster: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)  # after the cluster started: only the runtime env has it
    # traces split over files, conversations over traces and files, tool spans in other files
    inputs = tmp_path / "traffic"
    write_split_traffic(inputs, 12, 3)
    with FakeModelServer() as server:
        ScriptedJudge(server)
        _score(inputs, server, tmp_path / "local")
        asked = len(server.requests)
        output = _score(inputs, server, tmp_path / "ray", "--engine", "ray")
        assert len(server.requests) == 2 * asked == 48  # the ray run's own cache: all asked
    local, ray = load_results(tmp_path / "local"), load_results(tmp_path / "ray")
    assert len(ray) == 12 and _fields(ray) == _fields(local)
    assert "ray: scoring on 2 worker(s)" in output
    assert _views(tmp_path / "ray") == _views(tmp_path / "local")
    with sqlite3.connect(str(tmp_path / "ray") + "-cache.db") as db:  # filled by the cluster
        assert db.execute("SELECT count(*) FROM judge_calls").fetchone()[0] == 24
    logs = Path(tempfile.gettempdir()) / "ray" / "session_latest" / "logs"
    assert logs.is_dir()
    assert _files_holding(tmp_path / "ray", SECRET.encode()) == []
    assert _files_holding(logs, SECRET.encode()) == []


def test_limits_and_budget_hold_over_workers_and_resume_finishes(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    inputs = write_traces(tmp_path / "traces.jsonl", 40)
    with FakeModelServer(latency=0.05) as server:
        judge = ScriptedJudge(server)
        out = tmp_path / "run"
        _score(inputs, server, out, "--engine", "ray", "--concurrency", "3",
               "--max-judge-tokens", "4000")  # fmt: skip
        stopped = load_results(out)
        assert max(judge.in_flight) <= 3  # over both workers, at the server
        spent = sum(r.input_tokens + r.output_tokens for r in stopped)
        assert spent <= 4000 + 3 * 120  # crossed by at most the calls in flight (120 each)
        budget = [r for r in stopped if r.error_type == "budget"]
        assert budget and len(budget) < 40 and len(stopped) == 40
        _score(inputs, server, out, "--engine", "ray", "--resume", str(out))
        assert answered_twice(server) == 0  # nothing finished was asked again
    rows = load_results(out)
    assert len(rows) == 40 and {r.status for r in rows} == {"ok"}
    assert len({result_key(r) for r in rows}) == 40


def _scorer_pids() -> list[int]:
    pids = []
    for proc in Path("/proc").iterdir():
        try:
            if proc.name.isdigit() and b"ray::Scorer" in (proc / "cmdline").read_bytes():
                pids.append(int(proc.name))
        except OSError:
            continue
    return pids


def _cached(path: Path) -> int:
    try:
        with sqlite3.connect(path, timeout=1) as db:
            return int(db.execute("SELECT count(*) FROM judge_calls").fetchone()[0])
    except sqlite3.Error:
        return 0


@pytest.mark.skipif(not Path("/proc").is_dir(), reason="finds the worker processes in /proc")
def test_a_killed_worker_costs_no_call_paid_twice_and_no_row(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    count, out = 20, tmp_path / "run"
    inputs = write_traces(tmp_path / "traces.jsonl", count)
    with FakeModelServer() as server:
        # one conversation's first call hangs: its batch is mid-way when the workers die
        server.add_rule(Hang(300), contains="#7#", schema="GoalAndOutcome", times=1)
        ScriptedJudge(server)
        run = threading.Thread(
            target=_score,
            args=(inputs, server, out, "--engine", "ray", "--timeout", "600", "--concurrency", "4"),
        )
        run.start()
        deadline = time.monotonic() + 120
        # every other call answered and in the shared cache: no call is in flight but the hang
        while _cached(Path(str(out) + "-cache.db")) < 2 * (count - 1):
            assert time.monotonic() < deadline and run.is_alive()
            time.sleep(0.05)
        pids = _scorer_pids()
        assert pids
        for pid in pids:
            os.kill(pid, signal.SIGKILL)
        run.join(180)
        assert not run.is_alive()
        assert answered_twice(server) == 0
    rows = load_results(out)
    assert len(rows) == count and len({result_key(r) for r in rows}) == count
    assert {r.status for r in rows} == {"ok"}


def test_the_api_scores_on_ray_with_a_judge_named_by_settings(
    ray_cluster: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    conversations = traces(8)
    with FakeModelServer() as server:
        ScriptedJudge(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        local = agent_eval.score(conversations, judge="fake-model")
        ray = agent_eval.score(conversations, judge="fake-model", engine="ray")
    assert _fields(ray.results) == _fields(local.results) and ray.scored == 8


def test_what_cannot_go_to_ray_is_refused_before_anything_starts(tmp_path: Path) -> None:
    with FakeModelServer() as server:
        judge = OpenAIJudge("fake-model", base_url=server.base_url)
        with pytest.raises(ConfigError, match="cannot go to Ray"):
            agent_eval.score(traces(2), judge=judge, engine="ray")
        assert server.requests == []
    with pytest.raises(ConfigError, match="unknown engine"):
        agent_eval.score(traces(2), judge="fake-model", engine="spark")


def _decompositions(out: Path) -> list[tuple[str, str]]:
    with sqlite3.connect(out / "decompositions.db") as db:
        return sorted(db.execute("SELECT key, atoms FROM decompositions").fetchall())


def _asked(server: FakeModelServer, schema: str) -> int:
    return sum(1 for r in server.requests if r.schema_name == schema and r.status == 200)


def test_claim_metric_rows_and_decompositions_equal_one_process(
    ray_cluster: ModuleType, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv(KEY_ENV, SECRET)
    inputs = tmp_path / "traffic"  # every answer has a tool result as its context
    write_split_traffic(inputs, 12, 3)
    with FakeModelServer() as server:
        ClaimScript().install(server)
        _score(inputs, server, tmp_path / "local", "--metric", "faithfulness")
        _score(inputs, server, tmp_path / "ray", "--metric", "faithfulness", "--engine", "ray")
    local, ray = load_results(tmp_path / "local"), load_results(tmp_path / "ray")
    assert len(ray) == 24 and {r.status for r in ray} == {"ok"}
    assert _fields(ray) == _fields(local)
    assert {r.details["decomposition"] for r in ray} == {"new"}
    # the workers' decompositions, pinned by the driver in the run directory as one process does
    assert len(_decompositions(tmp_path / "ray")) == 24
    assert _decompositions(tmp_path / "ray") == _decompositions(tmp_path / "local")


def test_a_resumed_claim_run_reuses_the_pinned_decompositions(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    inputs, out = tmp_path / "traffic", tmp_path / "run"
    write_split_traffic(inputs, 12, 3)
    with FakeModelServer(latency=0.05) as server:
        ClaimScript().install(server)
        args = ("--metric", "faithfulness", "--engine", "ray", "--no-cache", "--concurrency", "4")
        _score(inputs, server, out, *args, "--max-judge-tokens", "3000")
        stopped = load_results(out)
        budget = [r for r in stopped if r.error_type == "budget"]
        assert budget and len(stopped) == 24
        pinned_first = len(_decompositions(out))
        decomposed_then = _asked(server, "Statements")
        assert pinned_first == decomposed_then  # every decomposition made was pinned
        _score(inputs, server, out, *args, "--resume", str(out))
        # no cache: a decomposition asked again would be a request answered twice
        assert answered_twice(server) == 0
        assert _asked(server, "Statements") == 24  # each answer decomposed once over both
    rows = load_results(out)
    assert len(rows) == 24 and {r.status for r in rows} == {"ok"}
    reused = [r for r in rows if r.details.get("decomposition") == "pinned"]
    assert reused  # decomposed before the budget stopped them, verified on resume
    unfinished_first = {result_key(r) for r in budget}
    assert {result_key(r) for r in reused} <= unfinished_first
    assert len(reused) == pinned_first - (24 - len(budget))


FACTORY = '''"""A user's client factory: an openai client configured from the environment."""

import os

import openai


def make_client():
    return openai.AsyncOpenAI(
        base_url=os.environ["OPENAI_BASE_URL"], api_key=os.environ["RAY_TEST_JUDGE_KEY"]
    )
'''


def test_a_judge_from_the_users_client_factory_scores_on_ray(
    ray_cluster: ModuleType, worker_path: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    (worker_path / "rc_client_factory.py").write_text(FACTORY)  # installed on every worker
    monkeypatch.syspath_prepend(str(worker_path))
    monkeypatch.setenv(KEY_ENV, SECRET)
    inputs = write_traces(tmp_path / "traces.jsonl", 6)
    judge = "openai-client:rc_client_factory:make_client@fake-model"
    with FakeModelServer() as server:
        ScriptedJudge(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        _score(inputs, server, tmp_path / "local", "--judge", judge)
        output = _score(inputs, server, tmp_path / "ray", "--judge", judge, "--engine", "ray")
    local, ray = load_results(tmp_path / "local"), load_results(tmp_path / "ray")
    assert len(ray) == 6 and {r.status for r in ray} == {"ok"}
    assert _fields(ray) == _fields(local)
    assert "ray: scoring on 2 worker(s)" in output
    assert _files_holding(tmp_path / "ray", SECRET.encode()) == []


PLUGIN = """from agent_eval.formatting import Formatter, NoParams


class CountV1(Formatter[NoParams]):
    name = "rc-count"
    version = 1

    def render(self, trace):
        return " | ".join(m.content or "" for m in trace.messages)
"""


def test_a_formatter_from_formatter_path_and_workers_on_ray(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    plugin = tmp_path / "plugins"  # a file only the driver has: the workers get its code
    plugin.mkdir()
    (plugin / "rc_count.py").write_text(PLUGIN)
    inputs = write_traces(tmp_path / "traces.jsonl", 6)
    args = ("--formatter", "rc-count@1", "--formatter-path", str(plugin))
    from agent_eval.formatting import formatters

    try:
        with FakeModelServer() as server:
            ScriptedJudge(server)
            _score(inputs, server, tmp_path / "local", *args)
            output = _score(inputs, server, tmp_path / "ray", *args, "--engine", "ray",
                            "--workers", "1")  # fmt: skip
            assert any("#. | All set." in r.text for r in server.requests)  # rendered by it
    finally:
        formatters.unregister("rc-count@1")
    local, ray = load_results(tmp_path / "local"), load_results(tmp_path / "ray")
    assert len(ray) == 6 and {r.formatter for r in ray} == {"rc-count@1"}
    assert _fields(ray) == _fields(local)
    assert "ray: scoring on 1 worker(s)" in output


def test_the_api_shows_progress_and_takes_workers_on_ray(
    ray_cluster: ModuleType, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    with FakeModelServer() as server:
        ScriptedJudge(server)
        monkeypatch.setenv("OPENAI_BASE_URL", server.base_url)
        monkeypatch.setenv("OPENAI_API_KEY", SECRET)
        capsys.readouterr()
        local = agent_eval.score(traces(9), judge="fake-model", progress=True)
        shown_local = capsys.readouterr().err
        ray = agent_eval.score(traces(9), judge="fake-model", engine="ray", workers=1,
                               progress=True)  # fmt: skip
        shown_ray = capsys.readouterr().err
    assert _fields(ray.results) == _fields(local.results)
    assert "scoring" in shown_local and "9/9" in shown_local
    assert "scoring" in shown_ray and "9/9" in shown_ray  # the same display, for the run


def test_workers_without_ray_is_refused(tmp_path: Path) -> None:
    inputs = write_traces(tmp_path / "traces.jsonl", 2)
    result = runner.invoke(app, ["score", str(inputs), "--metric", "tool_errors",
                                 "--workers", "2", "--out", str(tmp_path / "out")])  # fmt: skip
    assert result.exit_code == 2 and "--engine ray" in result.output
    with pytest.raises(ConfigError, match='engine="ray"'):
        agent_eval.score(traces(2), judge="fake-model", workers=2)


def test_answers_another_endpoint_filled_are_warned_of_as_in_one_process(
    ray_cluster: ModuleType, tmp_path: Path
) -> None:
    # the cache file holds the answers of endpoint A; a run against B uses them and says so,
    # on Ray as in one process (the Ray run printed only "54 hits, 0 calls": fresh-user trial)
    inputs = write_traces(tmp_path / "traces.jsonl", 6)
    cache = str(tmp_path / "shared-cache.db")
    with FakeModelServer() as first:
        ScriptedJudge(first)
        _score(inputs, first, tmp_path / "a", "--cache-path", cache)
    with FakeModelServer() as second:
        ScriptedJudge(second)
        local = _score(inputs, second, tmp_path / "b1", "--cache-path", cache)
        ray = _score(inputs, second, tmp_path / "b2", "--cache-path", cache, "--engine", "ray")
        assert second.requests == []  # every answer came from A's entries
    for output in (local, ray):
        assert "12 filled by another endpoint" in output, output
        assert "warning: 12 of 12 judge answers came from the cache" in output, output
