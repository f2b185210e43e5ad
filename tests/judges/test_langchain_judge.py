"""LangChainJudge with a real ChatOpenAI pointed at the fake server over HTTP."""

from __future__ import annotations

import pytest
from langchain_openai import ChatOpenAI

from agent_eval.errors import JudgeOutputError, JudgeTransportError
from agent_eval.judges._base import JudgeRequest, judges
from agent_eval.judges._langchain_judge import LangChainJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison
from agent_eval.testing import (
    INVALID_VERDICTS,
    NO_USAGE,
    FakeModelServer,
    HttpError,
    InvalidVerdict,
    Structured,
    Usage,
)

REQUEST = JudgeRequest(
    messages=({"role": "system", "content": "Judge."}, {"role": "user", "content": "Done?"}),
    response_model=OutcomeComparison,
)
GOOD = Structured({"reason": "matches", "verdict": "0"}, usage=Usage(30, 7))


def judge(server: FakeModelServer, method: str | None = None, **kwargs: object) -> LangChainJudge:
    chat = ChatOpenAI(
        model="fake-model",
        base_url=server.base_url,
        api_key="sk-lc-SECRET",
        max_retries=1,
        timeout=15,
    )  # type: ignore[call-arg]
    return LangChainJudge(chat, method=method, **kwargs)  # type: ignore[arg-type]


def test_registered_under_langchain() -> None:
    assert judges.get("langchain") is LangChainJudge


@pytest.mark.parametrize("method", ["function_calling", "json_schema", "json_mode"])
async def test_typed_reply_with_usage(fake_server: FakeModelServer, method: str) -> None:
    fake_server.add_rule(GOOD)
    reply = await judge(fake_server, method).ask(REQUEST)
    assert reply.output == OutcomeComparison(reason="matches", verdict="0")
    assert (reply.model, reply.input_tokens, reply.output_tokens, reply.attempts) == (
        "fake-model",
        30,
        7,
        1,
    )
    assert '"verdict":"0"' in reply.raw_reply.replace(" ", "")
    assert fake_server.requests[0].body["temperature"] == 0.0


@pytest.mark.parametrize("method", [None, "function_calling", "json_schema", "json_mode"])
@pytest.mark.parametrize("bad", INVALID_VERDICTS, ids=repr)
async def test_invalid_verdicts_are_reasked_then_error(
    fake_server: FakeModelServer, bad: InvalidVerdict, method: str | None
) -> None:
    fake_server.add_rule(bad)
    with pytest.raises(JudgeOutputError) as caught:
        await judge(fake_server, method, max_retries=2).ask(REQUEST)
    assert caught.value.error_type == "invalid_judge_output"
    assert caught.value.attempts == 3 == len(fake_server.requests)
    assert caught.value.raw_reply and "scripted invalid verdict" in caught.value.raw_reply
    assert "invalid" in fake_server.requests[1].text


@pytest.mark.parametrize("method", [None, "function_calling", "json_schema", "json_mode"])
async def test_reask_recovers(fake_server: FakeModelServer, method: str | None) -> None:
    fake_server.add_rule(InvalidVerdict(True), times=1)
    fake_server.add_rule(GOOD)
    reply = await judge(fake_server, method).ask(REQUEST)
    assert (reply.output.verdict, reply.attempts) == ("0", 2)
    assert '"verdict"' in reply.raw_reply


async def test_endpoint_failure_is_a_transport_error(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(503))
    with pytest.raises(JudgeTransportError) as caught:
        await judge(fake_server).ask(REQUEST)
    assert "SECRET" not in str(caught.value)


@pytest.mark.parametrize("method", [None, "function_calling", "json_schema", "json_mode"])
async def test_reply_without_usage_is_unknown_usage(
    fake_server: FakeModelServer, method: str | None
) -> None:
    """Regression: no ``usage`` in the reply was read as a known 0 tokens (a confident $0)."""
    fake_server.add_rule(Structured({"reason": "ok", "verdict": "1"}, usage=NO_USAGE))
    reply = await judge(fake_server, method).ask(REQUEST)
    assert "usage" not in fake_server.requests[0].body  # nothing asked of the endpoint
    assert reply.usage_known is False
    assert (reply.input_tokens, reply.output_tokens, reply.attempts) == (0, 0, 1)


async def test_one_reply_without_usage_makes_the_call_unknown(
    fake_server: FakeModelServer,
) -> None:
    """A re-asked call whose first reply had usage and the second none: a lower bound."""
    fake_server.add_rule(
        Structured({"reason": "?", "verdict": "maybe"}, usage=Usage(40, 5)), times=1
    )
    fake_server.add_rule(Structured({"reason": "ok", "verdict": "1"}, usage=NO_USAGE))
    reply = await judge(fake_server).ask(REQUEST)
    assert (reply.attempts, reply.usage_known) == (2, False)
    assert (reply.input_tokens, reply.output_tokens) == (40, 5)


async def test_invalid_replies_without_usage_error_with_unknown_usage(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(Structured({"reason": "?", "verdict": "maybe"}, usage=NO_USAGE))
    with pytest.raises(JudgeOutputError) as caught:
        await judge(fake_server, max_retries=1).ask(REQUEST)
    assert (caught.value.attempts, caught.value.usage_known) == (2, False)
