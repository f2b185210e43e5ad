"""The nouns and counts of run summaries (fresh-user trials of session 3).

- a RAG metric's units are turns: "all 4 units errored", not "all 4 conversations" (3 of them);
- ``report`` on a stability run counted only repeat 0 ("27 results" for 81 rows);
- ``tool_call_accuracy[order=superset]`` extras are passed atoms, yet the score is recall: the
  summary's "atoms passed" counts only rows scored from their atoms (claim-level metrics).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..metrics.trajectory_cases import calls, conversation
from ..run.goal_script import script_goal_judge, trace

FIXTURES = Path(__file__).parents[2] / "fixtures"
ENV = {"COLUMNS": "200"}
runner = CliRunner()

pytestmark = pytest.mark.usefixtures("judge_env_cleared")


def test_nothing_scored_counts_units_when_units_are_turns(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # no rule for the context-precision schema: every call is refused (400), every unit errors
    args = ["score", str(FIXTURES / "rag"), "--metric", "llm_context_precision", "--judge", "m",
            "--base-url", fake_server.base_url, "--out", str(tmp_path / "out")]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 4, result.output
    rows = load_results(tmp_path / "out")
    assert len(rows) == 4 and len({r.conversation_id for r in rows}) == 3
    assert {r.unit_id for r in rows} == {"turn:1", "turn:2"}
    flat = " ".join(result.stderr.split())
    assert "nothing was scored: all 4 units errored (mostly judge_bad_request: 4 of 4)" in flat


def test_nothing_scored_still_says_conversations_for_conversation_units(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    inputs = tmp_path / "t.jsonl"
    inputs.write_text("".join(trace(c, done=True).model_dump_json() + "\n" for c in "ab"))
    args = ["score", str(inputs), "--judge", "m", "--base-url", fake_server.base_url,
            "--out", str(tmp_path / "out")]  # fmt: skip
    result = runner.invoke(app, args, env=ENV)
    assert result.exit_code == 4, result.output
    assert "nothing was scored: all 2 conversations errored" in " ".join(result.stderr.split())


def test_report_of_a_stability_run_counts_results_and_rows(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    inputs = tmp_path / "t.jsonl"
    inputs.write_text("".join(trace(c, done=c == "a").model_dump_json() + "\n" for c in "abc"))
    args = ["stability", str(inputs), "--repeats", "3", "--formatter", "transcript@1",
            "--judge", "m", "--base-url", fake_server.base_url,
            "--out", str(tmp_path / "st")]  # fmt: skip
    assert runner.invoke(app, args, env=ENV).exit_code == 0
    assert len(load_results(tmp_path / "st")) == 9
    html = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(tmp_path / "st"), "--html", str(html)], env=ENV)
    assert result.exit_code == 0, result.output
    assert f"wrote {html} (3 results, 9 rows over 3 repeats)" in " ".join(result.stdout.split())


def test_report_of_a_plain_run_counts_results(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    inputs = tmp_path / "t.jsonl"
    inputs.write_text("".join(trace(c, done=True).model_dump_json() + "\n" for c in "ab"))
    args = ["score", str(inputs), "--judge", "m", "--base-url", fake_server.base_url,
            "--out", str(tmp_path / "out")]  # fmt: skip
    assert runner.invoke(app, args, env=ENV).exit_code == 0
    html = tmp_path / "r.html"
    result = runner.invoke(app, ["report", str(tmp_path / "out"), "--html", str(html)], env=ENV)
    assert f"wrote {html} (2 results)" in " ".join(result.stdout.split())


def test_superset_extras_are_not_counted_as_passed_atoms(tmp_path: Path) -> None:
    reference = calls(("search", {"q": "Paris"}), ("book", {"id": 7}))
    # made: one extra call, and not the reference's "book": recall 1/2, two atoms of three pass
    made = calls(("search", {"q": "Paris"}), ("weather", {"city": "Paris"}))
    inputs = tmp_path / "t.jsonl"
    inputs.write_text(conversation(made, reference).model_dump_json() + "\n")
    out = tmp_path / "out"
    args = ["score", str(inputs), "--metric", "tool_call_accuracy[order=superset]",
            "--out", str(out)]  # fmt: skip
    result = runner.invoke(app, [*args, "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    (row,) = load_results(out)
    assert row.score == 0.5 and row.verdict == "0"
    assert [a.passed for a in row.atoms or ()] == [True, False, True]  # the extra passes
    (metric,) = json.loads(result.stdout)["metrics"]
    assert (metric["atoms"], metric["atoms_passed"], metric["atom_units"]) == (0, 0, 0)
    text = runner.invoke(app, [*args, "--out", str(tmp_path / "out2")], env=ENV)
    assert text.exit_code == 0, text.output
    assert "atoms passed" not in text.stdout
