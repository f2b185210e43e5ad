"""``--quiet`` / ``-q`` on every command: a successful run prints nothing (only its exit code),
an error still prints its line, and machine output (``--json``, ``-o -``) still arrives.

Parametrized over every command of the typer app, each run on real inputs against the fake
judge over real HTTP; a command added without a case here fails the coverage test."""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
import typer.main
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.cli._commands import load_all
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script
from ..analysis.test_compare_stability_cmds import ENV, LABELS, SPECS

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@dataclass(frozen=True)
class World:
    """Inputs and runs every command's case uses (made once for the module)."""

    tmp: Path
    base_url: str
    traces: Path
    run: Path
    compared: Path

    def judge(self) -> list[str]:
        return ["--judge", "fake-model", "--base-url", self.base_url, "--cache-path", self.cache]

    @property
    def cache(self) -> str:
        return str(self.tmp / "cache.db")


@pytest.fixture(scope="module")
def world(tmp_path_factory: pytest.TempPathFactory) -> Iterator[World]:
    tmp = tmp_path_factory.mktemp("quiet")
    with FakeModelServer() as server:
        judge_script.script(server)
        traces = judge_script.write_traces(tmp / "traces.jsonl", SPECS, LABELS)
        made = World(tmp, server.base_url, traces, tmp / "run", tmp / "compared")
        for args in (
            ["score", str(traces), "--formatter", "transcript@1", *made.judge(), "--out"],
            ["compare", str(traces), "--formatters", "transcript@1,json@1", *made.judge(), "--out"],
        ):
            target = made.run if args[0] == "score" else made.compared
            result = runner.invoke(app, [*args, str(target)], env=ENV)
            assert result.exit_code == 0, result.output
        rag = [
            "score", str(ROOT / "fixtures" / "rag"), "--metric", "context_precision,context_recall",
            "--turn-labels", str(ROOT / "fixtures" / "rag-turn-labels.jsonl"),
            "--out", str(tmp / "rag"),
        ]  # fmt: skip
        assert runner.invoke(app, rag, env=ENV).exit_code == 0
        yield made


CASES: dict[str, Callable[[World, Path], list[str]]] = {
    "ingest": lambda w, t: ["ingest", str(w.traces), "-o", str(t / "out.jsonl")],
    "score": lambda w, t: ["score", str(w.traces), "--formatter", "transcript@1", *w.judge(),
                           "--out", str(t / "run")],
    "show": lambda w, t: ["show", str(w.traces)],
    "calibrate": lambda w, t: ["calibrate", str(w.compared), "--inputs", str(w.traces),
                               "--formatter", "json@1"],
    "compare": lambda w, t: ["compare", str(w.traces), "--formatters", "transcript@1,json@1",
                             *w.judge(), "--out", str(t / "c")],
    "stability": lambda w, t: ["stability", str(w.traces), "--repeats", "2", "--formatter",
                               "transcript@1", *w.judge(), "--out", str(t / "s")],
    "rag": lambda w, t: ["rag", str(w.tmp / "rag")],
    "report": lambda w, t: ["report", str(w.run), "-o", str(t / "r.html")],
    "review": lambda w, t: ["review", str(w.compared), "--select", "flips", "--out",
                            str(t / "review.csv")],
    "errors": lambda w, t: ["errors", str(w.run)],
    "formatters list": lambda w, t: ["formatters", "list"],
    "formatters diff": lambda w, t: ["formatters", "diff", "transcript@1", "json@1",
                                     str(w.traces)],
    "formatters lock": lambda w, t: ["formatters", "lock", "--lock", str(t / "lock.json")],
    "runs list": lambda w, t: ["runs", "list", str(w.run.parent)],
    "runs show": lambda w, t: ["runs", "show", str(w.run)],
    "runs diff": lambda w, t: ["runs", "diff", str(w.run), str(w.run)],
    "cache info": lambda w, t: ["cache", "info", "--cache-path", w.cache],
    "cache prune": lambda w, t: ["cache", "prune", "--older-than", "3650", "--cache-path", w.cache],
    "judges list": lambda w, t: ["judges", "list"],
}  # fmt: skip
"""A successful command line of each command (``serve`` and ``export phoenix``: below)."""
ELSEWHERE = {
    "serve": "test_serve_quiet_prints_only_its_json_summary",
    "export phoenix": "tests/export/test_phoenix.py (needs a Phoenix server)",
}


def every_command() -> list[str]:
    load_all()
    found: list[str] = []

    def walk(command: object, path: list[str]) -> None:
        children = getattr(command, "commands", None)
        if children is None:
            found.append(" ".join(path))
            return
        for name, child in children.items():
            walk(child, [*path, name])

    walk(typer.main.get_command(app), [])
    return found


def test_every_command_has_a_quiet_case() -> None:
    assert sorted(every_command()) == sorted([*CASES, *ELSEWHERE])


@pytest.mark.parametrize("command", sorted(CASES))
def test_quiet_success_prints_nothing(world: World, tmp_path: Path, command: str) -> None:
    args = CASES[command](world, tmp_path)
    loud = runner.invoke(app, args, env=ENV)
    assert loud.exit_code == 0, loud.output
    assert loud.stdout or loud.stderr  # the case prints something without --quiet
    for line in ([*args, "--quiet"], [*args, "-q"], ["-q", *args], ["--quiet", *args]):
        quiet = runner.invoke(app, line, env=ENV)  # the command's own, or agent-eval's
        assert quiet.exit_code == 0, quiet.output
        assert (quiet.stdout, quiet.stderr) == ("", ""), line


def test_quiet_keeps_errors_and_machine_output(world: World, tmp_path: Path) -> None:
    missing = runner.invoke(app, ["show", str(tmp_path / "nothing-here"), "-q"], env=ENV)
    assert missing.exit_code == 3
    assert missing.stdout == ""  # the error itself is printed by main(), as below
    failed = runner.invoke(
        app, ["calibrate", str(world.compared), "--formatter", "nosuch@1", "-q"], env=ENV
    )
    assert failed.exit_code == 2 and "error:" in failed.stderr, failed.output
    document = runner.invoke(app, ["runs", "show", str(world.run), "--json", "-q"], env=ENV)
    assert document.exit_code == 0 and json.loads(document.stdout)["command"] == "runs show"
    assert document.stderr == ""
    lines = runner.invoke(app, ["ingest", str(world.traces), "-o", "-", "-q"], env=ENV)
    assert lines.exit_code == 0 and len(lines.stdout.splitlines()) == len(SPECS)
    assert lines.stderr == ""


def test_serve_quiet_prints_only_its_json_summary(world: World, tmp_path: Path) -> None:
    """``serve -q`` started and stopped (SIGTERM): nothing on stderr, its JSON summary on stdout."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    command = [
        *(sys.executable, "-c", "from agent_eval.cli._app import main; main()", "serve"),
        *("--port", str(port), "--judge", "fake-model", "--base-url", world.base_url),
        *("--no-cache", "--out", str(tmp_path / "serve"), "-q"),
    ]
    with subprocess.Popen(
        command, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, **ENV}
    ) as process:
        deadline = time.monotonic() + 60
        while time.monotonic() < deadline and process.poll() is None:
            with socket.socket() as client:
                if client.connect_ex(("127.0.0.1", port)) == 0:
                    break
            time.sleep(0.1)
        process.send_signal(signal.SIGTERM)
        stdout, stderr = process.communicate(timeout=60)
    assert process.returncode == 0, stderr.decode()
    assert stderr.decode() == ""
    assert isinstance(json.loads(stdout), dict)
