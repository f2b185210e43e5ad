"""``--json`` on failure: a command that fails before its document prints the error document.

trial5 #6: ``ingest empty.json --json`` (exit 3) and ``score --metric goal_acuracy --json``
(exit 2) printed nothing on stdout, so a CI parser had no document. Each case runs the real
entry point (:func:`agent_eval.cli.main`) in a subprocess: the whole of stdout is one JSON
document, and stderr keeps the human message.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from agent_eval.cli._json_output import SCHEMA_VERSION, ErrorPayload

MAIN = "from agent_eval.cli import main; main()"
FIXTURES = Path(__file__).parents[2] / "fixtures" / "otel"


def _run(*args: str, cwd: Path) -> tuple[int, dict[str, Any], str]:
    env = {k: v for k, v in os.environ.items() if k != "OPENAI_API_KEY"}
    env["AGENT_EVAL_CACHE_PATH"] = str(cwd / "cache.db")
    done = subprocess.run(
        [sys.executable, "-c", MAIN, *args], capture_output=True, text=True, env=env, cwd=cwd,
        timeout=120, check=False,
    )  # fmt: skip
    return done.returncode, json.loads(done.stdout), done.stderr  # stdout: exactly one document


def _error(document: dict[str, Any], command: str, code: int) -> dict[str, str]:
    assert (document["schema_version"], document["command"]) == (SCHEMA_VERSION, command)
    payload = ErrorPayload.model_validate(
        {k: v for k, v in document.items() if k not in ("schema_version", "command")}
    )  # the documented shape, exactly
    assert payload.exit_code == code
    return payload.error.model_dump()


def test_an_unreadable_input_prints_the_error_document(tmp_path: Path) -> None:
    empty = tmp_path / "empty.json"
    empty.write_text("")
    code, document, stderr = _run("ingest", str(empty), "--json", cwd=tmp_path)
    assert code == 3
    error = _error(document, "ingest", 3)
    assert error["type"] == "DecodeError"
    assert str(empty) in error["message"] and error["message"] in " ".join(stderr.split())


def test_a_configuration_error_prints_the_error_document(tmp_path: Path) -> None:
    args = ["score", str(FIXTURES), "--metric", "goal_acuracy", "--json", "--out", "o"]
    code, document, stderr = _run(*args, cwd=tmp_path)
    assert code == 2
    error = _error(document, "score", 2)
    assert error["type"] == "UnknownPluginError"  # a ConfigError
    assert "did you mean 'goal_accuracy'" in error["message"]
    assert "error:" in stderr and "goal_acuracy" in stderr
    assert not (tmp_path / "o").exists()


@pytest.mark.parametrize(
    ("args", "command", "code", "kind", "said"),
    [
        (["runs", "show", "nope", "--out", "missing", "--json"], "runs show", 3, None, "missing"),
        (["cache", "info", "--json", "--bogus"], "cache info", 2, "NoSuchOption", "--bogus"),
    ],
    ids=["missing run", "unknown flag"],
)
def test_other_failures_print_the_error_document(
    tmp_path: Path, args: list[str], command: str, code: int, kind: str | None, said: str
) -> None:
    found, document, stderr = _run(*args, cwd=tmp_path)
    assert found == code, stderr
    error = _error(document, command, code)
    assert kind is None or error["type"] == kind
    assert said in error["message"] and said in stderr


@pytest.mark.parametrize(
    "command",
    ["rag", "errors", "export phoenix", "runs show"],
)
def test_a_missing_run_exits_3_whatever_command_reads_it(tmp_path: Path, command: str) -> None:
    """s5-fixes: ``rag MISSING --json`` exited 2 (usage), every other command 3 (input)."""
    code, document, stderr = _run(*command.split(), "nope", "--out", "missing", "--json",
                                  cwd=tmp_path)  # fmt: skip
    assert code == 3, stderr
    error = _error(document, command, 3)
    assert error["type"] == "StoreError"
    assert "missing" in error["message"] and error["message"] in " ".join(stderr.split())


def test_a_refusal_carries_its_message_and_type(tmp_path: Path) -> None:
    """trial6 #6: ``ingest --out - --json`` said "exit 2; the reason is on stderr", type Exit."""
    code, document, stderr = _run("ingest", str(FIXTURES), "--out", "-", "--json", cwd=tmp_path)
    assert code == 2
    error = _error(document, "ingest", 2)
    assert error == {
        "message": "--out - writes the traces to stdout, where --json prints the summary; "
        "give --out a file name with --json",
        "type": "ConfigError",
    }
    assert error["message"] in " ".join(stderr.split())


def test_a_command_that_printed_its_document_prints_no_second_one(tmp_path: Path) -> None:
    """``score`` of a judged metric with no judge exits 2 after its own document (one only)."""
    args = ["score", str(FIXTURES), "--metric", "loops,goal_accuracy", "--json", "--out", "o"]
    code, document, _ = _run(*args, cwd=tmp_path)
    assert code == 2
    assert document["command"] == "score" and document["exit_code"] == 2
    assert document["not_scored"] == ["goal_accuracy@2"] and "error" not in document


def test_without_json_stdout_stays_empty_on_failure(tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-c", MAIN, "ingest", str(tmp_path / "none.json")],
        capture_output=True, text=True, cwd=tmp_path, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 3 and done.stdout == "" and "error:" in done.stderr
