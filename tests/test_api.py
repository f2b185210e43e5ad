"""agent_eval.score / ascore: the Python API over the engine, through the fake server."""

from __future__ import annotations

from pathlib import Path

import pytest

import agent_eval
from agent_eval.errors import JudgeNotConfiguredError, UnknownPluginError
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.testing import FakeModelServer

from .run.goal_script import script_goal_judge, trace


def test_score_with_a_model_name_and_reference_mapping(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    monkeypatch.setenv("OPENAI_API_KEY", "sk-api-SECRET")
    script_goal_judge(fake_server)
    summary = agent_eval.score(
        [trace("a", done=True), trace("b", done=True)],
        judge="fake-model",
        reference={"a": "IMPOSSIBLE", "b": "fine"},
        out=tmp_path,
    )
    assert isinstance(summary, agent_eval.RunSummary)
    assert {r.conversation_id: r.verdict for r in summary.results} == {"a": "0", "b": "1"}
    assert summary.mean_score == 0.5 and summary.balanced
    assert agent_eval.load_results(tmp_path) == sorted(
        summary.results, key=lambda r: r.conversation_id
    )
    assert b"sk-api-SECRET" not in (tmp_path / "results.db").read_bytes()


async def test_ascore_with_a_judge_instance_and_trace_references(
    fake_server: FakeModelServer,
) -> None:
    script_goal_judge(fake_server)
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="k" * 10)
    try:
        summary = await agent_eval.ascore(
            [trace("a", done=True, reference="goal"), trace("b", done=True)],
            judge=judge,
            formatter="transcript@1",
            reference=True,
            concurrency=2,
        )
    finally:
        await judge.aclose()
    assert summary.out_dir is None and summary.formatter == "transcript@1"
    assert {r.conversation_id: r.status for r in summary.results} == {"a": "ok", "b": "skipped"}


def test_configuration_errors_raise(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(UnknownPluginError):
        agent_eval.score([], metric="nope", judge="m")
    with pytest.raises(JudgeNotConfiguredError):
        agent_eval.score([trace("a", done=True)], judge="gpt-4o-mini")


def test_an_unknown_option_is_refused_before_anything_runs_naming_the_closest() -> None:
    # fresh-user trial: score(..., metrics=[...]) raised from inside the event loop, naming ascore()
    with pytest.raises(TypeError) as caught:
        agent_eval.score([], judge="m", metrics=["goal_accuracy"])
    assert str(caught.value) == (
        "agent_eval.score() got an unknown option 'metrics' (did you mean 'metric'?)"
    )
    with pytest.raises(TypeError, match=r"unknown option 'zzz'; it takes metric, formatter, judge"):
        agent_eval.score([], judge="m", zzz=1)
