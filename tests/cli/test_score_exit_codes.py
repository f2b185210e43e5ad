"""``agent-eval score`` exit codes: 1 with one line naming the reason when nothing was scored."""

from __future__ import annotations

import json
import socket
from collections import Counter
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from .test_readme_first_command import ROOT, _first_command
from .test_score_cli import score, traces_file


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more


def inputs(tmp_path: Path) -> str:
    return str(traces_file(tmp_path / "t.jsonl", *(trace(c, done=True) for c in "abc")))


def test_dead_judge_endpoint_exits_1_naming_the_error_and_the_errors_command(
    tmp_path: Path,
) -> None:
    # regression: a run in which every conversation errored exited 0
    (tmp_path / "agent-eval.toml").write_text("[score]\ntransport-retries = 0\n")
    out_dir = tmp_path / "dead"
    code, out, err = score(
        inputs(tmp_path),
        *("--judge", "m", "--base-url", closed_port_url(), "--api-key-env", "MY_JUDGE_KEY"),
        *("--out", str(out_dir)),
    )
    assert code == 4, out + err
    assert "scored + skipped + errored = units: 0 + 0 + 3 = 3" in out
    (line,) = [x for x in err.splitlines() if "nothing was scored" in x]
    assert "all 3 conversations errored (mostly judge_unavailable: 3 of 3)" in line
    assert f"agent-eval errors {out_dir}" in line


def test_all_skipped_exits_1_naming_the_skip_reason(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    code, out, err = score(
        inputs(tmp_path),
        "--with-reference",  # the traces carry no reference
        *("--judge", "m", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY"),
        *("--out", str(tmp_path / "skipped")),
    )
    assert code == 4, out + err
    assert "nothing was scored: all 3 conversations were skipped" in err
    assert "(mostly missing_reference: 3 of 3)" in err
    assert not fake_server.requests


def test_some_scored_exits_0(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    traces = traces_file(
        tmp_path / "t.jsonl", trace("a", done=True, reference="r"), trace("b", done=True)
    )
    code, out, err = score(
        str(traces),
        "--with-reference",
        *("--judge", "m", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY"),
        *("--out", str(tmp_path / "some")),
    )
    assert code == 0, out + err
    assert "nothing was scored" not in err


def test_a_metric_that_errored_on_every_unit_exits_4_beside_metrics_that_scored(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """trial9 #5: the README's first command with a key but no judge answering exited 0."""
    monkeypatch.setenv("OPENAI_API_KEY", "sk-test-no-route")
    # no route to the endpoint (offline: a closed local port; the model must then be named)
    monkeypatch.setenv("OPENAI_BASE_URL", closed_port_url())
    (tmp_path / "agent-eval.toml").write_text("[score]\ntransport-retries = 0\n")
    args = [str(ROOT / a) if a.startswith("fixtures/") else a for a in _first_command()]
    out_dir = tmp_path / "fixtures"
    args[args.index("--out") + 1] = str(out_dir)
    result = CliRunner().invoke(app, [*args, "--judge", "gpt-4o-mini", "--json"])
    assert result.exit_code == 4, result.stderr
    err = " ".join(result.stderr.split())
    n = len(json.loads((ROOT / "fixtures" / "expected.json").read_text())["conversations"])
    assert (
        f"error: goal_accuracy@2: nothing was scored: all {n} conversations errored (mostly "
        f"judge_unavailable: {n} of {n}); the other metrics' results are written; list the "
        f"errors with: agent-eval errors {out_dir}"
    ) in err
    assert err.count("nothing was scored") == 1  # the judge-free metrics scored
    payload = json.loads(result.stdout)
    assert payload["exit_code"] == 4
    counts = {m["metric"]: (m["scored"], m["errored"]) for m in payload["metrics"]}
    assert counts == {
        "tool_call_accuracy@1": (n, 0),
        "trajectory_match@1": (n, 0),
        "tool_errors@1": (n, 0),
        "loops@1": (n, 0),
        "goal_accuracy@2": (0, n),
    }
    statuses = Counter((r.metric, r.status) for r in load_results(out_dir))
    assert statuses[("goal_accuracy@2", "error")] == n
    assert statuses[("loops@1", "ok")] == n


def test_a_metric_skipped_on_every_unit_beside_one_that_scored_exits_0(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Skips with a reason are not a metric that failed to run: only errors are."""
    script_goal_judge(fake_server)
    code, out, err = score(
        inputs(tmp_path),
        *("--metric", "goal_accuracy,faithfulness"),  # no retrievals: faithfulness no_context
        *("--judge", "m", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY"),
        *("--out", str(tmp_path / "skips")),
    )
    assert code == 0, out + err
    assert "nothing was scored" not in err
