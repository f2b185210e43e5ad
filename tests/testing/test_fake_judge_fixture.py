"""The bundled ``fixtures/fake-judge.json`` answers every metric the docs run it with."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]
RECORD = (
    '{"id": "returns-1", "question": "Can I return the kettle?", "contexts": [{"id": "policy", '
    '"text": "Returns are accepted within 14 calendar days of receipt."}], '
    '"answer": "You can return it within 14 days, and return shipping is free."}\n'
)


def test_goal_faithfulness_and_groundedness_all_end_ok(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regression: the script knew only goal accuracy; claim metrics ended judge_unavailable
    monkeypatch.chdir(tmp_path)
    load_script(ROOT / "fixtures" / "fake-judge.json", fake_server)
    (tmp_path / "returns.jsonl").write_text(RECORD)
    metrics = "goal_accuracy,faithfulness,faithfulness[per_statement=true],groundedness"
    result = CliRunner().invoke(
        app,
        ["score", "returns.jsonl", "--metric", metrics, "--judge", "fake",
         "--base-url", fake_server.base_url, "--out", "out"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stderr
    rows = load_results(tmp_path / "out")
    assert {r.metric: (r.status, r.score) for r in rows} == {
        "goal_accuracy@2": ("ok", 1.0),
        "faithfulness@2": ("ok", 1.0),
        "faithfulness@2[per_statement=true]": ("ok", 1.0),
        "groundedness@2": ("ok", 0.0),  # its one claim is scripted UNSUPPORTED
    }


def test_the_shipped_criteria_files_score_with_the_bundled_fake_judge(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regression (trial of the merged main): fake-judge.json had no CriteriaVerdict rule, so
    # the docs' criteria examples ended judge_unavailable against the bundled fake server
    monkeypatch.chdir(tmp_path)
    load_script(ROOT / "fixtures" / "fake-judge.json", fake_server)
    (tmp_path / "returns.jsonl").write_text(RECORD)
    for example in sorted((ROOT / "examples" / "criteria").iterdir()):
        out = tmp_path / example.stem
        result = CliRunner().invoke(
            app,
            ["score", "returns.jsonl", "--metric", f"criteria:{example}", "--judge", "fake",
             "--base-url", fake_server.base_url, "--out", str(out), "--no-cache"],
        )  # fmt: skip
        assert result.exit_code == 0, result.stderr
        rows = load_results(out)
        assert [(r.status, r.verdict) for r in rows] == [("ok", "1")] * len(rows) and rows
