"""Issue 12 at the command line: exit codes, atomic output, escaping, the lock, redaction."""

from __future__ import annotations

import errno
import os
import sqlite3
import subprocess
import sys
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval._redaction import RedactingFilter, redact_text, redact_url, userinfo_auth
from agent_eval._terminal_text import escape_control
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.cli import app
from agent_eval.cli._exit_codes import (
    EXIT_GATE,
    EXIT_INPUT,
    EXIT_NOTHING,
    EXIT_OUTPUT,
    EXIT_USAGE,
    exit_code,
)
from agent_eval.cli._score_cmds import redact_argv
from agent_eval.errors import ConfigError, DecodeError, NoConversationError, OutputError
from agent_eval.ingest import ingest
from agent_eval.run._store import LOCK_NAME, OutputLock, load_results
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from .test_score_cli import traces_file
from .test_score_exit_codes import closed_port_url

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otel"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("MY_JUDGE_KEY", "sk-test")
    monkeypatch.chdir(tmp_path)


def invoke(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.stdout, result.stderr


def inputs(tmp_path: Path) -> str:
    return str(traces_file(tmp_path / "t.jsonl", *(trace(c, done=True) for c in "abc")))


# --- exit codes ------------------------------------------------------------------------------


def test_each_kind_of_error_has_its_own_code() -> None:
    assert exit_code(DecodeError("bad", path="x.json")) == EXIT_INPUT == 3
    assert exit_code(NoConversationError("none")) == EXIT_NOTHING == 4
    assert exit_code(OutputError("disk full")) == EXIT_OUTPUT == 5
    assert exit_code(ConfigError("bad flag")) == EXIT_USAGE == 2
    assert EXIT_GATE == 1


def test_ingest_tells_unreadable_from_nothing_found(tmp_path: Path) -> None:
    bad = tmp_path / "bad.otlp.json"
    bad.write_bytes(b'{"resourceSpans": [')
    code, _, err = invoke("ingest", str(bad))
    assert code == 3 and "bad.otlp.json" in err
    empty = tmp_path / "empty.otlp.json"
    empty.write_bytes(b'{"resourceSpans": []}')
    code, _, err = invoke("ingest", str(empty))
    assert code == 4 and "no conversation found" in err


def test_one_bad_file_in_a_directory_costs_only_itself(tmp_path: Path) -> None:
    # regression: one bad file in a directory gave 0 conversations and exit 1
    folder = tmp_path / "in"
    folder.mkdir()
    (folder / "a.otlp.json").write_bytes((FIXTURES / "openinference-openai.otlp.json").read_bytes())
    (folder / "b.otlp.json").write_bytes(b'{"resourceSpans": ' + b"[" * 3000 + b"]" * 3000 + b"}")
    out = tmp_path / "t.jsonl"
    code, _, err = invoke("ingest", str(folder), "--out", str(out))
    assert code == 0, err
    lines = out.read_bytes().splitlines()
    assert len(lines) >= 1 and all(AgentTrace.model_validate_json(x) for x in lines)
    assert "error:" in err and "b.otlp.json" in err


def test_a_full_disk_leaves_the_output_untouched_with_exit_5(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regression: a full disk gave an OSError traceback and a line cut in half
    out = tmp_path / "t.jsonl"
    out.write_text("previous content\n")

    def full(fd: int) -> None:
        raise OSError(errno.ENOSPC, "No space left on device")

    monkeypatch.setattr(os, "fsync", full)
    code, _, err = invoke("ingest", str(FIXTURES), "--out", str(out))
    assert code == 5
    assert "No space left on device" in err and "is unchanged" in err and "Traceback" not in err
    assert out.read_text() == "previous content\n"
    assert sorted(p.name for p in tmp_path.iterdir()) == ["t.jsonl"]  # no temporary file left


def test_ingest_out_is_complete_lines_only(tmp_path: Path) -> None:
    out = tmp_path / "t.jsonl"
    code, _, err = invoke("ingest", str(FIXTURES), "--out", str(out))
    assert code == 0, err
    data = out.read_bytes()
    expected = len(ingest([str(FIXTURES)]).collect())
    assert data.endswith(b"\n") and len(data.splitlines()) == expected > 0


def test_compare_and_stability_exit_4_when_nothing_was_scored(tmp_path: Path) -> None:
    # regression: both exited 0 when every judge call failed ("McNemar p 1.0000" over 0 pairs)
    (tmp_path / "agent-eval.toml").write_text("[score]\ntransport-retries = 0\n")
    judge = ("--judge", "m", "--base-url", closed_port_url(), "--api-key-env", "MY_JUDGE_KEY")
    traces = inputs(tmp_path)
    code, _, err = invoke(
        "compare", traces, "--formatters", "transcript@1,json@1", *judge, "--out", "cmp"
    )
    assert code == 4, err
    assert "nothing to compare" in err and "agent-eval errors" in err
    n = len(ingest([traces]).collect())
    assert f"transcript@1 0 ok, 0 skipped, {n} errored, json@1 0 ok, 0 skipped, {n} errored" in err
    code, _, err = invoke(
        "stability", traces, "--repeats", "2", "--formatter", "json@1", *judge, "--out", "st"
    )
    assert code == 4, err
    assert "nothing measured" in err and "agent-eval errors st" in err


# --- the lock --------------------------------------------------------------------------------


def test_a_second_run_on_the_same_out_fails_clearly(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: two score processes on one --out both judged everything
    script_goal_judge(fake_server)
    out = tmp_path / "run"
    out.mkdir()
    args = ("--judge", "m", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY")
    lock = OutputLock(out)  # another run holds it
    try:
        code, _, err = invoke("score", inputs(tmp_path), *args, "--out", str(out))
    finally:
        lock.release()
    assert code == 5
    assert f"in use by another agent-eval run (pid {os.getpid()})" in err
    assert fake_server.requests == []  # nothing judged
    code, _, err = invoke("score", inputs(tmp_path), *args, "--out", str(out))
    assert code == 0, err
    assert not (out / LOCK_NAME).exists()


# --- terminal output -------------------------------------------------------------------------


def test_escape_control_shows_escapes_and_keeps_newlines() -> None:
    assert (
        escape_control("\x1b[2Jred\x07\n\tok\r\u202e\x9b")
        == "\\x1b[2Jred\\x07\n\tok\\x0d\\u202e\\x9b"
    )


def test_show_never_sends_escape_sequences_to_the_terminal(tmp_path: Path) -> None:
    # regression: show passed terminal escape sequences from trace content to the terminal
    evil = "\x1b]0;pwned\x07\x1b[2J done"
    hostile = AgentTrace(
        conversation_id="c\x1b[31m1",
        messages=[UserMessage(content=evil), AssistantMessage(content="ok \x1b[5m")],
    )
    path = traces_file(tmp_path / "t.jsonl", hostile)
    for extra in ((), ("--formatter", "transcript@1")):
        code, out, err = invoke("show", str(path), *extra)
        assert code == 0, err
        assert "\x1b]0;" not in out and "\x1b[2J" not in out and "\x07" not in out
        assert "\\x1b]0;pwned\\x07" in out


# --- secrets in URLs -------------------------------------------------------------------------


def test_redact_url_hides_userinfo_and_key_like_query_values() -> None:
    assert redact_url("http://user:pass@host:8080/v1") == "http://***@host:8080/v1"
    assert (
        redact_url("https://h/v1?api-key=k1&api-version=2024&sig=s")
        == "https://h/v1?api-key=***&api-version=2024&sig=***"
    )
    assert redact_url("https://h/v1") == "https://h/v1"
    assert (
        redact_text("failed: POST http://u:p@h/v1/chat x") == "failed: POST http://***@h/v1/chat x"
    )


def test_userinfo_becomes_basic_auth() -> None:
    assert userinfo_auth("http://us%40r:p%3Ass@host/v1") == (
        "http://host/v1",
        {"Authorization": "Basic dXNAcjpwOnNz"},  # base64("us@r:p:ss"), RFC 7617
    )
    assert userinfo_auth("http://host/v1") == ("http://host/v1", {})


def test_argv_and_log_lines_are_redacted() -> None:
    argv = [
        "agent-eval",
        "score",
        "--base-url=http://u:pw@h/v1?key=abc",
        "--base-url",
        "http://h?token=t",
    ]
    assert redact_argv(argv) == (
        "agent-eval",
        "score",
        "--base-url=http://***@h/v1?key=***",
        "--base-url",
        "http://h?token=***",
    )
    record = __import__("logging").LogRecord(
        "x", 10, "f", 1, "POST %s", ("http://u:pw@h/v1",), None
    )
    RedactingFilter().filter(record)
    assert record.getMessage() == "POST http://***@h/v1"


def test_a_base_url_with_a_password_works_and_is_never_stored(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    # regression: such a URL never worked ("Connection error"), and its password was kept in
    # the runs table's argv, the HTML report and the debug log
    script_goal_judge(fake_server)
    url = fake_server.base_url.replace("http://", "http://alice:hunter2secret@")
    out = tmp_path / "run"
    args = ["score", inputs(tmp_path), "--judge", "m", "--base-url", url, "--out", str(out)]
    monkeypatch.setattr("sys.argv", ["agent-eval", *args])
    code, _, err = invoke(*args)
    assert code == 0, err
    assert {r.status for r in load_results(out)} == {"ok"}
    with sqlite3.connect(out / "results.db") as db:
        (argv,) = db.execute("SELECT argv FROM runs").fetchone()
    assert "hunter2secret" not in argv and "http://***@127.0.0.1" in argv
    code, _, err = invoke("report", str(out), "--html", str(tmp_path / "r.html"))
    assert code == 0, err
    for path in (*out.iterdir(), tmp_path / "r.html"):
        assert b"hunter2secret" not in path.read_bytes(), path
    assert orjson.loads(argv)[:2] == ["agent-eval", "score"]


def test_the_debug_log_never_holds_the_password(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    url = fake_server.base_url.replace("http://", "http://alice:hunter2secret@")
    done = subprocess.run(
        [str(Path(sys.executable).with_name("agent-eval")), "score", inputs(tmp_path),
         "--judge", "m", "--base-url", url, "--out", str(tmp_path / "run")],
        capture_output=True, env={**os.environ, "AGENT_EVAL_DEBUG": "1"}, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr.decode()
    assert b"DEBUG" in done.stderr and b"127.0.0.1" in done.stderr  # the requests are logged
    assert b"hunter2secret" not in done.stderr + done.stdout
    token = userinfo_auth(url)[1]["Authorization"].split()[1].encode()
    assert token not in done.stderr + done.stdout  # nor the Basic header that carries it


def test_a_lone_surrogate_in_one_conversation_costs_nothing(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: "\ud83d" in 1 of 301 conversations killed score (TypeError writing renderings)
    script_goal_judge(fake_server)
    lines = [
        orjson.dumps({"conversation_id": f"c{i}", "messages": [
            {"role": "user", "content": "Book a table"},
            {"role": "assistant", "content": "All set. DONE"},
        ]}).decode()
        for i in range(3)
    ]  # fmt: skip
    lines[1] = lines[1].replace("Book a table", "Book a table \\ud83d")
    path = tmp_path / "chats.jsonl"
    path.write_text("\n".join(lines) + "\n")
    out = tmp_path / "run"
    args = ("--judge", "m", "--base-url", fake_server.base_url, "--api-key-env", "MY_JUDGE_KEY")
    code, _, err = invoke(
        "score", str(path), "--format", "openai-messages", *args, "--out", str(out)
    )
    assert code == 0, err
    assert "1 code point(s) UTF-8 cannot encode" in err
    assert sorted(r.conversation_id for r in load_results(out) if r.status == "ok") == [
        "c0",
        "c1",
        "c2",
    ]
    code, _, err = invoke("ingest", str(path), "--format", "openai-messages", "--out", "t.jsonl")
    assert code == 0, err
    assert "Book a table \ufffd" in (tmp_path / "t.jsonl").read_text(encoding="utf-8")


@pytest.mark.parametrize(
    "argv",
    [
        ["report", "{d}", "--html", "x.html"],
        ["errors", "{d}"],
        ["runs", "show", "{d}"],
        ["runs", "list", "{d}"],
        ["calibrate", "{d}", "--labels", "labels.jsonl"],
    ],
    ids=lambda argv: " ".join(argv[:2]),
)
def test_a_missing_run_is_exit_3_for_every_command(tmp_path: Path, argv: list[str]) -> None:
    # regression: report and calibrate exited 3, errors and runs show/list 2 (README: 3)
    (tmp_path / "labels.jsonl").write_text('{"conversation_id": "a", "label": "1"}\n')
    missing = str(tmp_path / "runs" / "nonexistent")
    code, _, err = invoke(*(a.format(d=missing) for a in argv))
    assert code == 3, err
    assert "nonexistent" in err
