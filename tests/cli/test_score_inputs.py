"""``agent-eval score`` inputs: the ingest accounting on stderr; unreadable files never vanish."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agent_eval.store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing.otlp import export_request, span

from ..engine.goal_script import script_goal_judge, trace
from .test_score_cli import cell, judge_args, score, traces_file

pytestmark = pytest.mark.usefixtures("_env")


@pytest.fixture
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def mixed_inputs(tmp_path: Path) -> Path:
    """One good file of 2 conversations, garbage, truncated JSON, OTLP with a bad span id."""
    folder = tmp_path / "in"
    folder.mkdir()
    traces_file(folder / "good.jsonl", trace("a", done=True), trace("b", done=False))
    (folder / "garbage.dat").write_bytes(b"\x00\x01 not a trace")
    (folder / "trunc.json").write_bytes(b'{"resourceSpans": [')
    bad = span("0af7651916cd43dd8448eb211c80319c", "zzzz", "broken")
    (folder / "badspan.json").write_bytes(orjson.dumps(export_request([bad])))
    return folder


def assert_accounted(err: str) -> None:
    assert "4 file(s), 2 with errors" in err
    assert "garbage.dat: no container recognises this file" in err
    assert "trunc.json:1: not valid JSON" in err
    assert "spans: 0 used + 1 ignored = 1 read" in err and "invalid_span_id 1" in err
    assert "2 unreadable file(s) produced no conversations" in err
    assert "read but gave no conversation" in err and "badspan.json" in err


def test_dry_run_reports_the_files_it_could_not_read(tmp_path: Path) -> None:
    # regression: score listed nothing about unreadable files (ingest and show did)
    code, out, err = score(str(mixed_inputs(tmp_path)), "--dry-run", "--judge", "m")
    assert code == 0, err
    assert_accounted(err)
    assert cell(out, "conversations") == "2"


def test_run_reports_the_files_it_could_not_read(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    out_dir = tmp_path / "run"
    code, out, err = score(str(mixed_inputs(tmp_path)), *judge_args(fake_server, out_dir))
    assert code == 0, err
    assert_accounted(err)
    assert "scored + skipped + errored = input: 2 + 0 + 0 = 2" in out
    assert {r.conversation_id for r in load_results(out_dir)} == {"a", "b"}


def test_nothing_readable_exits_2_naming_each_file(tmp_path: Path) -> None:
    folder = mixed_inputs(tmp_path)
    (folder / "good.jsonl").unlink()
    (folder / "badspan.json").unlink()
    code, out, err = score(str(folder), "--dry-run")
    assert code == 2
    assert "no input could be read" in err and "garbage.dat" in err and "trunc.json" in err
    assert "Traceback" not in out + err
