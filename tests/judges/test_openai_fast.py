"""The openai judge's fast first attempt sends what instructor sends; the transport per loop."""

from __future__ import annotations

import asyncio
from typing import Any

import instructor
import openai
import pytest

from agent_eval.errors import JudgeOutputError
from agent_eval.judges.base import JudgeRequest
from agent_eval.judges.openai_fast import structured_request
from agent_eval.judges.openai_judge import MODES, OpenAIJudge
from agent_eval.metrics.goal_accuracy import OutcomeComparison
from agent_eval.testing import FakeModelServer, Structured, Text, Usage

GOOD = Structured({"reason": "matches", "verdict": "1"}, usage=Usage(40, 10))
SYSTEM_FIRST = ({"role": "system", "content": "Judge."}, {"role": "user", "content": "Done?"})
USER_FIRST = ({"role": "user", "content": "Done?"},)


async def _instructor_body(server: FakeModelServer, mode: str, messages: Any) -> dict[str, Any]:
    client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
    patched = instructor.from_openai(client, mode=MODES[mode])
    await patched.chat.completions.create_with_completion(
        model="fake-model",
        messages=list(messages),
        response_model=OutcomeComparison,
        temperature=0.0,
        max_retries=0,
    )
    await client.close()
    return server.requests[-1].body


@pytest.mark.parametrize("messages", [SYSTEM_FIRST, USER_FIRST], ids=["system", "user"])
@pytest.mark.parametrize("mode", ["tools", "json_schema", "json"])
async def test_first_attempt_sends_what_instructor_sends(
    fake_server: FakeModelServer, mode: str, messages: Any
) -> None:
    fake_server.add_rule(GOOD)
    expected = await _instructor_body(fake_server, mode, messages)
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="k", mode=mode)  # type: ignore[arg-type]
    request = JudgeRequest(messages=messages, response_model=OutcomeComparison)
    reply = await judge.ask(request)
    await judge.aclose()
    assert reply.output == OutcomeComparison(reason="matches", verdict="1")
    assert fake_server.requests[-1].body == expected


def test_the_structured_part_is_built_once_per_model_and_mode() -> None:
    first = structured_request(OutcomeComparison, instructor.Mode.TOOLS)
    assert structured_request(OutcomeComparison, instructor.Mode.TOOLS) is first
    assert structured_request(OutcomeComparison, instructor.Mode.JSON) is not first


async def test_plain_text_goes_through_instructors_reasks(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("I cannot judge this."))
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="k", mode="json")
    with pytest.raises(JudgeOutputError) as caught:
        await judge.ask(JudgeRequest(messages=USER_FIRST, response_model=OutcomeComparison))
    await judge.aclose()
    assert caught.value.raw_reply == "I cannot judge this."
    assert caught.value.attempts == 3 == len(fake_server.requests)  # re-asked: not JSON
    assert "json_invalid" in fake_server.requests[1].text  # the error goes back to the model
    assert len(fake_server.requests[1].messages) > len(fake_server.requests[0].messages)


def test_one_judge_serves_two_event_loops(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(GOOD)
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key="k")
    request = JudgeRequest(messages=SYSTEM_FIRST, response_model=OutcomeComparison)
    first = asyncio.run(judge.ask(request))
    second = asyncio.run(judge.ask(request))
    asyncio.run(judge.aclose())
    assert (first.attempts, second.attempts) == (1, 1)
    assert len(fake_server.requests) == 2


async def test_a_refused_connection_is_a_connection_error_not_a_timeout() -> None:
    # regression: httpx-aiohttp reported "connection refused" as httpx.ConnectTimeout, so a dead
    # judge endpoint showed up as "APITimeoutError: Request timed out"
    import socket

    import httpx

    from agent_eval.judges.openai_http import judge_http_client, judge_timeout

    with socket.socket() as probe:  # a port on this machine that nothing listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    client = judge_http_client({})
    try:
        with pytest.raises(httpx.ConnectError) as caught:
            await client.get(f"http://127.0.0.1:{port}/v1/models", timeout=judge_timeout(5))
        assert not isinstance(caught.value, httpx.TimeoutException)
    finally:
        await client.aclose()
