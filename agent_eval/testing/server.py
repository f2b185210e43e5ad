"""A fake OpenAI-compatible model server: real HTTP on 127.0.0.1, scripted replies and faults.

Tests (and users' own tests) point the real ``openai``/``instructor`` clients at it, so the
whole client stack runs, retries and parsing included::

    with FakeModelServer(latency=0.01) as server:
        server.add_rule(Structured({"reason": "done", "verdict": "1"}), schema="Verdict")
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
        ...
        assert server.requests[0].mode == "tools"

Endpoints: ``POST /v1/chat/completions`` (plain, or server-sent events for ``"stream": true``)
and ``GET /v1/models``. The aiohttp server runs its own event loop in a background thread, so
sync and async clients both work.
A request no rule answers gets a 400 error saying so (or the ``default`` reply when set).

Run it as a process with ``python -m agent_eval.testing.fake_server`` (see that module).
"""

from __future__ import annotations

import asyncio
import dataclasses
import random
import socket
import threading
import time
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

import orjson
from aiohttp import web

from agent_eval.testing.completions import CompletionBuilder, model_list
from agent_eval.testing.recording import RecordedRequest, decode_body
from agent_eval.testing.replies import (
    DEFAULT_FAULTS,
    Fault,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Reply,
    ReplySpec,
    Structured,
)
from agent_eval.testing.rules import Rule, RuleBook
from agent_eval.testing.streaming import sse_events

__all__ = ["FakeModelServer"]

_CHAT_PATH = "/v1/chat/completions"
_CLIENT_CLOSED = 499
"""Status recorded for a request the client abandoned before the reply (nginx's convention)."""


class FakeModelServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 answering from scripted rules.

    Args:
        latency: Seconds every reply waits before it is sent (a rule can override it).
        seed: Seeds the fault draws and the jitter, so a sequential run is reproducible.
        jitter: Up to this many extra seconds of latency, drawn uniformly per request.
        fault_rate: Probability (0-1) that a chat request gets a random fault from ``faults``
            instead of its rule's reply. A random fault does not use up the rule.
        faults: The faults to draw from; :data:`~agent_eval.testing.replies.DEFAULT_FAULTS`
            when ``None``. :class:`InvalidVerdict` faults only spoil :class:`Structured` replies.
        models: The model ids ``GET /v1/models`` lists.
        default: The reply when no rule matches; a 400 error naming the request when ``None``.
        port: The port to bind; 0 picks a free one.

    """

    def __init__(
        self,
        latency: float = 0.0,
        seed: int = 0,
        *,
        jitter: float = 0.0,
        fault_rate: float = 0.0,
        faults: Sequence[Fault] | None = None,
        models: Sequence[str] = ("fake-model",),
        default: ReplySpec | None = None,
        port: int = 0,
    ) -> None:
        self.latency, self.jitter, self.fault_rate = latency, jitter, fault_rate
        self.faults: tuple[Fault, ...] = tuple(DEFAULT_FAULTS if faults is None else faults)
        self.models, self.default = tuple(models), default
        self._fault_rng, self._jitter_rng = random.Random(seed), random.Random(seed + 1)
        self._port = port
        self._rules = RuleBook()
        self._builder = CompletionBuilder()
        self._requests: list[RecordedRequest] = []
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._thread: threading.Thread | None = None

    # -- scripting -------------------------------------------------------------------------

    def add_rule(
        self,
        reply: ReplySpec,
        *,
        match: Callable[[Any], bool] | None = None,
        contains: str | None = None,
        schema: str | None = None,
        model: str | None = None,
        times: int | None = None,
        latency: float | None = None,
    ) -> Rule:
        """Script a reply; rules are tried in the order they were added.

        Args:
            reply: A reply (:mod:`agent_eval.testing.replies`) or ``(RecordedRequest) -> Reply``.
            match: A predicate on the request's JSON body.
            contains: A substring of the messages' text.
            schema: The response schema name (tools or json_schema mode).
            model: The requested model.
            times: How many requests the rule answers (``1`` = once); ``None`` = always.
            latency: Seconds to wait before this rule's reply, instead of the server's.

        Returns:
            The rule (its ``used`` counts the requests it answered).

        """
        rule = Rule(
            reply=reply, match=match, contains=contains, schema=schema, model=model,
            times=times, latency=latency,
        )  # fmt: skip
        self._rules.add(rule)
        return rule

    @property
    def requests(self) -> list[RecordedRequest]:
        """The requests received so far, in arrival order (a copy; no headers are recorded)."""
        with self._lock:
            return list(self._requests)

    def clear(self) -> None:
        """Forget the recorded requests and remove every rule."""
        with self._lock:
            self._requests.clear()
        self._rules.clear()

    # -- lifecycle -------------------------------------------------------------------------

    @property
    def port(self) -> int:
        """The bound port (after :meth:`start`)."""
        return self._port

    @property
    def base_url(self) -> str:
        """``http://127.0.0.1:PORT/v1``, the ``base_url`` for OpenAI clients."""
        return f"http://127.0.0.1:{self._port}/v1"

    def start(self) -> FakeModelServer:
        """Bind the port and serve in a background thread; returns ``self``.

        Raises:
            RuntimeError: already started, or the server failed to start.

        """
        if self._thread is not None:
            raise RuntimeError("FakeModelServer is already started")
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        sock.bind(("127.0.0.1", self._port))
        self._port = sock.getsockname()[1]
        self._loop = asyncio.new_event_loop()
        ready = threading.Event()
        self._thread = threading.Thread(
            target=self._serve, args=(sock, ready), name="fake-model-server", daemon=True
        )
        self._thread.start()
        if not ready.wait(10):
            raise RuntimeError("FakeModelServer did not start within 10 s")
        return self

    def stop(self) -> None:
        """Stop serving (cancels hanging requests) and join the thread; idempotent."""
        if self._thread is None or self._loop is None:
            return
        self._loop.call_soon_threadsafe(self._loop.stop)
        self._thread.join(10)
        self._thread = None

    def __enter__(self) -> FakeModelServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()

    def _serve(self, sock: socket.socket, ready: threading.Event) -> None:
        assert self._loop is not None  # set by start()
        loop = self._loop
        asyncio.set_event_loop(loop)
        app = web.Application(client_max_size=64 * 1024**2)
        app.router.add_post(_CHAT_PATH, self._chat)
        app.router.add_get("/v1/models", self._models)
        runner = web.AppRunner(
            app, handle_signals=False, handler_cancellation=True, access_log=None,
            shutdown_timeout=0.1,
        )  # fmt: skip
        loop.run_until_complete(runner.setup())
        loop.run_until_complete(web.SockSite(runner, sock).start())
        ready.set()
        try:
            loop.run_forever()
        finally:
            loop.run_until_complete(runner.cleanup())
            loop.close()

    # -- handlers --------------------------------------------------------------------------

    async def _models(self, request: web.Request) -> web.Response:
        self._record(RecordedRequest(request.path, request.method, None, time.monotonic(), 200))
        return web.json_response(model_list(self.models))

    async def _chat(self, request: web.Request) -> web.StreamResponse:
        arrived = time.monotonic()
        body = decode_body(await request.read())
        recorded = RecordedRequest(request.path, request.method, body, arrived)
        index = self._record(recorded)
        if not isinstance(body, dict) or not isinstance(body.get("messages"), list):
            error = _error(400, "body must be a JSON object with messages")
            return self._finish(index, None, None, error)
        rule_index, reply, fault, latency = self._choose(recorded)
        try:
            await asyncio.sleep(latency)
            outcome = await self._respond(reply, recorded)
            response = await self._send(request, outcome, body)
        except asyncio.CancelledError:  # the client gave up (e.g. timed out during a hang)
            self._finish(index, rule_index, fault, web.Response(status=_CLIENT_CLOSED))
            raise
        return self._finish(index, rule_index, fault, response)

    def _choose(
        self, request: RecordedRequest, allow_fault: bool = True
    ) -> tuple[int | None, Reply | None, Fault | None, float]:
        fault = self._draw_fault() if allow_fault else None
        found = self._rules.find(request) if fault is not None else self._rules.take(request)
        rule_index, rule = found if found is not None else (None, None)
        reply: Reply | None = None
        if rule is not None:
            reply = rule.build(request)
        elif self.default is not None:
            reply = self.default(request) if callable(self.default) else self.default
        if isinstance(fault, InvalidVerdict):
            if not isinstance(reply, Structured):  # only structured replies can be spoiled
                return self._choose(request, allow_fault=False)
            reply = Structured(fault.spoil(reply.as_dict()))
        elif fault is not None:
            reply = fault
        latency = self.latency if rule is None or rule.latency is None else rule.latency
        with self._lock:
            latency += self._jitter_rng.uniform(0, self.jitter) if self.jitter else 0.0
        if fault is None and isinstance(reply, HttpError | Hang | MalformedJSON | InvalidVerdict):
            fault = reply
        return rule_index, reply, fault, latency

    def _draw_fault(self) -> Fault | None:
        if self.fault_rate <= 0 or not self.faults:
            return None
        with self._lock:
            if self._fault_rng.random() >= self.fault_rate:
                return None
            return self._fault_rng.choice(self.faults)

    async def _respond(
        self, reply: Reply | None, request: RecordedRequest
    ) -> web.Response | MalformedJSON | dict[str, Any]:
        """An error response, a malformed body, or the completion body to send."""
        if reply is None:
            return _error(400, _no_rule_message(request))
        if isinstance(reply, InvalidVerdict):
            reply = Structured(reply.spoil(reply.base))
        if isinstance(reply, HttpError):
            return _error(reply.status, reply.message, reply.retry_after)
        if isinstance(reply, Hang):
            await asyncio.sleep(reply.seconds)
            then = reply.then or HttpError(504, message="fake server: hung")
            return await self._respond(then, request)
        if isinstance(reply, MalformedJSON):
            return reply
        return self._builder.build(reply, request)

    async def _send(
        self,
        request: web.Request,
        outcome: web.Response | MalformedJSON | dict[str, Any],
        body: dict[str, Any],
    ) -> web.StreamResponse:
        if isinstance(outcome, web.Response):
            return outcome
        if not body.get("stream"):
            data = outcome.body if isinstance(outcome, MalformedJSON) else orjson.dumps(outcome)
            return web.Response(body=data, content_type="application/json")
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if isinstance(outcome, MalformedJSON):
            await response.write(b"data: " + outcome.body + b"\n\n")
        else:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            for frame in sse_events(outcome, include_usage):
                await response.write(frame)
        await response.write_eof()
        return response

    def _record(self, request: RecordedRequest) -> int:
        with self._lock:
            self._requests.append(request)
            return len(self._requests) - 1

    def _finish(
        self, index: int, rule: int | None, fault: Fault | None, response: web.StreamResponse
    ) -> web.StreamResponse:
        with self._lock:
            if index < len(self._requests):
                self._requests[index] = dataclasses.replace(
                    self._requests[index], status=response.status, rule=rule,
                    fault=None if fault is None else repr(fault),
                )  # fmt: skip
        return response


def _error(status: int, message: str, retry_after: float | None = None) -> web.Response:
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    kind = (
        "rate_limit_error"
        if status == 429
        else "server_error"
        if status >= 500
        else "invalid_request_error"
    )
    body = {"error": {"message": message, "type": kind, "param": None, "code": str(status)}}
    return web.Response(
        status=status, body=orjson.dumps(body), headers=headers, content_type="application/json"
    )


def _no_rule_message(request: RecordedRequest) -> str:
    return (
        f"fake server: no rule matches this request (model={request.model!r}, "
        f"mode={request.mode}, schema={request.schema_name!r}); add one with server.add_rule(...)"
    )
