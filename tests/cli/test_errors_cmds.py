"""``agent-eval errors RUN``: dead letters by run directory or run id."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval.cli import app
from agent_eval.run._store import ResultStore, RunRecord


def _row(run_id: str, cid: str, status: str) -> MetricResult:
    ok = status == "ok"
    return MetricResult(
        run_id=run_id, conversation_id=cid, metric="goal_accuracy@1", formatter="transcript@1",
        formatter_fingerprint="f" * 64, prompt_sha256="p" * 64, judge_model="m", status=status,
        verdict="1" if ok else None, score=1.0 if ok else None,
        error_type=None if ok else "judge_unavailable",
        error_message=None if ok else f"HTTP 500 for {cid}", attempts=5,
        started_at="2026-01-01T00:00:00Z",
    )  # fmt: skip


@pytest.fixture
def run_dir(tmp_path: Path) -> Path:
    with ResultStore(tmp_path) as store:
        for run_id, started in (("run-a", "2026-01-01T00:00:00Z"), ("run-b", "2026-01-02")):
            store.start_run(RunRecord(run_id=run_id, started_at=started, config={}))
            store.add(_row(run_id, "c1", "ok"))
            store.add(_row(run_id, f"{run_id}-bad", "error"))
    return tmp_path


def test_lists_the_latest_runs_errors_from_its_directory(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["errors", str(run_dir)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "run-b-bad" in result.output and "judge_unavailable" in result.output
    assert "HTTP 500 for run-b-bad" in result.output
    assert "run-a-bad" not in result.output and "c1" not in result.output
    assert "--retry-errors run-b" in result.output


def test_run_id_with_out_and_json_document(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["errors", "run-a", "--out", str(run_dir), "--json"])
    assert result.exit_code == 0, result.output
    document = json.loads(result.stdout)
    assert (document["schema_version"], document["command"]) == (1, "errors")
    assert document["run_id"] == "run-a"
    lines = document["errors"]
    assert [(d["conversation_id"], d["error_type"], d["attempts"]) for d in lines] == [
        ("run-a-bad", "judge_unavailable", 5)
    ]
    assert lines[0]["error_message"] == "HTTP 500 for run-a-bad"


def test_unknown_run_names_the_runs_that_exist(run_dir: Path) -> None:
    result = CliRunner().invoke(app, ["errors", "nope", "--out", str(run_dir)])
    assert result.exit_code == 3  # a run that cannot be used, as in report and runs show
    assert "run-a, run-b" in result.stderr


def test_two_errored_answers_of_one_conversation_are_told_apart(tmp_path: Path) -> None:
    # regression: two errored turns of one conversation printed as two identical lines and
    # the JSON had no unit
    with ResultStore(tmp_path) as store:
        store.start_run(RunRecord(run_id="r", started_at="2026-01-01T00:00:00Z", config={}))
        for unit in ("turn:1", "turn:2"):
            store.add(_row("r", "rag/returns", "error").model_copy(update={"unit_id": unit}))
    result = CliRunner().invoke(app, ["errors", str(tmp_path)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "turn:1" in result.output and "turn:2" in result.output
    document = json.loads(CliRunner().invoke(app, ["errors", str(tmp_path), "--json"]).stdout)
    assert [e["unit_id"] for e in document["errors"]] == ["turn:1", "turn:2"]
