"""``server_process``: a fake-server script in its own interpreter, its URL, then SIGTERM."""

from __future__ import annotations

import json
import urllib.request

import pytest

from agent_eval.testing._process import server_process

SCRIPT = r"""
import signal, sys, threading
from agent_eval.testing import FakeModelServer, Text

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
with FakeModelServer() as server:
    server.add_rule(Text(sys.argv[1]))
    print(server.base_url, flush=True)
    stop.wait()
"""


def test_the_script_serves_until_the_block_ends() -> None:
    with server_process(SCRIPT, "hello from the child") as base_url:
        body = json.dumps({"model": "m", "messages": [{"role": "user", "content": "hi"}]})
        request = urllib.request.Request(
            f"{base_url}/chat/completions",
            data=body.encode(),
            headers={"content-type": "application/json"},
        )
        with urllib.request.urlopen(request, timeout=30) as reply:
            answer = json.loads(reply.read())
    assert answer["choices"][0]["message"]["content"] == "hello from the child"
    with pytest.raises(OSError):
        urllib.request.urlopen(f"{base_url}/models", timeout=5)


def test_a_script_that_prints_no_url_is_an_error() -> None:
    with pytest.raises(RuntimeError, match="did not start"), server_process("print('nope')"):
        pass
