"""trial9 #8: a third-party formatter changed without a version bump gets a new fingerprint under
the same ``name@version``; ``runs diff``, ``report --compare``, ``calibrate`` and ``compare`` warn
where they meet its rows of two runs, and ``formatters lock --check`` lists the formatters the
lock does not cover (``--strict`` fails on them)."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.formatting import formatters
from agent_eval.run._formatter_drift import formatter_drift
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace

runner = CliRunner()

PLUGIN = """\
from agent_eval.formatting import Formatter, NoParams


class Drifty(Formatter[NoParams]):
    name = "drifty"
    version = 1

    def render(self, trace):
        return "\\n".join(f"{{m.role}}: {{m.content}}"{upper} for m in trace.messages)
"""


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield
    if "drifty@1" in formatters:
        formatters.unregister("drifty@1")


def _plugin(tmp_path: Path, version: str, upper: bool) -> Path:
    """``drifty@1`` as released (``v1``), and its ``render`` changed without a bump (``v2``)."""
    path = tmp_path / version / "drifty.py"
    path.parent.mkdir()
    path.write_text(PLUGIN.format(upper=".upper()" if upper else ""))
    return path


def _invoke(args: list[str], plugin: Path) -> tuple[int, str, str]:
    """One command with ``plugin`` loaded, unloaded after (a fresh process would not have it)."""
    try:
        result = runner.invoke(app, [*args, "--formatter-path", str(plugin)])
    finally:
        if "drifty@1" in formatters:
            formatters.unregister("drifty@1")
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


@pytest.fixture
def two_runs(fake_server: FakeModelServer, tmp_path: Path) -> tuple[Path, Path, Path, Path]:
    """``inputs``, the two plugin files, and runs A (v1) and B (v2) of the same inputs."""
    script_goal_judge(fake_server)
    inputs = tmp_path / "traces.jsonl"
    traces = [trace("c1", done=True), trace("c2", done=False)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    v1, v2 = _plugin(tmp_path, "v1", upper=False), _plugin(tmp_path, "v2", upper=True)
    judge = ["--judge", "fake", "--base-url", fake_server.base_url, "--no-cache"]
    for plugin, out in ((v1, "runs/a"), (v2, "runs/b")):
        args = ["score", str(inputs), "--metric", "goal_accuracy", "--formatter", "drifty@1"]
        code, _, err = _invoke([*args, *judge, "--out", out], plugin)
        assert code == 0, err
    return inputs, v1, v2, tmp_path / "runs"


def _expected(runs: Path) -> str:
    """The warning's head, from the rows each run recorded."""
    (a,), (b,) = ({(r.formatter_fingerprint, r.run_id) for r in load_results(runs / d)}
                  for d in ("a", "b"))  # fmt: skip
    assert a[0] != b[0]  # the changed render has another fingerprint
    return (
        f"formatter drifty@1 was recorded with 2 fingerprints ({a[0][:12]} in run {a[1]}; "
        f"{b[0][:12]} in run {b[1]}): its rendering changed without a version bump"
    )


def test_runs_diff_and_report_compare_warn_on_one_release_with_two_fingerprints(
    two_runs: tuple[Path, Path, Path, Path], tmp_path: Path
) -> None:
    _, _, _, runs = two_runs
    expected = _expected(runs)
    diff = runner.invoke(app, ["runs", "diff", str(runs / "a"), str(runs / "b")])
    assert diff.exit_code == 0, diff.output
    err = " ".join(diff.stderr.split())
    assert f"warning: {expected}" in err
    assert "give the changed formatter a new version (drifty@2) and score again" in err
    as_json = runner.invoke(app, ["runs", "diff", str(runs / "a"), str(runs / "b"), "--json"])
    (drift,) = json.loads(as_json.stdout)["formatter_drift"]
    assert drift.startswith(expected)
    # the same run against itself: one fingerprint, no warning
    same = runner.invoke(app, ["runs", "diff", str(runs / "a"), str(runs / "a")])
    assert "fingerprints" not in same.stderr

    html = tmp_path / "r.html"
    report = runner.invoke(
        app, ["report", str(runs / "a"), "--compare", str(runs / "b"), "--html", str(html)]
    )
    assert report.exit_code == 0, report.output
    assert f"warning: {expected}" in " ".join(report.stderr.split())
    alone = runner.invoke(app, ["report", str(runs / "a"), "--html", str(html)])
    assert alone.exit_code == 0 and "fingerprints" not in alone.stderr


def test_calibrate_warns_when_the_run_directory_mixes_two_fingerprints(
    two_runs: tuple[Path, Path, Path, Path], fake_server: FakeModelServer, tmp_path: Path
) -> None:
    inputs, _, v2, runs = two_runs
    rows = load_results(runs / "a") + load_results(runs / "b")
    (drift,) = formatter_drift(rows)
    assert drift.formatter == "drifty@1" and len(drift.runs) == 2
    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,label\nc1,1\nc2,0\n")
    ok = runner.invoke(app, ["calibrate", str(runs / "a"), "--labels", str(labels)])
    assert ok.exit_code == 0, ok.output
    assert "fingerprints" not in ok.stderr
    # run B's rows written to run A's directory (a second score into the same --out)
    judge = ["--judge", "fake", "--base-url", fake_server.base_url, "--no-cache"]
    args = ["score", str(inputs), "--metric", "goal_accuracy", "--formatter", "drifty@1"]
    code, _, err = _invoke([*args, *judge, "--out", str(runs / "a")], v2)
    assert code == 0, err
    mixed = runner.invoke(app, ["calibrate", str(runs / "a"), "--labels", str(labels)])
    err = " ".join(mixed.stderr.split())
    assert "warning: formatter drifty@1 was recorded with 2 fingerprints" in err
    assert mixed.exit_code == 2
    assert (
        "one formatter name@version with two fingerprints (its rendering changed without a "
        "version bump): these rows cannot be told apart by --formatter; use one run's rows"
    ) in err


def test_compare_warns_when_its_output_directory_holds_the_release_with_another_fingerprint(
    two_runs: tuple[Path, Path, Path, Path], fake_server: FakeModelServer
) -> None:
    inputs, v1, v2, _ = two_runs
    args = ["compare", str(inputs), "--formatters", "drifty@1,transcript@1",
            "--metric", "goal_accuracy", "--judge", "fake", "--base-url", fake_server.base_url,
            "--no-cache", "--out", "runs/cmp"]  # fmt: skip
    code, _, err = _invoke(args, v1)
    assert code == 0, err
    assert "fingerprints" not in err
    code, _, err = _invoke(args, v2)
    assert code == 0, err
    assert "warning: formatter drifty@1 was recorded with 2 fingerprints" in err
    assert "transcript@1 was recorded" not in err


def test_lock_check_lists_formatters_the_lock_does_not_cover_and_strict_fails(
    tmp_path: Path,
) -> None:
    plugin = _plugin(tmp_path, "v1", upper=False)
    plain = runner.invoke(app, ["formatters", "lock", "--check"])
    assert plain.exit_code == 0, plain.output
    assert "not covered" not in plain.stderr + plain.stdout
    code, out, err = _invoke(["formatters", "lock", "--check"], plugin)
    assert code == 0, err
    head = plain.stdout.strip()
    assert re.fullmatch(r"lock OK: \d+ formatter identities match", head)
    assert " ".join(out.split()) == (
        f"{head}; 1 registered identity not covered by it (listed on stderr; --strict fails on "
        "them)"
    )
    assert re.search(
        r"warning: not covered by this lock: drifty@1 \(module agent_eval_user_formatters\."
        r"drifty_[0-9a-f]{12}, fingerprint [0-9a-f]{12}\): nothing notices a change to its "
        r"rendering without a version bump",
        err,
    ), err
    code, _, err = _invoke(["formatters", "lock", "--check", "--strict"], plugin)
    assert code == 1
    assert "error: not covered by this lock: drifty@1" in err
    strict_alone = runner.invoke(app, ["formatters", "lock", "--strict"])
    assert strict_alone.exit_code == 2
    assert "--strict applies to --check" in strict_alone.stderr
