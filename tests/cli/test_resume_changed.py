"""``--resume`` on an input that changed since its conversations were judged (trial8 #8).

A CI job re-runs on the latest export while a conversation is still growing: the first run
judged its first turn, the resumed run reads three. The documented behaviour stays (a finished
conversation is never re-judged), but the run now says so, naming the conversation, and keeps
in ``renderings.jsonl`` / ``conversations.jsonl`` what the judge saw.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.cli._app import app
from agent_eval.run._artifacts import read_conversations, read_renderings
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "300"}
WARNING = "warning: 1 finished conversation(s) changed since they were judged (kept:"


def _write(path: Path, turns: dict[str, int]) -> Path:
    lines = []
    for cid, count in turns.items():
        messages: list[UserMessage | AssistantMessage] = []
        for turn in range(count):
            messages += [
                UserMessage(content=f"Turn {turn} please. CONV-{cid}"),
                AssistantMessage(content=f"Done turn {turn}. DONE"),
            ]
        lines.append(AgentTrace(conversation_id=cid, messages=tuple(messages)).model_dump_json())
    path.write_text("\n".join(lines) + "\n")
    return path


def _score(server: FakeModelServer, traces: Path, *extra: str) -> tuple[int, str, str]:
    args = ["score", str(traces), "--formatter", "transcript@1", "--judge", "fake-model",
            "--base-url", server.base_url, *extra]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def test_resume_warns_on_a_conversation_changed_since_judged(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    out = tmp_path / "run"
    traces = tmp_path / "t.jsonl"
    code, _, stderr = _score(fake_server, _write(traces, {"grow": 1, "same": 1}), "--out", str(out))
    assert code == 0, stderr
    first = read_renderings(out)[("grow", "transcript@1")]
    assert "Turn 0" in first and "Turn 2" not in first
    sent = len(fake_server.requests)
    _write(traces, {"grow": 3, "same": 1, "new": 1})
    code, stdout, stderr = _score(fake_server, traces, "--resume", str(out), "--json")
    assert code == 0, stderr
    assert f"{WARNING}" in stderr and stderr.count("changed since") == 1
    assert stderr.split(WARNING, 1)[1].split("): ", 1)[1].startswith("grow")
    assert json.loads(stdout)["changed_since_judged"] == ["grow"]
    assert len(fake_server.requests) - sent == 2  # only "new" was judged (2 stages)
    rows = {r.conversation_id: r for r in load_results(out)}
    assert set(rows) == {"grow", "same", "new"}
    # what the judge saw is kept beside the kept verdict, not the 3-turn rendering
    assert read_renderings(out)[("grow", "transcript@1")] == first
    assert len(read_conversations(out)["grow"].messages) == 2


def test_resume_of_an_unchanged_input_says_nothing(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    judge_script.script(fake_server)
    out = tmp_path / "run"
    traces = _write(tmp_path / "t.jsonl", {"a": 1})
    assert _score(fake_server, traces, "--out", str(out))[0] == 0
    code, stdout, stderr = _score(fake_server, traces, "--resume", str(out), "--json")
    assert code == 0, stderr
    assert "changed since" not in stderr
    assert json.loads(stdout)["changed_since_judged"] == []


def _tools(path: Path, calls: int) -> Path:
    messages: list[Message] = [UserMessage(content="Weather?")]
    for n in range(calls):
        call = ToolCall(id=f"c{n}", name="get_weather", arguments={"n": n})
        messages += [
            AssistantMessage(tool_calls=(call,)),
            ToolMessage(content="18C", tool_call_id=f"c{n}", tool_name="get_weather"),
        ]
    messages.append(AssistantMessage(content="18C."))
    path.write_text(AgentTrace(conversation_id="grow", messages=tuple(messages)).model_dump_json())
    return path


def test_resume_of_a_judge_free_metric_compares_the_messages(tmp_path: Path) -> None:
    out = tmp_path / "run"
    traces = _tools(tmp_path / "t.jsonl", 1)
    args = ["score", str(traces), "--metric", "tool_errors", "--out", str(out)]
    first = CliRunner().invoke(app, args, env=ENV)
    assert first.exit_code == 0, first.output
    _tools(traces, 2)
    result = CliRunner().invoke(app, [*args[:-2], "--resume", str(out)], env=ENV)
    assert result.exit_code == 0, result.output
    assert f"{WARNING} --resume never re-judges" in " ".join(result.stderr.split())
    assert len(read_conversations(out)["grow"].messages) == 4  # the one call it was scored on
