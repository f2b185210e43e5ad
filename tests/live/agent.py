"""A small "agent" instrumented with the real OTel SDK (GenAI conventions v1.37 attributes),
and a receiver running in its own thread for tests that export to it.
"""

from __future__ import annotations

import asyncio
import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from opentelemetry.sdk.resources import Resource
from opentelemetry.sdk.trace import TracerProvider
from opentelemetry.sdk.trace.export import SimpleSpanProcessor, SpanExporter
from opentelemetry.trace import Tracer

from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._openai_judge import OpenAIJudge
from agent_eval.live._ack_log import AckLog
from agent_eval.live._durable import Durability
from agent_eval.live._receiver import Receiver, ReceiverLimits
from agent_eval.live._scorer import LiveScorer
from agent_eval.metrics._goal_accuracy import GoalAccuracy
from agent_eval.otel._events import EvaluationEvents
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore
from agent_eval.testing import FakeModelServer

DONE = "ZEBRA-DONE"


def text(role: str, content: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def provider(exporter: SpanExporter) -> TracerProvider:
    tracer_provider = TracerProvider(resource=Resource.create({"service.name": "test-agent"}))
    tracer_provider.add_span_processor(SimpleSpanProcessor(exporter))
    return tracer_provider


def run_agent(
    tracer: Tracer,
    conversation_id: str,
    turns: list[tuple[str, str]],
    extra: dict[str, Any] | None = None,
) -> list[str]:
    """One trace: an ``invoke_agent`` root with one ``chat`` span per turn; returns the chat
    span ids (16 hex), in order. ``extra`` attributes go on every span (e.g. ``session.id``)."""
    history: list[dict[str, Any]] = [text("system", "You are a helpful agent.")]
    span_ids = []
    with tracer.start_as_current_span(
        "invoke_agent helper",
        attributes={
            "gen_ai.operation.name": "invoke_agent",
            "gen_ai.agent.name": "helper",
            "gen_ai.conversation.id": conversation_id,
            **(extra or {}),
        },
    ):
        for user, answer in turns:
            history.append(text("user", user))
            with tracer.start_as_current_span(
                "chat fake-model",
                attributes={
                    "gen_ai.operation.name": "chat",
                    "gen_ai.request.model": "fake-model",
                    "gen_ai.conversation.id": conversation_id,
                    "gen_ai.input.messages": json.dumps(history),
                    "gen_ai.output.messages": json.dumps([text("assistant", answer)]),
                    **(extra or {}),
                },
            ) as span:
                span_ids.append(format(span.get_span_context().span_id, "016x"))
            history.append(text("assistant", answer))
    return span_ids


def run_chat_turn(tracer: Tracer, history: list[dict[str, Any]], user: str, answer: str) -> str:
    """One turn as a trace of its own, with no conversation id (the OpenAI Agents SDK's trace
    per ``Runner.run``): an ``invoke_agent`` root over a ``chat`` span whose input replays
    ``history`` (extended in place with the turn); returns the trace id (32 hex)."""
    history.append(text("user", user))
    with tracer.start_as_current_span(
        "invoke_agent helper",
        attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "helper"},
    ) as root:
        with tracer.start_as_current_span(
            "chat fake-model",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "fake-model",
                "gen_ai.input.messages": json.dumps(history),
                "gen_ai.output.messages": json.dumps([text("assistant", answer)]),
            },
        ):
            pass
        trace_id = format(root.get_span_context().trace_id, "032x")
    history.append(text("assistant", answer))
    return trace_id


@dataclass
class Live:
    receiver: Receiver
    loop: asyncio.AbstractEventLoop
    out: Path

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.receiver.port}"

    def call(self, coro: Any, timeout: float = 60) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def close_now(self) -> int:
        async def close() -> int:
            return self.receiver.close_due(everything=True)

        return int(self.call(close()))

    def wait_idle(self, timeout: float = 30) -> None:
        """Until nothing is pending and the backlog is scored."""

        async def idle() -> None:
            while self.receiver.buffer.pending or self.receiver.scorer.backlog:
                await asyncio.sleep(0.02)

        self.call(asyncio.wait_for(idle(), timeout), timeout + 5)


@contextmanager
def live_receiver(
    server: FakeModelServer,
    out: Path,
    limits: ReceiverLimits | None = None,
    events: EvaluationEvents | None = None,
    token: str | None = None,
    ack_log: Path | None = None,
) -> Iterator[Live]:
    """A receiver on a free loopback port, scoring with the fake judge, in its own thread.

    With ``ack_log``, every accepted body is synced to an acknowledgement log there first.
    """
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()
    limits = limits or ReceiverLimits(idle_seconds=0.3, after_root_seconds=0.1)
    judge = OpenAIJudge("fake-model", base_url=server.base_url, api_key_env="NO_SUCH_KEY_VAR")

    async def make() -> Receiver:  # the store lives in the loop's thread (SQLite)
        store = ResultStore(out)
        engine = Engine(
            metric=GoalAccuracy(),
            formatter=get_formatter("transcript@1"),
            judge=judge,
            run_id="live-run",
            store=store,
        )
        scorer = LiveScorer(engine, store, events, concurrency=4, directory=out)
        durable = None
        if ack_log is not None:
            durable = Durability(AckLog.open(ack_log, max_bytes=64 * 1024 * 1024), [engine])
            durable.log.start("live-run")
        receiver = Receiver(scorer, limits, out, token=token, durable=durable)
        await receiver.start("127.0.0.1", 0)
        return receiver

    receiver = asyncio.run_coroutine_threadsafe(make(), loop).result(30)
    live = Live(receiver, loop, out)
    try:
        yield live
    finally:
        live.call(receiver.stop())
        live.call(judge.aclose())

        async def close_store() -> None:
            if receiver.scorer.store is not None:
                receiver.scorer.store.close()

        live.call(close_store())
        if receiver.durable is not None:
            receiver.durable.close()
        loop.call_soon_threadsafe(loop.stop)
        thread.join(10)
        loop.close()
