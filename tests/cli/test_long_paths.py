"""A line naming a path is printed whole, however long the path (issue 32).

rich wraps printed text at the console width (80 columns when the output is not a terminal:
a pipe, CI, ``CliRunner``), so ``wrote <long path> (1 results)`` came out broken over lines,
which a script cannot read back and ``tests/live/test_receiver.py`` failed on under a long
pytest ``--basetemp``.
"""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval.cli._app import app
from agent_eval.run._store import ResultStore, RunRecord


def test_report_names_a_long_html_path_on_one_line(tmp_path: Path) -> None:
    run = tmp_path / "run"
    with ResultStore(run) as store:
        store.start_run(RunRecord(run_id="r", started_at="2026-01-01T00:00:00Z", config={}))
        store.add(
            MetricResult(
                run_id="r", conversation_id="c", unit_id="conversation", metric="loops@1",
                formatter="none", formatter_fingerprint="", prompt_sha256="", judge_model="none",
                started_at="t", status="ok", score=1.0,
            )
        )  # fmt: skip
    deep = tmp_path / ("d" * 60) / ("e" * 60)
    deep.mkdir(parents=True)
    html = deep / "report.html"
    result = CliRunner().invoke(app, ["report", str(run), "--html", str(html)])
    assert result.exit_code == 0, result.output
    assert f"wrote {html} (1 results)\n" in result.output
    assert html.is_file()
