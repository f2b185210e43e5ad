"""OpenAIJudge(client=...): the user's own AsyncOpenAI / AsyncAzureOpenAI, through real HTTP.

Every test compares with, or mirrors, the built-in aiohttp transport on the same fake server:
the same request bodies, replies, counts, retries and error types.
"""

from __future__ import annotations

import socket
import sys
from collections.abc import AsyncIterator
from typing import Any

import httpx2
import openai
import pytest

import agent_eval
from agent_eval.errors import (
    ConfigError,
    JudgeContextLengthError,
    JudgeOutputError,
    JudgeTransportError,
)
from agent_eval.judges._base import Judge, JudgeRequest
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison
from agent_eval.testing import (
    FakeModelServer,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Structured,
    Usage,
)

from ..run.goal_script import script_goal_judge, trace

SECRET = "sk-client-SECRET-0123456789abcdef"
REQUEST = JudgeRequest(
    messages=({"role": "system", "content": "Judge."}, {"role": "user", "content": "Done?"}),
    response_model=OutcomeComparison,
)
GOOD = Structured({"reason": "matches", "verdict": "1"}, usage=Usage(40, 10))
VOLATILE = {"run_id", "started_at", "latency_ms"}

_open: list[Any] = []


def client_for(server: FakeModelServer, **kwargs: Any) -> openai.AsyncOpenAI:
    options: dict[str, Any] = {"base_url": server.base_url, "api_key": SECRET, "timeout": 15.0}
    options.update(kwargs)
    client = openai.AsyncOpenAI(**options)
    _open.append(client)
    return client


def builtin(server: FakeModelServer, **kwargs: Any) -> OpenAIJudge:
    judge = OpenAIJudge("fake-model", base_url=server.base_url, api_key=SECRET, **kwargs)
    _open.append(judge)
    return judge


def own(client: openai.AsyncOpenAI, **kwargs: Any) -> OpenAIJudge:
    judge = OpenAIJudge("fake-model", client=client, **kwargs)
    _open.append(judge)
    return judge


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    while _open:
        thing = _open.pop()
        await (thing.aclose() if isinstance(thing, Judge) else thing.close())


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json"])
async def test_same_body_and_reply_as_the_builtin_transport(
    fake_server: FakeModelServer, mode: str
) -> None:
    fake_server.add_rule(GOOD)
    theirs = await own(client_for(fake_server), mode=mode).ask(REQUEST)
    ours = await builtin(fake_server, mode=mode).ask(REQUEST)
    first, second = fake_server.requests
    assert first.body == second.body
    assert first.path == second.path == "/v1/chat/completions"
    for field in ("output", "model", "input_tokens", "output_tokens", "attempts", "raw_reply"):
        assert getattr(theirs, field) == getattr(ours, field), field
    assert (theirs.attempts, theirs.usage_known, theirs.cached) == (1, True, False)


async def test_azure_client_with_an_ad_token_provider_and_its_own_http_client(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(GOOD)
    tokens: list[str] = []
    seen: list[tuple[str, str | None, str | None]] = []

    async def token_provider() -> str:
        tokens.append(f"ad-token-{len(tokens)}")
        return tokens[-1]

    async def record(request: httpx2.Request) -> None:
        seen.append(
            (request.url.path, request.headers.get("authorization"), request.headers.get("x-gw"))
        )

    http = httpx2.AsyncClient(event_hooks={"request": [record]})
    client = openai.AsyncAzureOpenAI(
        azure_endpoint=fake_server.root,
        api_version="2024-10-21",
        azure_ad_token_provider=token_provider,
        http_client=http,
        default_headers={"x-gw": "gateway-1"},
    )
    _open.append(client)
    theirs = await own(client).ask(REQUEST)
    ours = await builtin(fake_server).ask(REQUEST)
    assert seen == [
        ("/openai/deployments/fake-model/chat/completions", "Bearer ad-token-0", "gateway-1")
    ]
    azure, plain = fake_server.requests
    assert azure.body == plain.body
    assert (theirs.output, theirs.raw_reply, theirs.attempts) == (ours.output, ours.raw_reply, 1)
    assert not http.is_closed  # the user's client is the user's to close


async def test_invalid_replies_are_reasked_then_error_with_the_raw_reply(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(InvalidVerdict("yes"))
    with pytest.raises(JudgeOutputError) as caught:
        await own(client_for(fake_server), max_retries=2).ask(REQUEST)
    error = caught.value
    assert error.error_type == "invalid_judge_output"
    assert error.attempts == 3 == len(fake_server.requests)
    assert error.raw_reply is not None and '"yes"' in error.raw_reply
    assert len(fake_server.requests[1].messages) > len(fake_server.requests[0].messages)
    assert "verdict" in fake_server.requests[1].text


@pytest.mark.parametrize(
    "fault",
    [HttpError(429, retry_after=0.3), HttpError(500), MalformedJSON(), Hang(3.0)],
    ids=["429-retry-after", "500", "malformed-json", "hang"],
)
async def test_transport_faults_are_retried_by_the_judge_not_the_client(
    fake_server: FakeModelServer, fault: Any
) -> None:
    fake_server.add_rule(fault, times=1)
    fake_server.add_rule(GOOD)
    client = client_for(fake_server, timeout=1.0, max_retries=5)  # the client's own: turned off
    reply = await own(client, transport_retries=1).ask(REQUEST)
    assert reply.output.verdict == "1"
    assert reply.attempts == 2 == len(fake_server.requests)
    if isinstance(fault, HttpError) and fault.retry_after:
        gap = fake_server.requests[1].timestamp - fake_server.requests[0].timestamp
        assert gap >= fault.retry_after * 0.95, "Retry-After was not honoured"


async def test_persistent_5xx_is_judge_unavailable_with_the_key_redacted(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(HttpError(500, message=f"upstream said {SECRET}"))
    with pytest.raises(JudgeTransportError) as caught:
        await own(client_for(fake_server), transport_retries=2).ask(REQUEST)
    assert caught.value.error_type == "judge_unavailable"
    assert caught.value.attempts == 3 == len(fake_server.requests)
    assert SECRET not in str(caught.value)


async def test_refused_key_and_context_length_match_the_builtin_errors(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(HttpError(401, message=f"Incorrect API key provided: {SECRET}"), times=2)
    errors = []
    for judge in (own(client_for(fake_server)), builtin(fake_server)):
        with pytest.raises(JudgeTransportError) as caught:
            await judge.ask(REQUEST)
        errors.append((str(caught.value), caught.value.attempts))
    assert errors[0] == errors[1] and SECRET not in errors[0][0]
    fake_server.add_rule(HttpError(400, message="maximum context length is 8192 tokens"))
    with pytest.raises(JudgeContextLengthError):
        await own(client_for(fake_server), transport_retries=0).ask(REQUEST)


async def test_no_connection_counts_no_attempt() -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]  # nothing listens there once closed
    client = openai.AsyncOpenAI(base_url=f"http://127.0.0.1:{port}/v1", api_key=SECRET)
    _open.append(client)
    judge = own(client, transport_retries=1)
    with pytest.raises(JudgeTransportError) as caught:
        await judge.ask(REQUEST)
    assert caught.value.attempts == 0
    assert judge.connect_failures == 2
    assert "0 request(s) and 2 failed connection attempt(s)" in str(caught.value)


async def test_rows_of_a_run_equal_the_builtin_transports(
    fake_server: FakeModelServer,
) -> None:
    script_goal_judge(fake_server)
    traces = [trace("a", done=True), trace("b", done=False)]
    runs = []
    for judge in (own(client_for(fake_server)), builtin(fake_server)):
        summary = await agent_eval.ascore(traces, judge=judge, reference={"a": "x", "b": "y"})
        runs.append(sorted(summary.results, key=lambda r: r.conversation_id))
    theirs, ours = ([r.model_dump(exclude=VOLATILE) for r in run] for run in runs)
    assert theirs == ours
    assert [r["verdict"] for r in theirs] == ["1", "0"]
    assert all(r["attempts"] == 2 and r["input_tokens"] == 150 for r in theirs)


def test_client_with_endpoint_settings_or_a_sync_client_is_a_config_error() -> None:
    client = openai.AsyncOpenAI(base_url="http://127.0.0.1:9/v1", api_key=SECRET)
    with pytest.raises(ConfigError, match="base_url"):
        OpenAIJudge("m", client=client, base_url="http://127.0.0.1:9/v1")
    sync = openai.OpenAI(base_url="http://127.0.0.1:9/v1", api_key=SECRET)
    with pytest.raises(ConfigError, match=r"not an openai\.AsyncOpenAI"):
        OpenAIJudge("m", client=sync)  # type: ignore[arg-type]


def test_missing_openai_names_the_extra(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setitem(sys.modules, "openai", None)  # import openai raises ImportError
    with pytest.raises(ConfigError, match=r"otel-agent-eval\[openai\]"):
        OpenAIJudge("m", client=object())  # type: ignore[arg-type]
