"""The hardened defaults (issue 29): ``transcript@2`` and the ``@2`` prompts wherever nothing is
chosen, ``goal_accuracy@1`` + ``ragas-pretty@1`` kept as the Ragas-parity configuration, and the
change made visible by ``runs diff`` and the run record."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.config import DEFAULT_FORMATTER, RAGAS_PARITY, ScoreConfig
from agent_eval.metrics._spec import build_metric, metric_versions
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from .goal_script import script_goal_judge, trace

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def test_defaults_are_hardened_and_the_parity_configuration_stays() -> None:
    assert DEFAULT_FORMATTER == ScoreConfig().formatter == "transcript@2"
    assert build_metric("goal_accuracy").id == "goal_accuracy@2"
    assert RAGAS_PARITY == ("goal_accuracy@1", "ragas-pretty@1")
    assert build_metric(RAGAS_PARITY[0]).prompts.folder == "goal_accuracy_v1"
    for name in (
        "goal_accuracy",
        "faithfulness",
        "groundedness",
        "answer_relevance",
        "answer_correctness",
        "llm_context_precision",
        "llm_context_recall",
        "refusal",
    ):
        assert metric_versions(name) == [1, 2], name
        assert build_metric(f"{name}@1").prompt_sha256 != build_metric(name).prompt_sha256
    assert metric_versions("loops") == [1]  # judge-free metrics have one version


@pytest.fixture
def two_runs(fake_server: FakeModelServer, tmp_path: Path) -> Path:
    """Run A in the Ragas-parity configuration, run B with the defaults, of the same traces."""
    script_goal_judge(fake_server)
    inputs = tmp_path / "traces.jsonl"
    traces = [trace("c1", done=True), trace("c2", done=False)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    judge = ["--judge", "fake", "--base-url", fake_server.base_url, "--no-cache"]
    parity = ["--metric", RAGAS_PARITY[0], "--formatter", RAGAS_PARITY[1]]
    for extra, out in ((parity, "runs/a"), ([], "runs/b")):
        result = runner.invoke(app, ["score", str(inputs), *extra, *judge, "--out", out])
        assert result.exit_code == 0, result.output
    return tmp_path / "runs"


def test_rows_and_record_name_the_version_a_bare_name_meant(two_runs: Path) -> None:
    a, b = load_results(two_runs / "a"), load_results(two_runs / "b")
    assert {(r.metric, r.formatter) for r in a} == {("goal_accuracy@1", "ragas-pretty@1")}
    assert {(r.metric, r.formatter) for r in b} == {("goal_accuracy@2", "transcript@2")}
    assert sorted(r.verdict or "" for r in a) == sorted(r.verdict or "" for r in b) == ["0", "1"]
    shown = runner.invoke(app, ["runs", "show", str(two_runs / "b"), "--json"])
    request = json.loads(shown.stdout)["record"]["request"]
    assert request["metric_resolved"] == {"goal_accuracy": "goal_accuracy@2"}
    assert request["formatter"] == "transcript@2"


def test_runs_diff_says_the_formatter_and_the_metric_changed(two_runs: Path) -> None:
    diff = runner.invoke(app, ["runs", "diff", str(two_runs / "a"), str(two_runs / "b")])
    assert diff.exit_code == 0, diff.output
    err = " ".join(diff.stderr.split())
    assert "the runs used different formatters (A: ragas-pretty@1; B: transcript@2)" in err
    assert "the runs used different metrics (A: goal_accuracy@1; B: goal_accuracy@2)" in err
    assert "docs/migration-hardened-defaults.md" in err
    assert "rows: 0 changed, 2 unchanged" in diff.stdout  # still paired, by conversation
    as_json = json.loads(
        runner.invoke(
            app, ["runs", "diff", str(two_runs / "a"), str(two_runs / "b"), "--json"]
        ).stdout
    )
    assert len(as_json["identity_changes"]) == 2
    same = runner.invoke(app, ["runs", "diff", str(two_runs / "b"), str(two_runs / "b")])
    assert "different formatters" not in same.stderr
