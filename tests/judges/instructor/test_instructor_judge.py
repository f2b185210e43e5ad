"""InstructorJudge through instructor's OpenAI mode and real HTTP to the fake server."""

from __future__ import annotations

from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.errors import JudgeOutputError, JudgeTransportError
from agent_eval.judges._base import JudgeRequest, judges
from agent_eval.judges._instructor_judge import InstructorJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison
from agent_eval.run._store import load_results
from agent_eval.testing import (
    NO_USAGE,
    FakeModelServer,
    HttpError,
    InvalidVerdict,
    Structured,
    Usage,
)

from ...run.goal_script import script_goal_judge, trace

instructor = pytest.importorskip("instructor", reason="the instructor extra is not installed")
openai = pytest.importorskip("openai")

REQUEST = JudgeRequest(
    messages=({"role": "system", "content": "Judge."}, {"role": "user", "content": "Done?"}),
    response_model=OutcomeComparison,
)
GOOD = Structured({"reason": "matches", "verdict": "1"}, usage=Usage(40, 10))
_clients: list[Any] = []


def make(server: FakeModelServer, mode: Any = None, **kwargs: Any) -> InstructorJudge:
    raw = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-instr-test", max_retries=0)
    _clients.append(raw)
    client = instructor.from_openai(raw, mode=mode or instructor.Mode.TOOLS)
    return InstructorJudge(client, model="fake-model", **kwargs)


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    while _clients:
        await _clients.pop().close()


def test_registered_under_instructor() -> None:
    assert judges.get("instructor") is InstructorJudge


@pytest.mark.parametrize(("mode", "wire"), [("TOOLS", "tools"), ("JSON_SCHEMA", "json_schema")])
async def test_typed_verdict_usage_and_raw_reply(
    fake_server: FakeModelServer, mode: str, wire: str
) -> None:
    fake_server.add_rule(GOOD)
    reply = await make(fake_server, getattr(instructor.Mode, mode)).ask(REQUEST)
    assert type(reply.output) is OutcomeComparison
    assert reply.output.model_dump() == {"reason": "matches", "verdict": "1"}
    assert (reply.input_tokens, reply.output_tokens, reply.attempts) == (40, 10, 1)
    assert reply.usage_known and reply.model == "fake-model"
    assert '"verdict":"1"' in reply.raw_reply.replace(" ", "")
    (sent,) = fake_server.requests
    assert sent.mode == wire and sent.body["model"] == "fake-model"
    assert sent.body["temperature"] == 0.0


async def test_instructors_reasks_are_counted_as_attempts(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(InvalidVerdict("yes"), times=1)
    fake_server.add_rule(GOOD)
    reply = await make(fake_server).ask(REQUEST)
    assert reply.output.verdict == "1"
    assert reply.attempts == 2 == len(fake_server.requests)
    assert reply.input_tokens > 40  # both attempts' usage
    assert len(fake_server.requests[1].messages) > len(fake_server.requests[0].messages)


async def test_never_valid_is_invalid_judge_output_with_the_raw_reply(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(InvalidVerdict("yes"))
    with pytest.raises(JudgeOutputError) as caught:
        await make(fake_server, max_retries=2).ask(REQUEST)
    error = caught.value
    assert error.error_type == "invalid_judge_output"
    assert error.attempts == 3 == len(fake_server.requests)
    assert error.raw_reply is not None and '"yes"' in error.raw_reply
    assert error.input_tokens > 0 and error.usage_known


async def test_a_failed_request_is_judge_unavailable(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(400, message="bad request"))
    with pytest.raises(JudgeTransportError) as caught:
        await make(fake_server).ask(REQUEST)
    assert caught.value.error_type == "judge_unavailable"
    assert caught.value.attempts == 1 == len(fake_server.requests)
    assert "BadRequestError" in str(caught.value)


async def test_a_reply_without_usage_marks_the_usage_unknown(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Structured({"reason": "r", "verdict": "0"}, usage=NO_USAGE))
    reply = await make(fake_server).ask(REQUEST)
    assert reply.output.verdict == "0" and not reply.usage_known


def test_judge_flag_scores_end_to_end(
    fake_server: FakeModelServer, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)  # read by openai's client
    monkeypatch.setenv("OPENAI_API_KEY", "sk-instr-test")
    monkeypatch.delenv("AGENT_EVAL_CONFIG", raising=False)
    monkeypatch.chdir(tmp_path)
    script_goal_judge(fake_server)
    traces = tmp_path / "t.jsonl"
    traces.write_text(
        "".join(t.model_dump_json() + "\n" for t in (trace("a", done=True), trace("b", done=False)))
    )
    out = tmp_path / "out"
    result = CliRunner().invoke(
        app,
        ["score", str(traces), "--judge", "instructor:openai/fake-model", "--out", str(out),
         "--no-cache"],
    )  # fmt: skip
    assert result.exit_code == 0, result.stdout + result.stderr
    rows = sorted(load_results(out), key=lambda r: r.conversation_id)
    assert [(r.conversation_id, r.status, r.verdict) for r in rows] == [
        ("a", "ok", "1"),
        ("b", "ok", "0"),
    ]
    assert {r.judge_model for r in rows} == {"openai/fake-model"}
    assert all((r.attempts, r.input_tokens, r.output_tokens) == (2, 150, 30) for r in rows)
    assert len(fake_server.requests) == 4


async def test_a_reply_cut_off_at_the_token_limit_is_invalid_output() -> None:
    import httpx2

    body = {
        "id": "c1", "object": "chat.completion", "created": 0, "model": "fake-model",
        "choices": [{"index": 0, "finish_reason": "length", "message": {
            "role": "assistant", "content": None, "tool_calls": [{
                "id": "t1", "type": "function",
                "function": {"name": "OutcomeComparison", "arguments": '{"reason": "cut'}}]}}],
        "usage": {"prompt_tokens": 30, "completion_tokens": 5, "total_tokens": 35},
    }  # fmt: skip
    http = httpx2.AsyncClient(
        transport=httpx2.MockTransport(lambda _: httpx2.Response(200, json=body))
    )
    raw = openai.AsyncOpenAI(base_url="http://judge.invalid/v1", api_key="k", http_client=http)
    _clients.append(raw)
    judge = InstructorJudge(instructor.from_openai(raw), model="fake-model")
    with pytest.raises(JudgeOutputError) as caught:
        await judge.ask(REQUEST)
    assert "cut off at the completion token limit" in str(caught.value)
    assert (caught.value.attempts, caught.value.input_tokens) == (1, 30)
    assert caught.value.raw_reply == '{"reason": "cut'
