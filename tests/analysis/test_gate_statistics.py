"""A ``--gate`` naming a statistic the command does not measure is a usage error (exit 2)."""

from __future__ import annotations

from pathlib import Path

import pytest
import typer
from typer.testing import CliRunner

from agent_eval.analysis._gates import FLAG_SOURCE, GateCount, load_gates, parse_gate
from agent_eval.cli._analysis_options import apply_gates
from agent_eval.cli._app import app
from agent_eval.testing import FakeModelServer

from . import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}


def _one_line(text: str) -> str:
    return " ".join(text.split())


def test_score_refuses_an_accuracy_gate(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": ""})
    args = [
        "score", str(traces), "--judge", "fake-model", "--base-url", fake_server.base_url,
        "--out", str(tmp_path / "out"), "--gate", "accuracy>=0.7/15",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 2, result.output
    err = _one_line(result.stderr)
    assert "--gate 'accuracy' names accuracy, which this command does not measure here" in err
    assert "it measures: mean_score" in err and "not applicable" not in err


@pytest.mark.parametrize(
    ("command", "gate", "measured"),
    [
        ("calibrate", "agreement>=0.7/15", "it measures: accuracy"),
        ("compare", "unanimity>=0.7/15", "it measures: mean_score, agreement, accuracy"),
        ("stability", "x=mean_score>=0.7/15", "it measures: unanimity"),
    ],
)
def test_analysis_commands_refuse_before_any_work(
    tmp_path: Path, command: str, gate: str, measured: str
) -> None:
    extra = ["--formatters", "a@1,b@1"] if command == "compare" else []
    args = [command, str(tmp_path / "missing"), *extra, "--gate", gate]
    if command == "calibrate":
        args = [command, "--predictions", "p.csv", "--labels", "l.csv", "--gate", gate]
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 2, result.output
    err = _one_line(result.stderr)
    assert "does not measure here" in err and measured in err


def test_apply_gates_exits_2_for_an_unmeasured_flag_and_notes_config_gates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "agent-eval.toml"
    config.write_text('[gates.people]\nstatistic = "accuracy"\nthreshold = 0.8\nitems = 3\n')
    (people,) = load_gates(config)
    assert people.source == str(config) and parse_gate("accuracy>=0.8/3").source == FLAG_SOURCE
    counts = {"mean_score": [GateCount(subject="run", successes=1, n=2)]}
    assert apply_gates([people], counts) == []  # another command's gate: only noted
    assert "config gate 'people'" in _one_line(capsys.readouterr().err)
    with pytest.raises(typer.Exit) as info:
        apply_gates([parse_gate("accuracy>=0.7/15")], counts)
    assert info.value.exit_code == 2
    assert "it measures: mean_score" in _one_line(capsys.readouterr().err)
