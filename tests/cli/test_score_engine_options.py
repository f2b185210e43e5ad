"""``agent-eval score`` with the production engine options: cache, resume, retry-errors, cost."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, ModelUsage
from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, HttpError

from ..run.goal_script import script_goal_judge, trace

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-engine-options-SECRET")
    monkeypatch.chdir(tmp_path)
    (tmp_path / "agent-eval.toml").write_text("[score]\ntransport-retries = 0\n")


def inputs(tmp_path: Path, n: int = 6) -> Path:
    path = tmp_path / "traces.jsonl"
    traces = [trace(f"c{i}", done=i % 2 == 0, extra=f"case {i}") for i in range(n)]
    with_usage = AgentTrace.model_validate(
        traces[0].model_dump()
        | {"usage": [ModelUsage(model="gpt-4o", input_tokens=1000, output_tokens=100, calls=2)]}
    )
    path.write_text("".join(t.model_dump_json() + "\n" for t in [with_usage, *traces[1:]]))
    return path


def score(server: FakeModelServer, path: Path, out: Path, *extra: str) -> tuple[int, str]:
    args = ["score", str(path), "--judge", "fake-model", "--base-url", server.base_url,
            "--api-key-env", "MY_JUDGE_KEY", "--out", str(out), *extra]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    return result.exit_code, result.stdout + result.stderr


def chat_requests(server: FakeModelServer) -> int:
    return sum(r.path.endswith("/chat/completions") for r in server.requests)


def test_second_identical_run_makes_zero_judge_calls(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    path = inputs(tmp_path)
    code, output = score(fake_server, path, tmp_path / "out")
    assert code == 0, output
    first = chat_requests(fake_server)
    # 6 distinct stage-1 requests; the stage-2 requests are identical for the 3 conversations
    # that reached the goal and for the 3 that did not: asked once each, then cache hits.
    assert first == 8 and "judge cache: 4 hits, 8 calls" in output
    code, output = score(fake_server, path, tmp_path / "out")
    assert code == 0, output
    assert chat_requests(fake_server) == first
    assert "judge cache: 12 hits, 0 calls" in output
    runs = {r.run_id for r in load_results(tmp_path / "out")}
    assert len(runs) == 2
    by_run = {
        run: sorted((r.conversation_id, r.verdict) for r in load_results(tmp_path / "out")
                    if r.run_id == run)
        for run in runs
    }  # fmt: skip
    assert len(set(map(tuple, by_run.values()))) == 1


def test_no_cache_and_refresh_cache_call_the_judge(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    path = inputs(tmp_path, 3)
    assert score(fake_server, path, tmp_path / "out")[0] == 0
    assert chat_requests(fake_server) == 5  # 3 + 2 distinct stage-2 requests
    code, output = score(fake_server, path, tmp_path / "out", "--no-cache")
    assert code == 0 and chat_requests(fake_server) == 11 and "judge cache" not in output
    code, output = score(fake_server, path, tmp_path / "out", "--refresh-cache")
    assert code == 0 and chat_requests(fake_server) == 16  # asked again, once per distinct request
    assert "1 hits, 5 calls" in output and "refresh" in output


def test_usage_and_cost_by_metric_formatter_model_and_agent_apart(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    with (tmp_path / "agent-eval.toml").open("a") as config:
        config.write('[prices."fake-model"]\ninput = 1.0\noutput = 2.0\n')
    code, output = score(fake_server, inputs(tmp_path, 2), tmp_path / "out")
    assert code == 0, output
    # goal_script usage: stage 1 100 in / 20 out, stage 2 50 / 10, per conversation.
    lines = output.splitlines()
    judge_line = next(line for line in lines if "goal_accuracy@2" in line and "fake-model" in line)
    assert "judge" in judge_line and "transcript@2" in judge_line  # the defaults
    assert "300" in judge_line and "60" in judge_line and "$0.0004" in judge_line
    agent_line = next(line for line in lines if "agent" in line and "gpt-4o" in line)
    assert "gpt-4o" in agent_line and "1000" in agent_line and "$0.0035" in agent_line


def test_retry_errors_rescores_only_the_errored_conversations(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fake_server.add_rule(HttpError(500), contains="case 1")
    fake_server.add_rule(HttpError(500), contains="case 4")
    script_goal_judge(fake_server)
    path = inputs(tmp_path)
    code, output = score(fake_server, path, tmp_path / "out")
    assert code == 0, output
    rows = load_results(tmp_path / "out")
    assert sorted(r.conversation_id for r in rows if r.status == "error") == ["c1", "c4"]
    run_id = rows[0].run_id
    errors = runner.invoke(app, ["errors", str(tmp_path / "out"), "--json"])
    assert errors.exit_code == 0 and errors.output.count("judge_unavailable") == 2

    fake_server.clear()
    script_goal_judge(fake_server)
    code, output = score(
        fake_server, path, tmp_path / "out", "--no-cache", "--retry-errors", run_id
    )
    assert code == 0, output
    assert chat_requests(fake_server) == 4  # two conversations, two stages each
    stage_1 = [r.text for r in fake_server.requests if r.schema_name == "GoalAndOutcome"]
    assert len(stage_1) == 2 and any("case 1" in t for t in stage_1)
    assert any("case 4" in t for t in stage_1)
    rows = load_results(tmp_path / "out")
    assert len(rows) == 6 and {r.run_id for r in rows} == {run_id}
    assert all(r.status == "ok" for r in rows)
    assert "scored + skipped + errored = units: 6 + 0 + 0 = 6" in output


def test_resume_refuses_a_different_judge(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    path = inputs(tmp_path, 2)
    assert score(fake_server, path, tmp_path / "out")[0] == 0
    run_id = load_results(tmp_path / "out")[0].run_id
    code, output = score(fake_server, path, tmp_path / "out", "--resume", run_id,
                         "--judge", "other-model")  # fmt: skip
    assert code == 2 and "judge_model" in output and "other-model" in output
