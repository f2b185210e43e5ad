"""The HTTP handlers of the fake model server: choose a reply, wait, answer, record.

For each chat request: record it (no headers), maybe draw a random fault (``fault_rate``, seeded),
else take the first matching rule (or the default reply), wait the latency (plus jitter), then
answer with a ``chat.completion`` body (gzip-encoded when the request's ``Accept-Encoding``
allows it, as the OpenAI API does), a server-sent-event stream for ``"stream": true``, an
OpenAI-style error, a malformed body, or nothing for a while (a hang).
"""

from __future__ import annotations

import asyncio
import itertools
import random
import threading
import time
from collections.abc import Sequence
from typing import Any, Protocol

import orjson
from aiohttp import web

from agent_eval.testing._completions import CompletionBuilder, model_list
from agent_eval.testing._recording import CLIENT_CLOSED, RecordedRequest, RequestLog, decode_body
from agent_eval.testing._replies import (
    Fault,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Reply,
    ReplySpec,
    Structured,
)
from agent_eval.testing._responses_api import response_body, response_events
from agent_eval.testing._rules import RuleBook
from agent_eval.testing._streaming import sse_events

__all__ = ["ChatHandlers", "Settings"]


class Settings(Protocol):
    """The server settings the handlers read on every request (they may change between)."""

    @property
    def latency(self) -> float: ...
    @property
    def jitter(self) -> float: ...
    @property
    def fault_rate(self) -> float: ...
    @property
    def faults(self) -> Sequence[Fault]: ...
    @property
    def default(self) -> ReplySpec | None: ...
    @property
    def models(self) -> Sequence[str]: ...


class ChatHandlers:
    """aiohttp handlers bound to one server's settings, rules and request log.

    Args:
        settings: Latency, jitter, faults and default reply, read live.
        rules: The scripted rules.
        log: Where requests are recorded.
        seed: Seeds the fault draws and (``seed + 1``) the jitter.

    """

    def __init__(self, settings: Settings, rules: RuleBook, log: RequestLog, seed: int) -> None:
        self._settings, self._rules, self._log = settings, rules, log
        self._builder = CompletionBuilder()
        self._responses = itertools.count(1)
        self._fault_rng, self._jitter_rng = random.Random(seed), random.Random(seed + 1)
        self._rng_lock = threading.Lock()

    async def models(self, request: web.Request) -> web.Response:
        """``GET /v1/models``: the configured model ids."""
        self._log.record(RecordedRequest(request.path, request.method, None, time.monotonic(), 200))
        return web.json_response(model_list(tuple(self._settings.models)))

    async def chat(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/chat/completions``: record, choose a reply, wait, answer."""
        return await self._answer(request, "messages")

    async def responses(self, request: web.Request) -> web.StreamResponse:
        """``POST /v1/responses`` (OpenAI Responses API): the same rules, a ``response`` body."""
        return await self._answer(request, "input")

    async def _answer(self, request: web.Request, field: str) -> web.StreamResponse:
        arrived = time.monotonic()
        body = decode_body(await request.read())
        recorded = RecordedRequest(request.path, request.method, body, arrived)
        index = self._log.record(recorded)
        if not isinstance(body, dict) or not isinstance(body.get(field), list | str):
            error = _error(400, f"body must be a JSON object with {field}")
            return self._log.finish(index, None, None, error)
        rule_index, reply, fault, latency = self._choose(recorded)
        try:
            await asyncio.sleep(latency)
            outcome = await self._respond(reply, recorded)
            if field == "input" and isinstance(outcome, dict):
                outcome = response_body(outcome, body, self._responses)
            response = await self._send(request, outcome, body)
        except asyncio.CancelledError:  # the client gave up (e.g. timed out during a hang)
            self._log.finish(index, rule_index, fault, web.Response(status=CLIENT_CLOSED))
            raise
        return self._log.finish(index, rule_index, fault, response)

    def _choose(
        self, request: RecordedRequest, allow_fault: bool = True
    ) -> tuple[int | None, Reply | None, Fault | None, float]:
        fault = self._draw_fault() if allow_fault else None
        found = self._rules.find(request) if fault is not None else self._rules.take(request)
        rule_index, rule = found if found is not None else (None, None)
        reply: Reply | None = None
        if rule is not None:
            reply = rule.build(request)
        elif self._settings.default is not None:
            reply = (
                self._settings.default(request)
                if callable(self._settings.default)
                else self._settings.default
            )
        if isinstance(fault, InvalidVerdict):
            if not isinstance(reply, Structured):  # only structured replies can be spoiled
                return self._choose(request, allow_fault=False)
            reply = Structured(fault.spoil(reply.as_dict()))
        elif fault is not None:
            reply = fault
        latency = self._settings.latency if rule is None or rule.latency is None else rule.latency
        with self._rng_lock:
            latency += (
                self._jitter_rng.uniform(0, self._settings.jitter) if self._settings.jitter else 0.0
            )
        if fault is None and isinstance(reply, HttpError | Hang | MalformedJSON | InvalidVerdict):
            fault = reply
        return rule_index, reply, fault, latency

    def _draw_fault(self) -> Fault | None:
        if self._settings.fault_rate <= 0 or not self._settings.faults:
            return None
        with self._rng_lock:
            if self._fault_rng.random() >= self._settings.fault_rate:
                return None
            return self._fault_rng.choice(self._settings.faults)

    async def _respond(
        self, reply: Reply | None, request: RecordedRequest
    ) -> web.Response | MalformedJSON | dict[str, Any]:
        """An error response, a malformed body, or the completion body to send."""
        if reply is None:
            return _error(400, _no_rule_message(request))
        if isinstance(reply, InvalidVerdict):
            reply = Structured(reply.spoil(reply.base))
        if isinstance(reply, HttpError):
            return _error(reply.status, reply.message, reply.retry_after, reply.code)
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
            reply = web.Response(body=data, content_type="application/json")
            if "gzip" in request.headers.get("Accept-Encoding", ""):
                reply.enable_compression(web.ContentCoding.gzip)  # as api.openai.com does
            return reply
        response = web.StreamResponse(headers={"Content-Type": "text/event-stream"})
        await response.prepare(request)
        if isinstance(outcome, MalformedJSON):
            await response.write(b"data: " + outcome.body + b"\n\n")
        elif outcome.get("object") == "response":
            for frame in response_events(outcome):
                await response.write(frame)
        else:
            options = body.get("stream_options")
            include_usage = isinstance(options, dict) and bool(options.get("include_usage"))
            for frame in sse_events(outcome, include_usage):
                await response.write(frame)
        await response.write_eof()
        return response


def _error(
    status: int, message: str, retry_after: float | None = None, code: str | None = None
) -> web.Response:
    headers = {} if retry_after is None else {"Retry-After": f"{retry_after:g}"}
    kind = (
        "rate_limit_error"
        if status == 429
        else "server_error"
        if status >= 500
        else "invalid_request_error"
    )
    body = {"error": {"message": message, "type": kind, "param": None, "code": code or str(status)}}
    return web.Response(
        status=status, body=orjson.dumps(body), headers=headers, content_type="application/json"
    )


def _no_rule_message(request: RecordedRequest) -> str:
    return (
        f"fake server: no rule matches this request (model={request.model!r}, "
        f"mode={request.mode}, schema={request.schema_name!r}); add one with server.add_rule(...)"
    )
