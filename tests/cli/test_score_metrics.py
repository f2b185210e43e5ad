"""``score --metric a,b``: several metrics in one run, judge-free ones with no judge configured."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.metrics._base import metrics
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from ..run.test_protocol import WordsMetric

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    metrics.register("test_words", WordsMetric, replace=True)
    yield
    metrics.unregister("test_words")


def _inputs(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    rows = [trace("a", done=True), trace("b", done=False)]
    path.write_text("".join(t.model_dump_json() + "\n" for t in rows))
    return path


def test_judged_and_judge_free_metrics_share_one_run(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "score",
            str(_inputs(tmp_path)),
            "--metric",
            "goal_accuracy,test_words[min_length=4]",
            "--judge",
            "fake-model",
            "--base-url",
            fake_server.base_url,
            "--out",
            str(out),
        ],
    )
    assert result.exit_code == 0, result.stderr
    rows = load_results(out)
    assert {(r.metric, r.conversation_id, r.unit_id) for r in rows} == {
        ("goal_accuracy@2", "a", "conversation"),
        ("goal_accuracy@2", "b", "conversation"),
        ("test_words@1[min_length=4]", "a", "turn:1"),
        ("test_words@1[min_length=4]", "b", "turn:1"),
    }
    assert len({r.run_id for r in rows}) == 1
    assert result.stdout.count("scored + skipped + errored = units: 2 + 0 + 0 = 2") == 2


def test_without_a_judge_the_judge_free_metric_still_scores(tmp_path: Path) -> None:
    out = tmp_path / "out"
    result = runner.invoke(
        app,
        [
            "score",
            str(_inputs(tmp_path)),
            "--metric",
            "goal_accuracy,test_words",
            "--out",
            str(out),
        ],
    )
    # exit 2: a metric asked for (goal_accuracy) could not run; the judge-free one still did
    assert result.exit_code == 2, result.stderr
    assert "No judge is configured, so goal_accuracy@2 was not scored" in result.stderr
    assert "goal_accuracy@2" in result.stdout  # its plan
    rows = load_results(out)
    assert {r.metric for r in rows} == {"test_words@1"}
    assert all(r.judge_model == "none" for r in rows)


def test_a_metric_named_twice_or_at_a_wrong_version_is_a_usage_error(tmp_path: Path) -> None:
    path = _inputs(tmp_path)
    twice = runner.invoke(app, ["score", str(path), "--metric", "test_words,test_words@1"])
    assert twice.exit_code == 2 and "twice" in twice.stderr
    wrong = runner.invoke(app, ["score", str(path), "--metric", "test_words@7"])
    assert wrong.exit_code == 2 and "available: test_words@1" in wrong.stderr
    bad = runner.invoke(app, ["score", str(path), "--metric", "test_words[nope=1]"])
    assert bad.exit_code == 2 and "has no parameter 'nope'" in bad.stderr
