"""``agent-eval score`` inputs: the ingest accounting on stderr; unreadable files never vanish."""

from __future__ import annotations

from pathlib import Path

import orjson
import pytest

from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer
from agent_eval.testing._otlp import export_request, span

from ..run.goal_script import script_goal_judge, trace
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
    assert "ingested 4 file(s)" in err  # the summary of `agent-eval ingest`, reused
    assert "garbage.dat" in err and "no container recognises" in err
    assert "trunc.json:1: not valid JSON" in err
    assert "spans: 0 used + 1 ignored = 1 read" in err and "invalid_span_id 1" in err
    assert "1 unreadable file(s) produced no conversations" in err  # trunc.json
    assert "1 file(s) not recognised (listed above) are not scored" in err  # garbage.dat
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
    assert "scored + skipped + errored = units: 2 + 0 + 0 = 2" in out
    assert {r.conversation_id for r in load_results(out_dir)} == {"a", "b"}


def test_nothing_readable_exits_2_naming_each_file(tmp_path: Path) -> None:
    folder = mixed_inputs(tmp_path)
    (folder / "good.jsonl").unlink()
    (folder / "badspan.json").unlink()
    code, out, err = score(str(folder), "--dry-run")
    assert code == 3
    assert "no input could be read" in err and "garbage.dat" in err and "trunc.json" in err
    assert "Traceback" not in out + err


def test_references_matching_no_conversation_warn(tmp_path: Path) -> None:
    # regression: a reference file keyed by other ids was accepted without a word
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=True))
    (tmp_path / "none.jsonl").write_text('{"conversation_id": "A-1", "reference": "x"}\n')
    (tmp_path / "some.csv").write_text("conversation_id,reference\nb,y\nzz,w\n")
    args = (str(inputs), "--dry-run", "--judge", "m", "--with-reference", "--references")
    code, out, err = score(*args, str(tmp_path / "none.jsonl"))
    assert code == 0, err
    assert "warning: none of the 1 conversation id(s) in" in err
    assert "the file has 'A-1'; the input has 'a', 'b'" in err
    assert cell(out, "skipped") == "2 (missing_reference: 2)"
    code, out, err = score(*args, str(tmp_path / "some.csv"))
    assert code == 0, err
    assert "references: 1 of 2 id(s) in" in err and "warning" not in err
    assert cell(out, "to score") == "1"


def test_companion_files_are_not_called_empty(tmp_path: Path) -> None:
    folder = tmp_path / "in"
    folder.mkdir()
    traces_file(folder / "good.jsonl", trace("a", done=True))
    (folder / "labels.jsonl").write_text('{"conversation_id": "a", "label": "1"}\n')
    code, _, err = score(str(folder), "--dry-run", "--judge", "m")
    assert code == 0, err
    assert "labels.jsonl: not a trace file" in err
    assert "gave no conversation" not in err and "unreadable" not in err


def test_langfuse_chatml_files_are_not_recognised_not_unreadable(shared_data: Path) -> None:
    """Trial: score called Langfuse's ``*.chatml.json`` "unreadable file(s)"; ingest "not
    recognised". They are not errors (no container recognises them): one word, ingest's."""
    otel = shared_data / "otel"
    chatml = otel / "vercel-ai__langfuse__aisdk-tools.chatml.json"
    code, _, err = score(str(otel / "vercel-ai__langfuse__aisdk-tools.trace.json"), str(chatml),
                         "--dry-run", "--judge", "m")  # fmt: skip
    assert code == 0, err
    flat = " ".join(err.split())
    assert "unreadable" not in flat and "error" not in flat
    assert "ingested 2 file(s), 1 not recognised" in flat
    assert f"not recognised: {chatml}" in flat
    assert "1 file(s) not recognised (listed above) are not scored" in flat
