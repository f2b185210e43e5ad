"""``agent-eval review``: pick units for people, write the file, take the labels back."""

from __future__ import annotations

import csv
import json
from pathlib import Path

from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer

from . import judge_script
from .test_compare_stability_cmds import ENV, LABELS, SPECS, _compare, _judge_args

runner = CliRunner()


def _review(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["review", *args], env=ENV)
    return result.exit_code, result.stdout, result.stderr


def _read_csv(path: Path) -> list[dict[str, str]]:
    with path.open(newline="") as handle:
        return list(csv.DictReader(handle))


def test_flips_round_trip_into_calibrate_and_the_store(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS, LABELS)
    out = tmp_path / "out"
    _compare(fake_server, traces, out)
    review = tmp_path / "review.csv"
    code, stdout, stderr = _review(str(out), "--select", "flips", "--out", str(review))
    assert code == 0, stderr
    assert "wrote 2 unit(s)" in stdout
    rows = _read_csv(review)
    assert [r["conversation_id"] for r in rows] == ["c2", "c3"]
    first = rows[0]
    assert json.loads(first["verdicts"]) == {"json@1": "0", "transcript@1": "1"}
    assert first["selected_because"] == "verdicts differ between formatters"
    assert "CONV-c2" in first["rendering"] and first["label"] == "" and first["unit_id"]
    assert json.loads(first["reasons"])["transcript@1"] == "decided CONV-c2"
    # a reviewer labels c2 only; c3 stays empty
    rows[0].update(label="1", labeler="ana", labeled_at="2026-12-01T10:00:00Z", notes="ok")
    with review.open("w", newline="") as handle:
        writer = csv.DictWriter(handle, fieldnames=list(rows[0]))
        writer.writeheader()
        writer.writerows(rows)
    before = load_results(out)
    calibrated = runner.invoke(
        app,
        ["calibrate", str(out), "--labels", str(review), "--formatter", "transcript@1", "--json"],
        env=ENV,
    )
    assert calibrated.exit_code == 0, calibrated.output
    cal = json.loads(calibrated.stdout)
    assert (cal["n"], cal["n_agree"]) == (1, 1)
    html = tmp_path / "r.html"
    report = runner.invoke(app, ["report", str(out), "--html", str(html), "--labels", str(review)])
    assert report.exit_code == 0, report.output
    assert "Calibration" in html.read_text()
    code, stdout, stderr = _review(str(out), "--import", str(review))
    assert code == 0, stderr
    assert "stored 1 human label(s)" in stdout
    with ResultStore(out) as store:
        (label,) = store.human_labels()
    assert (label.conversation_id, label.label, label.labeler, label.notes) == (
        "c2",
        1,
        "ana",
        "ok",
    )
    assert label.labeled_at == "2026-12-01T10:00:00Z" and label.source.startswith(str(review))
    assert load_results(out) == before  # verdicts untouched


def test_errors_sample_and_disagreements(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", SPECS, LABELS)
    out = tmp_path / "out"
    score = runner.invoke(
        app,
        ["score", str(traces), "--formatter", "transcript@1", *_judge_args(fake_server),
         "--out", str(out)],
        env=ENV,
    )  # fmt: skip
    assert score.exit_code == 0, score.output
    path = tmp_path / "r.jsonl"
    code, stdout, _ = _review(str(out), "--select", "errors", "--out", str(path))
    assert code == 4 and "wrote 0 unit(s)" in stdout  # nothing errored
    code, _, _ = _review(str(out), "--select", "sample:3", "--seed", "7", "--out", str(path))
    picked = [json.loads(line)["conversation_id"] for line in path.read_text().splitlines()]
    _review(str(out), "--select", "sample:3", "--seed", "7", "--out", str(path))
    again = [json.loads(line)["conversation_id"] for line in path.read_text().splitlines()]
    assert code == 0 and len(picked) == 3 and picked == again
    code, _, stderr = _review(str(out), "--select", "disagreements", "--out", str(path))
    assert code == 2 and "needs labels" in stderr
    code, _, stderr = _review(
        str(out), "--select", "disagreements", "--inputs", str(traces), "--out", str(path)
    )
    assert code == 0, stderr
    verdicts = {r.conversation_id: r.verdict for r in load_results(out)}
    expected = sorted(c for c, label in LABELS.items() if int(verdicts[c] or -1) != label)
    rows = [json.loads(line) for line in path.read_text().splitlines()]
    assert [r["conversation_id"] for r in rows] == expected
    assert rows[0]["selected_because"].startswith("verdict ")


def test_bad_selections_are_usage_errors(tmp_path: Path) -> None:
    code, _, stderr = _review(str(tmp_path), "--select", "nope", "--out", "x.csv")
    assert code == 2 and "'nope' is not a rule" in stderr
    code, _, stderr = _review(str(tmp_path), "--select", "sample:0", "--out", "x.csv")
    assert code == 2 and "needs a positive N" in stderr
    code, _, stderr = _review(str(tmp_path), "--select", "errors", "--out", "x.csv")
    assert code == 3 and "holds no runs" in stderr  # a run that cannot be used: 3, as report
    code, _, stderr = _review(str(tmp_path), "--select", "errors")
    assert code == 2 and "--out FILE" in stderr
