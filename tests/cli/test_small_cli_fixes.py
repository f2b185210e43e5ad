"""Regressions from the last trial: an empty JSON object names its file, an archive alone is
input unreadable (exit 3, as docs/errors.md says), one conversation is not "1 conversations", and
the long how-to-record-the-text hint of ``no_message_content`` is said once, with a count."""

from __future__ import annotations

import zipfile
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.testing import FakeModelServer
from agent_eval.testing._otlp import export_request, span

from ..run.goal_script import script_goal_judge, trace
from .test_score_cli import traces_file

ROOT = Path(__file__).resolve().parents[2]
ENV = {"COLUMNS": "200", "OPENAI_API_KEY": "test-key"}
runner = CliRunner()


@pytest.mark.parametrize("command", [["ingest"], ["show"]])
def test_an_empty_json_object_names_its_file(tmp_path: Path, command: list[str]) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("{}\n")
    result = runner.invoke(app, [*command, str(empty)], env=ENV)
    assert result.exit_code == 4, result.output
    flat = " ".join(result.stderr.split())
    assert f"{empty} holds no spans, log records or conversations" in flat


def test_an_archive_alone_is_input_unreadable_exit_3(tmp_path: Path) -> None:
    archive = tmp_path / "traces.zip"
    with zipfile.ZipFile(archive, "w") as handle:
        handle.write(ROOT / "fixtures" / "otel" / "pydantic-ai-otel.otlp.json", "t.json")
    result = runner.invoke(app, ["ingest", str(archive)], env=ENV)
    assert result.exit_code == 3, result.output
    assert "a zip archive: extract it (unzip -d DIR" in result.stderr
    beside = runner.invoke(
        app,
        ["ingest", str(archive), str(ROOT / "fixtures" / "otel" / "pydantic-ai-otel.otlp.json")],
    )
    assert beside.exit_code == 0, beside.output  # an archive beside traces costs only itself


def test_one_conversation_is_singular(tmp_path: Path) -> None:
    one = traces_file(tmp_path / "one.jsonl", trace("only", done=True))
    ingested = runner.invoke(app, ["ingest", str(one), "-o", str(tmp_path / "o.jsonl")], env=ENV)
    assert "-> 1 conversation\n" in ingested.stderr, ingested.stderr
    closed = "http://127.0.0.1:9/v1"  # the discard port: nothing answers
    (tmp_path / "agent-eval.toml").write_text("[score]\ntransport-retries = 0\n")
    scored = runner.invoke(
        app,
        ["score", str(one), "--judge", "m", "--base-url", closed, "--out", str(tmp_path / "r"),
         "--config", str(tmp_path / "agent-eval.toml")],
        env=ENV,
    )  # fmt: skip
    assert scored.exit_code == 4, scored.output
    flat = " ".join(scored.stderr.split())
    assert "nothing was scored: the conversation errored (mostly judge_unavailable: 1 of 1)" in flat
    assert "1 conversations" not in flat


def test_formatters_diff_of_one_conversation_is_singular(
    tmp_path: Path, fake_server: FakeModelServer
) -> None:
    script_goal_judge(fake_server)
    one = traces_file(tmp_path / "one.jsonl", trace("only", done=True))
    result = runner.invoke(app, ["formatters", "diff", "json@1", "transcript@1", str(one)], env=ENV)
    assert result.stdout.rstrip().endswith("1 conversation, 1 rendered differently")


def test_the_no_message_content_hint_is_said_once_with_a_count(tmp_path: Path) -> None:
    chats = [
        span(f"{n:02x}" * 16, f"{n:02x}" * 8, "chat gpt-4o-mini", kind=3,
             attributes={"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
                         "gen_ai.usage.input_tokens": 10, "gen_ai.usage.output_tokens": 5})
        for n in (1, 2, 3)
    ]  # fmt: skip
    spans = tmp_path / "spans.otlp.jsonl"
    spans.write_bytes(orjson.dumps(export_request(chats)) + b"\n")
    result = runner.invoke(app, ["ingest", str(spans)], env=ENV)
    assert result.exit_code == 4, result.output
    err = result.stderr
    skipped = [line for line in err.splitlines() if line.startswith("skipped:")]
    assert len(skipped) == 3 and all(line.endswith("(why: below)") for line in skipped), err
    assert err.count("turn content capture on") == 1, err
    [why] = [line for line in err.splitlines() if line.startswith("why ")]
    assert why.startswith("why 3 skipped conversations (no_message_content) have no text: the ")
