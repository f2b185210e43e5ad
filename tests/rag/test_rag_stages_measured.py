"""``agent-eval rag`` says a stage was not measured instead of "failures: none" (issue 32).

A run that scored only retrieval metrics used to print ``generation failures: none``, as if the
answers had been checked and found fine.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.run._turns import measured_stages, turn_rows

from .test_rag_report import _records, _row, _stored_run

runner = CliRunner()


def test_a_stage_with_no_result_is_not_measured_not_none(tmp_path: Path) -> None:
    records = _records("c/turn:1", "c/turn:2")
    results = [
        _row("c/turn:1", "context_precision@1", 1.0),
        _row("c/turn:2", "context_precision@1", 1.0),
    ]
    assert measured_stages(turn_rows(records, results)) == {"retrieval"}
    run = _stored_run(tmp_path / "run", records, results)
    result = runner.invoke(app, ["rag", str(run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "retrieval failures: none" in result.output
    assert "generation failures: none" not in result.output
    assert (
        "generation failures: not measured (no faithfulness, groundedness, refusal" in result.output
    )


def test_a_stage_measured_with_no_failure_is_none(tmp_path: Path) -> None:
    records = _records("c/turn:1")
    results = [_row("c/turn:1", "groundedness@1", 1.0)]
    assert measured_stages(turn_rows(records, results)) == {"generation"}
    skipped = [_row("c/turn:1", "groundedness@1", None)]  # skipped: nothing was measured
    assert measured_stages(turn_rows(records, skipped)) == set()
    run = _stored_run(tmp_path / "run", records, results)
    result = runner.invoke(app, ["rag", str(run)], env={"COLUMNS": "200"})
    assert "generation failures: none" in result.output
    assert "retrieval failures: not measured (no context_precision" in result.output
