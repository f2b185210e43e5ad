"""``compare`` and ``stability`` record their command line (secrets removed) like ``score``;
``--cache-path`` names the judge-call cache file for both."""

from __future__ import annotations

import shlex
import sys
from pathlib import Path

import pytest
from markupsafe import escape as html_escape
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.run._store import ResultStore
from agent_eval.testing import FakeModelServer

from . import judge_script

KEY = "sk-test-not-a-real-key"
ENV = {"OPENAI_API_KEY": KEY, "COLUMNS": "200"}


@pytest.mark.parametrize(
    "command",
    [["compare", "--formatters", "transcript@1,json@1"], ["stability", "--repeats", "2"]],
)
def test_command_is_recorded_redacted_and_shown_in_the_report(
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    command: list[str],
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": ""})
    out, cache = tmp_path / "out", tmp_path / "shared-cache.db"
    args = [
        *command, str(traces), "--judge", "fake-model", "--base-url", fake_server.base_url,
        "--out", str(out), "--cache-path", str(cache),
    ]  # fmt: skip
    monkeypatch.setattr(sys, "argv", ["agent-eval", *args, "--api-key", "hunter2", f"x{KEY}"])
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    with ResultStore(out) as store:
        (run,) = store.runs()
    assert run.argv == ("agent-eval", *args, "--api-key", "***", "x***")
    assert cache.is_file() and not (out / "judge-cache.db").exists()
    html = tmp_path / "r.html"
    shown = CliRunner().invoke(app, ["report", str(out), "--html", str(html)])
    assert shown.exit_code == 0, shown.output
    text = html.read_text()
    assert "(not recorded)" not in text
    assert f"<code>{html_escape(shlex.join(run.argv))}</code>" in text
    assert KEY not in text and "hunter2" not in text
