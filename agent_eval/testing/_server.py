"""A fake OpenAI-compatible model server: real HTTP on 127.0.0.1, scripted replies and faults.

Tests (and users' own tests) point the real ``openai`` client and the judges at it, so the
whole client stack runs, retries and parsing included::

    with FakeModelServer(latency=0.01) as server:
        server.add_rule(Structured({"reason": "done", "verdict": "1"}), schema="OutcomeComparison")
        client = openai.AsyncOpenAI(base_url=server.base_url, api_key="sk-test")
        ...
        assert server.requests[0].mode == "tools"

Endpoints: ``POST /v1/chat/completions`` (plain, or server-sent events for ``"stream": true``;
also at Azure OpenAI's ``/openai/deployments/{deployment}/chat/completions``, for
``AsyncAzureOpenAI(azure_endpoint=server.root, ...)``),
``POST /v1/responses`` (the OpenAI Responses API, plain or streamed; the same rules answer it,
see :mod:`~agent_eval.testing._responses_api`) and ``GET /v1/models``. The aiohttp server runs
its own event loop in a background thread, so sync and async clients both work (uvloop when
it is installed, like agent-eval's commands: :mod:`agent_eval.run._event_loop`).
A request no rule answers gets a 400 error saying so (or the ``default`` reply when set).

Run it as a process with ``python -m agent_eval.testing`` (see that module).
"""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Sequence
from types import TracebackType
from typing import Any

from aiohttp import web

from agent_eval._tokens import encoding
from agent_eval.run._event_loop import loop_factory
from agent_eval.testing._handlers import ChatHandlers
from agent_eval.testing._recording import RecordedRequest, RequestLog
from agent_eval.testing._replies import DEFAULT_FAULTS, Fault, ReplySpec
from agent_eval.testing._rules import Rule, RuleBook

__all__ = ["FakeModelServer"]


class FakeModelServer:
    """An OpenAI-compatible HTTP server on 127.0.0.1 answering from scripted rules.

    Args:
        latency: Seconds every reply waits before it is sent (a rule can override it).
        seed: Seeds the fault draws and the jitter, so a sequential run is reproducible.
        jitter: Up to this many extra seconds of latency, drawn uniformly per request.
        fault_rate: Probability (0-1) that a chat request gets a random fault from ``faults``
            instead of its rule's reply. A random fault does not use up the rule.
        faults: The faults to draw from; :data:`~agent_eval.testing._replies.DEFAULT_FAULTS`
            when ``None``. :class:`InvalidVerdict` faults only spoil :class:`Structured` replies.
        models: The model ids ``GET /v1/models`` lists.
        default: The reply when no rule matches; a 400 error naming the request when ``None``.
        port: The port to bind; 0 picks a free one.
        reuse_port: Bind with ``SO_REUSEPORT`` (Linux, BSD): several server processes may then
            listen on one port and the kernel spreads the connections over them (benchmarks
            use it so that one Python server process is not the bottleneck). Each process keeps
            its own rules and request log.

    Raises:
        ValueError: ``reuse_port`` on a platform without ``SO_REUSEPORT``.

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
        reuse_port: bool = False,
    ) -> None:
        if reuse_port and not hasattr(socket, "SO_REUSEPORT"):
            raise ValueError("reuse_port needs SO_REUSEPORT, which this platform lacks")
        self.reuse_port = reuse_port
        self.latency, self.jitter, self.fault_rate = latency, jitter, fault_rate
        self.faults: tuple[Fault, ...] = tuple(DEFAULT_FAULTS if faults is None else faults)
        self.models: Sequence[str] = tuple(models)
        self.default = default
        self._port = port
        self._rules = RuleBook()
        self._log = RequestLog()
        self._handlers = ChatHandlers(self, self._rules, self._log, seed)
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
            reply: A reply (:mod:`agent_eval.testing._replies`) or ``(RecordedRequest) -> Reply``.
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
        return self._log.snapshot()

    def clear(self) -> None:
        """Forget the recorded requests and remove every rule."""
        self._log.clear()
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

    @property
    def root(self) -> str:
        """``http://127.0.0.1:PORT``, an ``azure_endpoint`` for Azure OpenAI clients."""
        return f"http://127.0.0.1:{self._port}"

    def start(self) -> FakeModelServer:
        """Bind the port and serve in a background thread; returns ``self``.

        Raises:
            RuntimeError: already started, or the server failed to start.
            OSError: the port cannot be bound (``EADDRINUSE``: taken by another process).

        """
        if self._thread is not None:
            raise RuntimeError("FakeModelServer is already started")
        encoding()  # load the token encoder (once per process) before it could stall a reply
        sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        if self.reuse_port:
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEPORT, 1)
        try:
            sock.bind(("127.0.0.1", self._port))
        except OSError:
            sock.close()
            raise
        self._port = sock.getsockname()[1]
        factory = loop_factory()  # the loop agent-eval's commands run on (uvloop when installed)
        self._loop = factory() if factory is not None else asyncio.new_event_loop()
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
        app.router.add_post("/v1/chat/completions", self._handlers.chat)
        # Azure OpenAI's path (openai's AsyncAzureOpenAI with azure_endpoint=server.root)
        app.router.add_post(
            "/openai/deployments/{deployment}/chat/completions", self._handlers.chat
        )
        app.router.add_post("/v1/responses", self._handlers.responses)
        app.router.add_get("/v1/models", self._handlers.models)
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
