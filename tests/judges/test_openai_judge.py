"""OpenAIJudge through real HTTP to the fake server: modes, re-asks, transport retries, secrets."""

from __future__ import annotations

import base64
import contextlib
import itertools
import json
import socket
import subprocess
import sys
import time
from collections.abc import AsyncIterator

import pytest

from agent_eval.errors import (
    JudgeContextLengthError,
    JudgeNotConfiguredError,
    JudgeOutputError,
    JudgeRequestError,
    JudgeTransportError,
)
from agent_eval.judges._base import JudgeRequest, judges
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.metrics._goal_accuracy import OutcomeComparison
from agent_eval.testing import (
    INVALID_VERDICTS,
    NO_USAGE,
    FakeModelServer,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Structured,
    Text,
    Usage,
)

SECRET = "sk-test-SECRET-0123456789abcdef"
REQUEST = JudgeRequest(
    messages=({"role": "system", "content": "Judge."}, {"role": "user", "content": "Done?"}),
    response_model=OutcomeComparison,
)
GOOD = Structured({"reason": "matches", "verdict": "1"}, usage=Usage(40, 10))

_judges: list[OpenAIJudge] = []


def make(server: FakeModelServer, **kwargs: object) -> OpenAIJudge:
    options: dict[str, object] = {"base_url": server.base_url, "api_key": SECRET, "timeout": 15.0}
    options.update(kwargs)
    judge = OpenAIJudge("fake-model", **options)  # type: ignore[arg-type]
    _judges.append(judge)
    return judge


@pytest.fixture(autouse=True)
async def _close() -> AsyncIterator[None]:
    yield
    while _judges:
        await _judges.pop().aclose()


def test_registered_under_openai() -> None:
    assert judges.get("openai") is OpenAIJudge


@pytest.mark.parametrize("mode", ["tools", "json_schema", "json"])
async def test_each_mode_returns_a_typed_reply(fake_server: FakeModelServer, mode: str) -> None:
    fake_server.add_rule(GOOD)
    reply = await make(fake_server, mode=mode).ask(REQUEST)
    assert isinstance(reply.output, OutcomeComparison)
    assert reply.output.model_dump() == {"reason": "matches", "verdict": "1"}
    assert (reply.input_tokens, reply.output_tokens, reply.attempts) == (40, 10, 1)
    assert '"verdict":"1"' in reply.raw_reply.replace(" ", "")
    expected = {"tools": "tools", "json_schema": "json_schema", "json": "json_object"}[mode]
    assert fake_server.requests[0].mode == expected
    assert fake_server.requests[0].body["temperature"] == 0.0


@pytest.mark.parametrize("bad", INVALID_VERDICTS, ids=repr)
async def test_invalid_verdict_is_reasked_then_errors_with_raw_reply(
    fake_server: FakeModelServer, bad: InvalidVerdict
) -> None:
    fake_server.add_rule(bad)
    with pytest.raises(JudgeOutputError) as caught:
        await make(fake_server, max_retries=2).ask(REQUEST)
    error = caught.value
    assert error.error_type == "invalid_judge_output"
    assert error.attempts == 3 == len(fake_server.requests)
    assert error.input_tokens > 0 and error.output_tokens > 0
    assert error.raw_reply is not None and "scripted invalid verdict" in error.raw_reply
    if not bad.missing:
        assert f'"verdict":{json.dumps(bad.value)}' in error.raw_reply.replace(" ", "")
    # the re-ask carries the validation error back to the model
    assert "verdict" in fake_server.requests[1].text
    assert len(fake_server.requests[1].messages) > len(fake_server.requests[0].messages)


async def test_invalid_then_valid_is_ok_after_a_reask(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(InvalidVerdict("yes"), times=1)
    fake_server.add_rule(GOOD)
    reply = await make(fake_server).ask(REQUEST)
    assert reply.output.verdict == "1"
    assert reply.attempts == 2
    assert reply.input_tokens >= 40 + 1  # summed over both attempts


@pytest.mark.parametrize(
    "fault",
    [HttpError(429, retry_after=0.3), HttpError(500), HttpError(503), MalformedJSON(), Hang(3.0)],
    ids=["429-retry-after", "500", "503", "malformed-json", "hang"],
)
async def test_transport_faults_are_retried(fake_server: FakeModelServer, fault: object) -> None:
    fake_server.add_rule(fault, times=1)  # type: ignore[arg-type]
    fake_server.add_rule(GOOD)
    start = time.perf_counter()
    reply = await make(fake_server, timeout=1.0).ask(REQUEST)
    assert reply.output.verdict == "1"
    assert reply.attempts == 2 == len(fake_server.requests)
    if isinstance(fault, HttpError) and fault.retry_after:
        gap = fake_server.requests[1].timestamp - fake_server.requests[0].timestamp
        assert gap >= fault.retry_after * 0.95, "Retry-After was not honoured"
    assert time.perf_counter() - start < 4.0


async def test_persistent_5xx_ends_in_a_transport_error(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(500, message=f"upstream said {SECRET}"))
    with pytest.raises(JudgeTransportError) as caught:
        await make(fake_server, transport_retries=2).ask(REQUEST)
    assert caught.value.error_type == "judge_unavailable"
    assert caught.value.attempts == 3 == len(fake_server.requests)
    assert SECRET not in str(caught.value)


async def test_refused_key_is_not_echoed(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(401, message=f"Incorrect API key provided: {SECRET}"))
    with pytest.raises(JudgeTransportError) as caught:
        await make(fake_server).ask(REQUEST)
    assert SECRET not in str(caught.value) and SECRET[-6:] not in str(caught.value)
    assert "401" in str(caught.value)
    assert SECRET not in repr(_judges[-1])


def test_no_key_and_no_base_url_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    with pytest.raises(JudgeNotConfiguredError, match="--base-url"):
        OpenAIJudge("gpt-4o-mini")


async def test_key_and_base_url_from_the_environment(
    fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", SECRET)
    monkeypatch.setenv("OPENAI_BASE_URL", fake_server.base_url)
    fake_server.add_rule(GOOD)
    judge = OpenAIJudge("fake-model", api_key_env="MY_JUDGE_KEY")
    _judges.append(judge)
    assert (await judge.ask(REQUEST)).output.verdict == "1"
    assert SECRET not in str(fake_server.requests[0].body)


async def test_concurrent_calls_count_their_own_attempts(fake_server: FakeModelServer) -> None:
    import asyncio

    fake_server.add_rule(HttpError(500), contains="first", times=1)
    fake_server.add_rule(GOOD)
    judge = make(fake_server)
    first = JudgeRequest(
        messages=({"role": "user", "content": "first"},), response_model=OutcomeComparison
    )
    replies = await asyncio.gather(judge.ask(first), judge.ask(REQUEST))
    assert [r.attempts for r in replies] == [2, 1]


Seen = list[tuple[str, dict[str, str], dict[str, str], dict[str, object]]]


@contextlib.asynccontextmanager
async def capture_server(route: str) -> AsyncIterator[tuple[str, Seen]]:
    """An endpoint on 127.0.0.1 that records each request's path, query and headers."""
    from aiohttp import web

    seen: Seen = []

    async def answer(request: web.Request) -> web.Response:
        body = await request.json()
        seen.append((request.path, dict(request.query), dict(request.headers), body))
        arguments = json.dumps({"reason": "ok", "verdict": "1"})
        call = {"id": "c1", "type": "function",
                "function": {"name": "OutcomeComparison", "arguments": arguments}}  # fmt: skip
        message = {"role": "assistant", "content": None, "tool_calls": [call]}
        return web.json_response({
            "id": "x", "object": "chat.completion", "model": "gpt-4o-mini",
            "choices": [{"index": 0, "message": message, "finish_reason": "tool_calls"}],
            "usage": {"prompt_tokens": 7, "completion_tokens": 3, "total_tokens": 10},
        })  # fmt: skip

    app = web.Application()
    app.router.add_post(route, answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}", seen
    finally:
        await runner.cleanup()


async def test_azure_endpoint_gets_azure_path_version_and_key_header(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.delenv("OPENAI_BASE_URL", raising=False)
    monkeypatch.setenv("AZURE_KEY", SECRET)
    async with capture_server("/openai/deployments/{name}/chat/completions") as (root, seen):
        judge = OpenAIJudge(
            "my-deployment",
            api_key_env="AZURE_KEY",
            azure_endpoint=root + "/",
            azure_api_version="2024-10-21",
            default_headers={"X-Gateway": "team-a"},
        )
        _judges.append(judge)
        reply = await judge.ask(REQUEST)
        await judge.aclose()
    assert (reply.output.verdict, reply.model, reply.input_tokens) == ("1", "gpt-4o-mini", 7)
    ((path, query, headers, body),) = seen
    assert path == "/openai/deployments/my-deployment/chat/completions"
    assert query == {"api-version": "2024-10-21"}
    assert headers["api-key"] == SECRET and "Authorization" not in headers
    assert headers["X-Gateway"] == "team-a"
    assert body["model"] == "my-deployment"
    assert SECRET not in repr(judge)


def test_azure_without_api_version_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    from agent_eval.errors import ConfigError

    monkeypatch.delenv("OPENAI_API_VERSION", raising=False)
    with pytest.raises(ConfigError, match="--azure-api-version"):
        OpenAIJudge("d", api_key=SECRET, azure_endpoint="https://example.invalid")


@pytest.mark.parametrize("userinfo", [False, True], ids=["bearer", "basic-auth"])
async def test_key_or_userinfo_and_custom_headers_reach_the_endpoint(userinfo: bool) -> None:
    async with capture_server("/v1/chat/completions") as (root, seen):
        base_url = root.replace("http://", "http://alice:pw%40x@") if userinfo else root
        judge = OpenAIJudge("m", base_url=base_url + "/v1", api_key=SECRET,
                            default_headers={"OpenAI-Organization": "org-1"})  # fmt: skip
        _judges.append(judge)
        assert judge.url == root + "/v1/chat/completions"
        assert (await judge.ask(REQUEST)).output.verdict == "1"
        await judge.aclose()
    ((_, _, headers, _),) = seen
    expected = f"Basic {base64.b64encode(b'alice:pw@x').decode()}" if userinfo else SECRET
    assert headers["Authorization"] == (expected if userinfo else f"Bearer {SECRET}")
    assert headers["OpenAI-Organization"] == "org-1"
    assert "pw" not in repr(judge)


def test_unknown_mode_is_a_config_error(fake_server: FakeModelServer) -> None:
    from agent_eval.errors import ConfigError

    with pytest.raises(ConfigError, match="tools, json_schema, json"):
        OpenAIJudge("m", base_url=fake_server.base_url, mode="xml")  # type: ignore[arg-type]


async def test_malformed_body_is_a_transport_retry_not_a_reask(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(MalformedJSON(), times=1)
    fake_server.add_rule(GOOD)
    reply = await make(fake_server, max_retries=0).ask(REQUEST)
    assert (reply.output.verdict, reply.attempts) == ("1", 2)


async def test_persistent_malformed_body_is_a_transport_error(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(MalformedJSON())
    with pytest.raises(JudgeTransportError, match="does not parse") as caught:
        await make(fake_server, transport_retries=1, max_retries=0).ask(REQUEST)
    assert caught.value.attempts == 2 == len(fake_server.requests)


REASONING_REPLIES = [
    '<think>The agent booked a table.</think>\n{"reason": "ok", "verdict": "1"}',
    '```json\n{"reason": "ok", "verdict": "1"}\n```',
    'Here is my verdict: {"reason": "ok", "verdict": "1"}',
    '<think>\nhmm {not json}\n</think>\n```json\n{"reason": "ok", "verdict": "1"}\n```',
]


@pytest.mark.parametrize("mode", ["json", "json_schema", "tools"])
@pytest.mark.parametrize("text", REASONING_REPLIES, ids=["think", "fence", "sentence", "both"])
async def test_reasoning_model_replies_are_read_after_one_leading_part(
    fake_server: FakeModelServer, mode: str, text: str
) -> None:
    fake_server.add_rule(Text(text, usage=Usage(30, 12)))
    reply = await make(fake_server, mode=mode, max_retries=0).ask(REQUEST)
    assert reply.output.model_dump() == {"reason": "ok", "verdict": "1"}
    assert reply.raw_reply == text  # the raw reply is kept whole
    assert reply.attempts == 1


@pytest.mark.parametrize(
    "text",
    [
        '<think>fine</think>{"reason": "ok", "verdict": "yes"}',
        '```json\n{"reason": "ok", "verdict": 1}\n```',
        'My verdict: {"reason": "ok", "verdict": "1.0"}',
    ],
)
async def test_salvaged_json_is_still_validated_strictly(
    fake_server: FakeModelServer, text: str
) -> None:
    fake_server.add_rule(Text(text))
    with pytest.raises(JudgeOutputError) as caught:
        await make(fake_server, mode="json", max_retries=1).ask(REQUEST)
    assert caught.value.raw_reply == text and caught.value.attempts == 2
    assert "verdict" in fake_server.requests[1].text  # the re-ask names the bad field


@pytest.mark.parametrize("mode", ["json", "json_schema", "tools"])
async def test_reasoning_content_field_is_not_the_answer(
    fake_server: FakeModelServer, mode: str
) -> None:
    answer = '{"reason": "ok", "verdict": "0"}'
    fake_server.add_rule(Text(answer, reasoning_content='Thinking... {"verdict": "1"}'))
    reply = await make(fake_server, mode=mode, max_retries=0).ask(REQUEST)
    assert reply.output.verdict == "0" and reply.raw_reply == answer


async def test_context_length_reply_is_its_own_error(fake_server: FakeModelServer) -> None:
    message = "This model's maximum context length is 128000 tokens. However, you requested 200000"
    fake_server.add_rule(HttpError(400, message=message, code="context_length_exceeded"))
    with pytest.raises(JudgeContextLengthError) as caught:
        await make(fake_server).ask(REQUEST)
    assert caught.value.error_type == "context_length_exceeded"
    assert len(fake_server.requests) == 1  # not retried: the same prompt fails again
    assert "--max-context-tokens" in str(caught.value)


async def test_context_window_message_without_code_is_recognised(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(HttpError(400, message="prompt exceeds the context window of 4096"))
    with pytest.raises(JudgeContextLengthError):
        await make(fake_server).ask(REQUEST)


@pytest.mark.parametrize("status", [400, 404, 422])
async def test_other_400_is_a_bad_request_not_unavailable(
    fake_server: FakeModelServer, status: int
) -> None:
    # regression: an answering server's 400 was labelled judge_unavailable
    fake_server.add_rule(HttpError(status, message="unknown parameter: seed"))
    with pytest.raises(JudgeRequestError) as caught:
        await make(fake_server).ask(REQUEST)
    assert caught.value.error_type == "judge_bad_request"
    assert "the judge endpoint refused the request: HTTP" in str(caught.value)
    assert "unknown parameter: seed" in str(caught.value)
    assert not isinstance(caught.value, JudgeTransportError | JudgeContextLengthError)


async def test_a_refused_key_stays_unavailable(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(401, message="bad key"))
    with pytest.raises(JudgeTransportError) as caught:
        await make(fake_server).ask(REQUEST)
    assert caught.value.error_type == "judge_unavailable"


async def test_reply_without_usage_is_unknown_usage(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Structured({"reason": "ok", "verdict": "1"}, usage=NO_USAGE))
    reply = await make(fake_server).ask(REQUEST)
    assert reply.usage_known is False
    assert (reply.input_tokens, reply.output_tokens) == (0, 0)


async def test_judge_is_an_async_context_manager_and_reusable_after_close(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(GOOD)
    judge = make(fake_server)
    async with judge as entered:
        assert entered is judge
        assert (await judge.ask(REQUEST)).output.verdict == "1"
    await judge.aclose()  # idempotent
    assert (await judge.ask(REQUEST)).output.verdict == "1"  # fresh connections


def test_one_judge_serves_successive_event_loops_when_closed_in_each(
    fake_server: FakeModelServer,
) -> None:
    import asyncio
    import warnings

    fake_server.add_rule(GOOD)
    judge = OpenAIJudge("fake-model", base_url=fake_server.base_url, api_key=SECRET)

    async def once() -> str:
        async with judge:
            return str((await judge.ask(REQUEST)).output.verdict)

    with warnings.catch_warnings():
        warnings.simplefilter("error")
        assert [asyncio.run(once()), asyncio.run(once())] == ["1", "1"]
        import gc

        gc.collect()


async def test_connect_failures_are_counted_apart_from_requests_sent() -> None:
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    port = sock.getsockname()[1]
    sock.close()  # nothing listens there: every attempt fails to connect
    judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{port}/v1", api_key=SECRET,
                        transport_retries=1, max_retries=0)  # fmt: skip
    _judges.append(judge)
    with pytest.raises(JudgeTransportError) as caught:
        await judge.ask(REQUEST)
    assert caught.value.attempts == 0  # no request was ever sent
    assert judge.connect_failures == 2
    assert "0 request(s) and 2 failed connection attempt(s)" in str(caught.value)


def test_retry_after_headers_as_openai_reads_them() -> None:
    from email.utils import formatdate

    from agent_eval.judges._openai_http import retry_after_seconds

    assert retry_after_seconds({"retry-after-ms": "1500", "retry-after": "9"}) == 1.5
    assert retry_after_seconds({"retry-after": "2.5"}) == 2.5
    dated = retry_after_seconds({"retry-after": formatdate(time.time() + 30, usegmt=True)})
    assert dated is not None and 27 < dated <= 30
    assert retry_after_seconds({"retry-after": "0"}) is None  # backoff instead
    assert retry_after_seconds({"retry-after": "120"}) is None  # over 60 s: backoff
    assert retry_after_seconds({"retry-after": "soon"}) is None
    assert retry_after_seconds({}) is None


async def test_x_should_retry_header_overrides_the_status() -> None:
    from aiohttp import web

    statuses = iter([(400, "true"), (200, None)])
    calls: list[int] = []

    async def answer(request: web.Request) -> web.Response:
        status, should = next(statuses)
        calls.append(status)
        if status != 200:
            body = {"error": {"message": "try again", "code": None}}
            return web.json_response(body, status=status, headers={"x-should-retry": should})
        return web.json_response({"choices": [{"message": {"content": '{"reason": "ok", '
                                  '"verdict": "1"}'}}], "usage": {"prompt_tokens": 1,
                                  "completion_tokens": 1}})  # fmt: skip

    app = web.Application()
    app.router.add_post("/v1/chat/completions", answer)
    runner = web.AppRunner(app, access_log=None)
    await runner.setup()
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.bind(("127.0.0.1", 0))
    await web.SockSite(runner, sock).start()
    try:
        judge = OpenAIJudge("m", base_url=f"http://127.0.0.1:{sock.getsockname()[1]}/v1",
                            api_key=SECRET, mode="json")  # fmt: skip
        _judges.append(judge)
        reply = await judge.ask(REQUEST)
        await judge.aclose()
    finally:
        await runner.cleanup()
    assert calls == [400, 200] and reply.attempts == 2


async def test_retry_after_is_honoured_on_every_retry(fake_server: FakeModelServer) -> None:
    # regression: from the second retry on, the wait read tenacity's wrapper, not the reply,
    # and fell back to the backoff (0.5-1 s) instead of the server's Retry-After
    fake_server.add_rule(HttpError(429, retry_after=1.5), times=2)
    fake_server.add_rule(GOOD)
    reply = await make(fake_server).ask(REQUEST)
    assert reply.attempts == 3 == len(fake_server.requests)
    stamps = [r.timestamp for r in fake_server.requests]
    assert min(b - a for a, b in itertools.pairwise(stamps)) >= 1.5 * 0.95


def test_building_the_judge_loads_no_http_client() -> None:
    # a fully cached re-run builds the judge and sends nothing: aiohttp (with ssl, cookies)
    # is imported with the first request, not with the judge
    code = (
        "import sys\n"
        "from agent_eval.judges._openai_judge import OpenAIJudge\n"
        "OpenAIJudge('m', base_url='http://127.0.0.1:9/v1', api_key='sk-x')\n"
        "print('aiohttp' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "False"
