"""The event loop commands run on (agent_eval.run._event_loop): choice, opt-out, same results."""

from __future__ import annotations

import asyncio
import sys
from pathlib import Path
from typing import Any

import pytest
import uvloop

from agent_eval._api import score
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.errors import ConfigError
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._event_loop import LOOP_ENV
from agent_eval.testing import FakeModelServer, Structured


async def _running_loop() -> type[asyncio.AbstractEventLoop]:
    return type(asyncio.get_running_loop())


def test_auto_runs_on_uvloop_when_installed(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV, raising=False)
    assert event_loop.loop_name() == "uvloop"
    assert event_loop.run(_running_loop()) is uvloop.Loop
    monkeypatch.setenv(LOOP_ENV, " AUTO ")
    assert event_loop.run(_running_loop()) is uvloop.Loop


def test_asyncio_opts_out(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_ENV, "asyncio")
    assert event_loop.loop_factory() is None
    assert event_loop.loop_name() == "asyncio"
    loop_type = event_loop.run(_running_loop())
    default = asyncio.new_event_loop()  # the platform's default loop
    default.close()
    assert loop_type is type(default)
    assert not issubclass(loop_type, uvloop.Loop)


def test_uvloop_insists_and_auto_falls_back_when_it_is_missing(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setitem(sys.modules, "uvloop", None)  # import uvloop raises ImportError
    monkeypatch.setenv(LOOP_ENV, "uvloop")
    with pytest.raises(ConfigError, match=r"AGENT_EVAL_EVENT_LOOP=uvloop but uvloop is not"):
        event_loop.loop_factory()
    coro = _running_loop()
    with pytest.raises(ConfigError):
        event_loop.run(coro)
    assert coro.cr_frame is None  # closed, not left to warn "never awaited"
    monkeypatch.setenv(LOOP_ENV, "auto")
    assert event_loop.loop_name() == "asyncio"
    assert not issubclass(event_loop.run(_running_loop()), uvloop.Loop)


def test_an_unknown_loop_is_a_config_error(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(LOOP_ENV, "trio")
    with pytest.raises(ConfigError, match=r"AGENT_EVAL_EVENT_LOOP='trio'.*auto, asyncio, uvloop"):
        event_loop.loop_name()


def test_run_keeps_asyncio_run_semantics(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv(LOOP_ENV, raising=False)

    async def fails() -> None:
        raise ValueError("from the coroutine")

    with pytest.raises(ValueError, match="from the coroutine"):
        event_loop.run(fails())

    async def nested() -> None:
        inner = _running_loop()
        with pytest.raises(RuntimeError, match="cannot be called from a running event loop"):
            event_loop.run(inner)
        assert inner.cr_frame is None  # closed unrun

    event_loop.run(nested())


def _traces() -> list[AgentTrace]:
    return [
        AgentTrace(
            conversation_id=f"conv-{i}",
            messages=(
                UserMessage(content=f"Book table {i} at restaurant #{i}."),
                AssistantMessage(content=f"Booked table {i}." if i % 3 else "I cannot."),
            ),
        )
        for i in range(12)
    ]


def _reply(request: Any) -> Structured:
    booked = "I cannot." not in request.text and "Nothing was booked" not in request.text
    return Structured(
        {
            "user_goal": "A table booked",
            "end_state": "A table was booked" if booked else "Nothing was booked",
            "reason": "matches" if booked else "differs",
            "verdict": "1" if booked else "0",
        }
    )


def test_a_real_score_gives_the_same_results_on_both_loops(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """api.score through the openai judge and the fake server, once per loop: same rows."""
    observed: dict[str, list[dict[str, Any]]] = {}
    with FakeModelServer(default=_reply) as server:
        for loop in ("asyncio", "uvloop"):
            monkeypatch.setenv(LOOP_ENV, loop)
            judge = OpenAIJudge("fake-model", base_url=server.base_url, api_key="sk-test-key")
            summary = score(_traces(), judge=judge, concurrency=4, out=tmp_path / loop)
            volatile = {"run_id", "started_at", "latency_ms"}
            observed[loop] = sorted(
                (
                    {k: v for k, v in r.model_dump(mode="json").items() if k not in volatile}
                    for r in summary.results
                ),
                key=lambda row: row["conversation_id"],
            )
        assert len(server.requests) == 2 * 2 * 12
    assert observed["asyncio"] == observed["uvloop"]
    verdicts = [row["verdict"] for row in observed["uvloop"]]
    assert verdicts == ["0" if i % 3 == 0 else "1" for i in sorted(range(12), key=str)]
    assert {row["status"] for row in observed["uvloop"]} == {"ok"}
