"""The run session reports through its hooks and never prints; its stages run in order."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.config import ScoreConfig
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.run import RunSession, SessionHooks
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._artifacts import RUN_FILES, read_conversations, read_renderings
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script


def _traces() -> list[AgentTrace]:
    return [
        AgentTrace(
            conversation_id=cid,
            messages=(UserMessage(content="book it"), AssistantMessage(content="done DONE")),
        )
        for cid in ("a", "b")
    ]


def test_a_session_notices_through_its_hook_and_prints_nothing(
    fake_server: FakeModelServer, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    judge_script.script(fake_server)
    references = tmp_path / "refs.jsonl"
    references.write_text('{"conversation_id": "a", "reference": "a table"}\n')
    notices: list[str] = []
    session = RunSession(
        ScoreConfig(out=tmp_path / "run", references=references, cache="off"),
        judge=OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="sk-test"),
        model="fake-model",
        hooks=SessionHooks(notice=notices.append),
    )
    try:
        session.read(_traces())
        [summary] = event_loop.run(session.run())
    finally:
        session.close()
    assert summary.scored == 2
    assert notices == [
        f"references: 1 of 1 id(s) in {references} match a conversation of the input "
        "(2 conversation(s))"
    ]
    assert capsys.readouterr() == ("", "")
    assert set(read_conversations(tmp_path / "run")) == {"a", "b"}
    assert {cid for cid, _ in read_renderings(tmp_path / "run")} == {"a", "b"}
    assert {p.name for p in (tmp_path / "run").iterdir()} <= set(RUN_FILES)


def test_a_stage_before_its_inputs_is_a_clear_error() -> None:
    session = RunSession(ScoreConfig(metric="tool_call_accuracy"))
    with pytest.raises(RuntimeError, match=r"read\(\) gives the conversations"):
        session.plans()
