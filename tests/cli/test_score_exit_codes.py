"""``agent-eval score`` exit codes: 1 with one line naming the reason when nothing was scored."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
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
