"""A transport that has never connected stops retrying connections (issue 31: a closed port)."""

from __future__ import annotations

import socket

import orjson
import pytest

from agent_eval.judges._openai_http import (
    CONNECT_FAILURES_BEFORE_GIVING_UP,
    ChatTransport,
    EndpointError,
    SendCounts,
)
from agent_eval.testing import FakeModelServer

BODY = orjson.dumps({"model": "fake-model", "messages": [{"role": "user", "content": "hi"}]})


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _transport(base_url: str, retries: int = 5) -> ChatTransport:
    return ChatTransport(f"{base_url}/chat/completions", {}, timeout=5, retries=retries)


async def test_connections_are_not_retried_once_none_ever_connected() -> None:
    transport = _transport(f"http://127.0.0.1:{_closed_port()}/v1")
    first = SendCounts()
    with pytest.raises(EndpointError, match="cannot connect"):
        await transport.post(BODY, first)
    # 3 attempts failed to connect, then the 4th of 6 was not made
    assert (first.sent, first.connect_failures) == (0, CONNECT_FAILURES_BEFORE_GIVING_UP)
    second = SendCounts()
    with pytest.raises(EndpointError, match="none ever connected") as caught:
        await transport.post(BODY, second)
    assert (second.sent, second.connect_failures) == (0, 0)  # failed at once, nothing tried
    assert caught.value.kind == "connect"
    await transport.aclose()


async def test_an_endpoint_that_connected_once_is_retried_as_usual(
    fake_server: FakeModelServer,
) -> None:
    transport = _transport(fake_server.base_url, retries=4)
    try:
        answered = SendCounts()
        with pytest.raises(EndpointError) as refused:  # no rule: HTTP 400, but it connected
            await transport.post(BODY, answered)
        assert refused.value.status == 400 and answered.sent == 1
        fake_server.stop()  # the server goes away after answering once
        counts = SendCounts()
        with pytest.raises(EndpointError, match="cannot connect"):
            await transport.post(BODY, counts)
        # 1 + 4 retries, as usual (the first may go out on the kept-alive connection and be cut)
        assert counts.sent + counts.connect_failures == 5 and counts.connect_failures >= 4
    finally:
        await transport.aclose()
