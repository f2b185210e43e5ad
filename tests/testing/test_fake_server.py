"""The fake model server through the real openai client and the openai judge, over HTTP."""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys
import time
import urllib.request
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Literal

import openai
import pytest
from pydantic import BaseModel

from agent_eval.errors import JudgeOutputError
from agent_eval.judges._base import JudgeRequest
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.testing import (
    INVALID_VERDICTS,
    FakeModelServer,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Structured,
    Text,
    ToolCall,
    ToolCalls,
    Usage,
)
from agent_eval.testing._script import load_script

USER = [{"role": "user", "content": "Is the task done?"}]


class Verdict(BaseModel):
    reason: str
    verdict: Literal["0", "1"]


_clients: list[openai.AsyncOpenAI] = []


def client(server: FakeModelServer, **kwargs: object) -> openai.AsyncOpenAI:
    api = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-SECRET-123", **kwargs)  # type: ignore[arg-type]
    _clients.append(api)
    return api


_judges: list[OpenAIJudge] = []


def judge_on(server: FakeModelServer, mode: str = "tools", **kwargs: object) -> OpenAIJudge:
    judge = OpenAIJudge("m", base_url=server.base_url, api_key="sk-SECRET-123", mode=mode, **kwargs)  # type: ignore[arg-type]
    _judges.append(judge)
    return judge


VERDICT_REQUEST = JudgeRequest(messages=tuple(USER), response_model=Verdict)


@pytest.fixture(autouse=True)
async def _close_clients() -> AsyncIterator[None]:
    yield
    while _clients:
        await _clients.pop().close()
    while _judges:
        await _judges.pop().aclose()


async def test_text_reply_and_usage(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("Hello there", usage=Usage(11, 3)))
    reply = await client(fake_server).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "Hello there"
    assert (reply.usage.prompt_tokens, reply.usage.completion_tokens) == (11, 3)


async def test_usage_is_estimated_from_the_text(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("one two three four five"))
    reply = await client(fake_server).chat.completions.create(model="m", messages=USER)
    assert reply.usage.completion_tokens == 5
    assert reply.usage.prompt_tokens > 3


async def test_tool_calls_reply(fake_server: FakeModelServer) -> None:
    calls = (ToolCall("get_weather", {"city": "Paris"}, id="call_a"), ToolCall("get_time", {}))
    fake_server.add_rule(ToolCalls(calls))
    reply = await client(fake_server).chat.completions.create(model="m", messages=USER)
    message = reply.choices[0]
    assert message.finish_reason == "tool_calls"
    got = [
        (c.id, c.function.name, json.loads(c.function.arguments))
        for c in message.message.tool_calls
    ]
    assert got == [("call_a", "get_weather", {"city": "Paris"}), ("call_000001", "get_time", {})]


@pytest.mark.parametrize(
    ("mode", "wire_mode"),
    [
        ("tools", "tools"),
        ("json_schema", "json_schema"),
        ("json", "json_object"),
    ],
)
async def test_structured_reply_in_each_mode(
    fake_server: FakeModelServer, mode: str, wire_mode: str
) -> None:
    fake_server.add_rule(Structured(Verdict(reason="done", verdict="1")), schema="Verdict")
    verdict = (await judge_on(fake_server, mode).ask(VERDICT_REQUEST)).output
    assert verdict.model_dump() == {"reason": "done", "verdict": "1"}
    (request,) = fake_server.requests
    assert (request.mode, request.schema_name) == (wire_mode, "Verdict")


@pytest.mark.parametrize("bad", INVALID_VERDICTS, ids=repr)
async def test_each_invalid_verdict_is_rejected_then_reasked(
    fake_server: FakeModelServer, bad: InvalidVerdict
) -> None:
    fake_server.add_rule(bad, schema="Verdict", times=1)
    fake_server.add_rule(Structured({"reason": "ok", "verdict": "0"}), schema="Verdict")
    verdict = (await judge_on(fake_server, max_retries=2).ask(VERDICT_REQUEST)).output
    assert verdict.verdict == "0"
    first, second = fake_server.requests
    assert (first.rule, second.rule) == (0, 1)
    assert "verdict" in second.text  # the judge re-asked with the validation error


async def test_invalid_verdict_until_retries_run_out(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(InvalidVerdict("yes"), schema="Verdict")
    with pytest.raises(JudgeOutputError):
        await judge_on(fake_server, "json_schema", max_retries=2).ask(VERDICT_REQUEST)
    assert len(fake_server.requests) == 3  # max_retries=2 is three attempts


async def test_rules_fire_in_order_with_budgets(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("first"), times=1)
    fake_server.add_rule(Text("second"), times=2)
    fake_server.add_rule(Text("always"))
    api = client(fake_server)
    texts = [
        (await api.chat.completions.create(model="m", messages=USER)).choices[0].message.content
        for _ in range(5)
    ]
    assert texts == ["first", "second", "second", "always", "always"]


async def test_match_by_substring_predicate_model_and_dynamic_reply(
    fake_server: FakeModelServer,
) -> None:
    fake_server.add_rule(Text("weather"), contains="forecast")
    fake_server.add_rule(Text("big"), match=lambda body: body.get("max_tokens") == 99)
    fake_server.add_rule(Text("other model"), model="other")
    fake_server.add_rule(lambda request: Text(f"echo {len(request.messages)}"))
    api = client(fake_server)

    async def ask(content: str, **kwargs: object) -> str | None:
        messages = [{"role": "user", "content": content}]
        reply = await api.chat.completions.create(messages=messages, **{"model": "m", **kwargs})  # type: ignore[call-overload]
        return reply.choices[0].message.content  # type: ignore[no-any-return]

    assert await ask("the forecast?") == "weather"
    assert await ask("x", max_tokens=99) == "big"
    assert await ask("x", model="other") == "other model"
    assert await ask("x") == "echo 1"


async def test_no_rule_is_a_clear_400(fake_server: FakeModelServer) -> None:
    with pytest.raises(openai.BadRequestError, match="no rule matches"):
        await client(fake_server).chat.completions.create(model="m", messages=USER)


@pytest.mark.parametrize("status", [429, 500, 503])
async def test_http_errors_are_retried_by_openai(fake_server: FakeModelServer, status: int) -> None:
    fake_server.add_rule(HttpError(status, retry_after=0.05), times=2)
    fake_server.add_rule(Text("recovered"))
    reply = await client(fake_server, max_retries=2).chat.completions.create(
        model="m", messages=USER
    )
    assert reply.choices[0].message.content == "recovered"
    assert [r.status for r in fake_server.requests] == [status, status, 200]


async def test_429_carries_retry_after_and_openai_honours_it(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(HttpError(429, retry_after=0.6), times=1)
    fake_server.add_rule(Text("ok"))
    with pytest.raises(openai.RateLimitError) as caught:
        await client(fake_server, max_retries=0).chat.completions.create(model="m", messages=USER)
    assert caught.value.response.headers["Retry-After"] == "0.6"
    fake_server.clear()
    fake_server.add_rule(HttpError(429, retry_after=0.6), times=1)
    fake_server.add_rule(Text("ok"))
    await client(fake_server, max_retries=1).chat.completions.create(model="m", messages=USER)
    first, second = fake_server.requests
    assert second.timestamp - first.timestamp >= 0.6


async def test_hang_past_the_client_timeout(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Hang(30), times=1)
    fake_server.add_rule(Text("after the hang"))
    api = client(fake_server, timeout=0.3, max_retries=1)
    started = time.monotonic()
    reply = await api.chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "after the hang"
    assert 0.3 <= time.monotonic() - started < 5
    with pytest.raises(openai.APITimeoutError):
        fake_server.clear()
        fake_server.add_rule(Hang(30))
        await client(fake_server, timeout=0.2, max_retries=0).chat.completions.create(
            model="m", messages=USER
        )


async def test_hang_then_reply(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Hang(0.2, then=Text("late")))
    started = time.monotonic()
    reply = await client(fake_server).chat.completions.create(model="m", messages=USER)
    assert reply.choices[0].message.content == "late"
    assert time.monotonic() - started >= 0.2


async def test_malformed_json_body(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(MalformedJSON())
    with pytest.raises(json.JSONDecodeError):
        await client(fake_server, max_retries=0).chat.completions.create(model="m", messages=USER)
    assert fake_server.requests[0].status == 200


async def test_latency_fixed_and_per_rule() -> None:
    with FakeModelServer(latency=0.25) as server:
        server.add_rule(Text("fast"), contains="fast", latency=0.0)
        server.add_rule(Text("slow"))
        api = client(server)
        started = time.monotonic()
        await api.chat.completions.create(model="m", messages=USER)
        slow = time.monotonic() - started
        started = time.monotonic()
        await api.chat.completions.create(model="m", messages=[{"role": "user", "content": "fast"}])
        fast = time.monotonic() - started
    assert slow >= 0.25 > fast


async def test_jitter_is_bounded() -> None:
    with FakeModelServer(latency=0.05, jitter=0.1, seed=3) as server:
        server.add_rule(Text("x"))
        api = client(server)
        for _ in range(3):
            started = time.monotonic()
            await api.chat.completions.create(model="m", messages=USER)
            assert 0.05 <= time.monotonic() - started < 0.5


async def _fault_trail(seed: int) -> list[tuple[int, str | None]]:
    with FakeModelServer(seed=seed, fault_rate=0.5) as server:
        server.add_rule(Structured({"reason": "r", "verdict": "1"}))
        api = client(server, max_retries=0)
        for _ in range(30):
            with contextlib.suppress(openai.APIError, json.JSONDecodeError):
                await api.chat.completions.create(model="m", messages=USER)
        return [(r.status, r.fault) for r in server.requests]


async def test_random_faults_are_reproducible_by_seed() -> None:
    trail = await _fault_trail(seed=7)
    assert trail == await _fault_trail(seed=7)
    assert trail != await _fault_trail(seed=8)
    faults = [fault for _, fault in trail if fault]
    assert 5 <= len(faults) <= 25
    assert {status for status, _ in trail} >= {200, 429}


async def test_random_faults_do_not_use_up_a_rule() -> None:
    with FakeModelServer(
        seed=1, fault_rate=0.5, faults=[HttpError(503, retry_after=0.01)]
    ) as server:
        server.add_rule(Text("once"), times=1)
        reply = await client(server, max_retries=10).chat.completions.create(
            model="m", messages=USER
        )
    assert reply.choices[0].message.content == "once"


async def test_no_auth_header_or_key_recorded(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("x"))
    await client(fake_server).chat.completions.create(model="m", messages=USER)
    (request,) = fake_server.requests
    assert "sk-SECRET-123" not in repr(request)
    assert "authorization" not in repr(request).lower()
    assert request.path == "/v1/chat/completions"
    assert request.body["messages"] == USER


async def test_models_endpoint(fake_server: FakeModelServer) -> None:
    models = await client(fake_server).models.list()
    assert [m.id for m in models.data] == ["fake-model"]


def test_clear_and_restart_errors() -> None:
    server = FakeModelServer()
    with server:
        server.add_rule(Text("x"))
        with pytest.raises(RuntimeError, match="already started"):
            server.start()
        server.clear()
        assert server.requests == []
    server.stop()  # idempotent


def test_script_file_and_process(tmp_path: Path) -> None:
    script = {
        "default": {"text": "default"},
        "rules": [
            {
                "contains": "weather",
                "times": 1,
                "reply": {"tool_calls": [{"name": "w", "arguments": {"c": 1}}]},
            },
            {"schema": "Verdict", "reply": {"structured": {"reason": "r", "verdict": "1"}}},
        ],
    }
    path = tmp_path / "rules.json"
    path.write_text(json.dumps(script))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "agent_eval.testing._fake_server",
            "--port",
            "0",
            "--script",
            str(path),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        assert base_url.startswith("http://127.0.0.1:") and base_url.endswith("/v1")
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "weather?"}]})
        request = urllib.request.Request(
            f"{base_url}/chat/completions", body.encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=10) as response:
            reply = json.loads(response.read())
        assert reply["choices"][0]["message"]["tool_calls"][0]["function"]["name"] == "w"
        with urllib.request.urlopen(request, timeout=10) as response:
            assert json.loads(response.read())["choices"][0]["message"]["content"] == "default"
    finally:
        process.terminate()
        assert process.wait(10) == 0


def test_bad_script_names_the_rule(tmp_path: Path) -> None:
    from agent_eval.errors import ConfigError

    path = tmp_path / "bad.json"
    path.write_text(json.dumps({"rules": [{"reply": {"text": "x"}}, {"reply": {"nope": 1}}]}))
    with pytest.raises(ConfigError, match=r"rules\[1\]"):
        load_script(path, FakeModelServer())


async def test_streamed_text_with_usage(fake_server: FakeModelServer) -> None:
    text = "A fairly long answer, streamed in several pieces, with ünïcode."
    fake_server.add_rule(Text(text, usage=Usage(9, 4)))
    stream = await client(fake_server).chat.completions.create(
        model="m", messages=USER, stream=True, stream_options={"include_usage": True}
    )
    chunks = [chunk async for chunk in stream]
    pieces = [c.choices[0].delta.content or "" for c in chunks if c.choices]
    assert "".join(pieces) == text and len(pieces) > 3
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens == 4
    assert [c.choices[0].finish_reason for c in chunks if c.choices][-1] == "stop"


async def test_streamed_tool_calls_and_structured_reply(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(
        ToolCalls((ToolCall("lookup", {"query": "a long query string"}, id="c1"), ToolCall("b"))),
        times=1,
    )
    fake_server.add_rule(Structured({"reason": "because", "verdict": "1"}), schema="Verdict")
    stream = await client(fake_server).chat.completions.create(
        model="m", messages=USER, stream=True
    )
    calls: dict[int, dict[str, str]] = {}
    async for chunk in stream:
        for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
            call = calls.setdefault(delta.index, {"id": "", "name": "", "arguments": ""})
            call["id"] += delta.id or ""
            call["name"] += (delta.function and delta.function.name) or ""
            call["arguments"] += (delta.function and delta.function.arguments) or ""
    assert calls[0] == {
        "id": "c1",
        "name": "lookup",
        "arguments": '{"query":"a long query string"}',
    }
    assert calls[1]["name"] == "b" and calls[1]["arguments"] == "{}"
    tool = {"type": "function", "function": {"name": "Verdict", "parameters": {}}}
    structured = await client(fake_server).chat.completions.create(
        model="m",
        messages=USER,
        stream=True,
        tools=[tool],  # type: ignore[list-item]
        tool_choice={"type": "function", "function": {"name": "Verdict"}},
    )
    arguments = ""
    async for chunk in structured:
        for delta in chunk.choices[0].delta.tool_calls or () if chunk.choices else ():
            arguments += (delta.function and delta.function.arguments) or ""
    assert Verdict.model_validate_json(arguments).model_dump() == {
        "reason": "because",
        "verdict": "1",
    }


async def test_responses_api_text_and_tool_calls(fake_server: FakeModelServer) -> None:
    calls = (ToolCall("get_weather", {"city": "Paris"}, id="call_a"), ToolCall("get_time", {}))
    fake_server.add_rule(ToolCalls(calls), times=1)
    fake_server.add_rule(Text("It is sunny.", usage=Usage(9, 4)), contains="sunny?")
    api = client(fake_server)
    first = await api.responses.create(model="m", input="Weather?", instructions="Be brief.")
    assert first.instructions == "Be brief."  # echoed, as the real API does
    got = [(item.type, item.call_id, item.name, item.arguments) for item in first.output]
    assert got == [
        ("function_call", "call_a", "get_weather", '{"city":"Paris"}'),
        ("function_call", got[1][1], "get_time", "{}"),
    ]
    second = await api.responses.create(
        model="m",
        input=[
            {"role": "user", "content": [{"type": "input_text", "text": "Is it sunny?"}]},
            {"type": "function_call_output", "call_id": "call_a", "output": "sunny"},
        ],
    )
    assert second.output_text == "It is sunny."
    assert (second.usage.input_tokens, second.usage.output_tokens) == (9, 4)
    request = fake_server.requests[0]
    assert request.path == "/v1/responses"
    assert request.messages[0] == {"role": "system", "content": "Be brief."}
    assert "Is it sunny?" in fake_server.requests[1].text


async def test_responses_api_streamed(fake_server: FakeModelServer) -> None:
    fake_server.add_rule(Text("A reply long enough to come in several deltas."), times=1)
    fake_server.add_rule(ToolCalls((ToolCall("lookup", {"order": "A-1042"}, id="call_z"),)))
    api = client(fake_server)
    deltas: list[str] = []
    async with api.responses.stream(model="m", input="hi") as stream:
        async for event in stream:
            if event.type == "response.output_text.delta":
                deltas.append(event.delta)
        final = await stream.get_final_response()
    assert len(deltas) > 1 and "".join(deltas) == final.output_text
    assert final.output_text == "A reply long enough to come in several deltas."
    async with api.responses.stream(model="m", input="again") as stream:
        called = await stream.get_final_response()
    (item,) = called.output
    assert (item.type, item.call_id, item.name, item.arguments) == (
        "function_call", "call_z", "lookup", '{"order":"A-1042"}',
    )  # fmt: skip


async def test_responses_api_needs_input(fake_server: FakeModelServer) -> None:
    with pytest.raises(openai.BadRequestError, match="with input"):
        await client(fake_server).responses.create(model="m", input=None)  # type: ignore[arg-type]


def test_completions_are_gzip_encoded_when_the_client_accepts_gzip() -> None:
    """As api.openai.com does: vcrpy then records the compressed bytes (issue 19, item 12)."""
    import gzip

    body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]}).encode()
    with FakeModelServer() as server:
        server.add_rule(Text("hello there"))
        answers = {}
        for accept in ("gzip, deflate", "identity"):
            request = urllib.request.Request(
                f"{server.base_url}/chat/completions", data=body, method="POST",
                headers={"Content-Type": "application/json", "Accept-Encoding": accept},
            )  # fmt: skip
            with urllib.request.urlopen(request, timeout=10) as response:
                answers[accept] = (response.headers.get("Content-Encoding"), response.read())
        client = openai.OpenAI(base_url=server.base_url, api_key="sk-test")
        reply = client.chat.completions.create(
            model="m", messages=[{"role": "user", "content": "x"}]
        )
    encoding, raw = answers["gzip, deflate"]
    assert encoding == "gzip" and raw[:2] == b"\x1f\x8b"
    assert json.loads(gzip.decompress(raw))["choices"][0]["message"]["content"] == "hello there"
    plain_encoding, plain = answers["identity"]
    assert plain_encoding is None
    assert json.loads(plain)["choices"][0]["message"]["content"] == "hello there"
    assert reply.choices[0].message.content == "hello there"  # the openai client decodes it


def test_servers_with_reuse_port_share_one_port_and_both_answer() -> None:
    body = json.dumps({"model": "fake-model", "messages": USER}).encode()
    first = FakeModelServer(reuse_port=True, default=Text("first")).start()
    try:
        with FakeModelServer(port=first.port, reuse_port=True, default=Text("second")) as second:
            answers = set()
            for _ in range(40):  # a new connection each: the kernel spreads them over both
                request = urllib.request.Request(
                    first.base_url + "/chat/completions",
                    data=body,
                    headers={"Content-Type": "application/json"},
                )
                with urllib.request.urlopen(request, timeout=10) as response:
                    reply = json.loads(response.read())
                answers.add(reply["choices"][0]["message"]["content"])
            assert answers == {"first", "second"}
            assert len(first.requests) + len(second.requests) == 40
            assert first.requests and second.requests
    finally:
        first.stop()
