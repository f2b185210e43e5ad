"""``agent-eval runs list``: one output directory, or a folder of them (``runs/``).

Regressions from a fresh user: ``runs list runs`` (the parent of every ``--out``) failed with
"holds no runs", and a run of several metrics was listed under its first metric only.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import ResultStore, RunRecord

runner = CliRunner()


def _run_dir(path: Path, run_id: str, config: dict[str, object]) -> Path:
    with ResultStore(path) as store:
        store.start_run(RunRecord(run_id=run_id, started_at="2026-01-01T00:00:00Z", config=config))
    return path


def test_a_folder_of_output_directories_lists_each(tmp_path: Path) -> None:
    metrics = {"goal_accuracy@1": {}, "faithfulness@1": {}}
    _run_dir(tmp_path / "runs" / "a", "run-a", {"metric": "goal_accuracy@1", "metrics": metrics})
    _run_dir(tmp_path / "runs" / "b", "run-b", {"metric": "loops@1"})
    (tmp_path / "runs" / "not-a-run").mkdir()
    result = runner.invoke(app, ["runs", "list", str(tmp_path / "runs")], env={"COLUMNS": "400"})
    assert result.exit_code == 0, result.output
    assert "run-a" in result.stdout and "run-b" in result.stdout
    row = next(line for line in result.stdout.splitlines() if "run-a" in line)
    assert "goal_accuracy@1" in row and "faithfulness@1" in row  # every metric, not the first
    assert str(tmp_path / "runs" / "a") in result.stdout
    document = json.loads(
        runner.invoke(app, ["runs", "list", str(tmp_path / "runs"), "--json"]).stdout
    )
    assert [(r["directory"], r["run_id"]) for r in document["runs"]] == [
        (str(tmp_path / "runs" / "a"), "run-a"),
        (str(tmp_path / "runs" / "b"), "run-b"),
    ]


def test_one_output_directory_lists_its_runs_without_a_directory_column(tmp_path: Path) -> None:
    out = _run_dir(tmp_path / "out", "run-1", {"metric": "loops@1"})
    result = runner.invoke(app, ["runs", "list", str(out)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    header = next(line for line in result.stdout.splitlines() if "started" in line)
    assert "run-1" in result.stdout and "directory" not in header


def test_a_folder_with_no_run_is_exit_3(tmp_path: Path) -> None:
    (tmp_path / "empty").mkdir()
    result = runner.invoke(app, ["runs", "list", str(tmp_path / "empty")])
    assert result.exit_code == 3
    assert "holds no runs" in result.stderr
