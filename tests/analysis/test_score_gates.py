"""``agent-eval score`` evaluates declared ``mean_score`` gates (config and ``--gate``)."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent_eval.cli.app import app
from agent_eval.testing import FakeModelServer

from . import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}


def _score(server: FakeModelServer, tmp_path: Path, *extra: str) -> tuple[int, str]:
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": "DONE", "c": ""})
    args = [
        "score", str(traces), "--formatter", "transcript@1", "--judge", "fake-model",
        "--base-url", server.base_url, "--out", str(tmp_path / "out"), *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    return result.exit_code, result.stderr


def test_config_gate_over_three_items(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    config = tmp_path / "agent-eval.toml"
    config.write_text('[gates.ci]\nstatistic = "mean_score"\nthreshold = 0.8\nitems = 3\n')
    code, stderr = _score(fake_server, tmp_path, "--config", str(config))
    assert code == 1
    assert "gate 'ci' (run) FAILED: mean_score 2 of 3, needs 3 of 3" in stderr


def test_flag_gate_passes(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    code, stderr = _score(fake_server, tmp_path, "--gate", "mean_score>=0.6/3")
    assert code == 0, stderr
    assert "gate 'mean_score' (run) passed: mean_score 2 of 3, needs 2 of 3" in stderr


def test_bad_gate_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", "x.jsonl", "--gate", "mean_score>0.5"], env=ENV)
    assert result.exit_code == 2
    assert "STATISTIC>=THRESHOLD/ITEMS" in result.stderr
