"""The HTTP transport of the ``openai`` judge: one aiohttp session posting chat-completions bodies.

The judge builds each request body itself (:mod:`agent_eval.judges._structured`, pre-serialized)
and needs nothing from an SDK but "POST these bytes, give me the reply". openai's client puts
two HTTP stacks on that path (its httpx2 interface over aiohttp), and at a few hundred calls in
flight their per-request work was most of the client's CPU. :class:`ChatTransport` posts with
aiohttp's public client API directly (``ClientSession.post``), one session per event loop.

Retries follow the openai Python client's documented rules (``_base_client``'s behaviour as
described in its README, "Retries"): a request is retried on connection errors, timeouts,
HTTP 408, 409, 429 and 5xx, and on a 200 reply whose JSON body does not parse; a
``x-should-retry: true|false`` response header overrides the status. The wait before retry
``n`` (1-based) is the server's ``retry-after-ms`` or ``Retry-After`` (seconds or an HTTP date)
when it asks for more than 0 and at most 60 s, else ``min(0.5 x 2^(n-1), 8)`` seconds times a
jitter factor in (0.75, 1]. The loop is tenacity's (:class:`tenacity.AsyncRetrying`), entered
only after a first attempt failed, so a call that succeeds at once pays nothing for it. One
departure: a transport that has never connected stops retrying connections once
:data:`CONNECT_FAILURES_BEFORE_GIVING_UP` attempts have failed (nothing listens there; each
call's back-off would only delay the answer by ~15 s), and a call then fails at once.

Counting: :class:`SendCounts` tells requests *sent* (a connection was open and the request was
written to it; the server may have answered, timed out or dropped it) from *connect failures*
(no connection could be opened: the request never left this process). A judge's ``attempts``
are the requests sent.

Timeouts: ``timeout`` seconds to open a connection and between two reads of the reply
(aiohttp's ``sock_connect`` and ``sock_read``); no total limit, so a long reply that keeps
arriving is not cut. An aiohttp session belongs to the event loop that opened it: it is made on
the first request and :meth:`ChatTransport.aclose` closes it (a later request opens a new one),
so one judge can serve one ``asyncio.run`` after another when it is closed at the end of each.
"""

from __future__ import annotations

import asyncio
import email.utils
import logging
import random
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any, Literal

import orjson
from tenacity import AsyncRetrying, RetryCallState, retry_if_exception_type, stop_after_attempt
from yarl import URL

if TYPE_CHECKING:  # imported when the first request is sent: a cached re-run never loads it
    import aiohttp

__all__ = [
    "CONNECT_FAILURES_BEFORE_GIVING_UP",
    "INITIAL_RETRY_DELAY",
    "MAX_RETRY_AFTER",
    "MAX_RETRY_DELAY",
    "ChatTransport",
    "EndpointError",
    "FailureKind",
    "Retryable",
    "SendCounts",
    "json_object",
    "post_with_retries",
    "retry_after_seconds",
    "retry_delay",
    "status_error",
]

CONNECT_FAILURES_BEFORE_GIVING_UP = 3
"""Failed connection attempts, with no connection ever made, after which a transport stops
retrying connections: an endpoint that has refused every connection so far is not up (a wrong
``--base-url``, a server not started), and retrying each call with back-off only delays the
answer. Once one connection is made, connection failures are retried as usual."""
INITIAL_RETRY_DELAY = 0.5
"""Seconds before the first retry when the server says nothing (openai-python's value)."""
MAX_RETRY_DELAY = 8.0
"""Most seconds of exponential backoff between two retries (openai-python's value)."""
MAX_RETRY_AFTER = 60.0
"""Longest ``Retry-After`` honoured, seconds; a longer one falls back to the backoff."""

_RETRY_STATUSES = frozenset({408, 409, 429})
_log = logging.getLogger(__name__)

FailureKind = Literal["status", "timeout", "connection", "connect", "malformed"]
"""What went wrong: an HTTP error status, a read timeout, a connection lost after the request
was sent, no connection at all (``connect``), or a 200 reply whose JSON does not parse."""


@dataclass(slots=True)
class SendCounts:
    """Requests of one judge call.

    Attributes:
        sent: Requests written to an open connection (what a server can have seen).
        connect_failures: Attempts that failed before any connection was open (never sent).
        cancelled: Of ``sent``, requests cancelled (an interrupted run) before their reply
            was read: counted as sent, since the server can have received them.

    """

    sent: int = 0
    connect_failures: int = 0
    cancelled: int = 0


class EndpointError(Exception):
    """A request to the endpoint failed (after the retries, when raised by :meth:`post`).

    Attributes:
        kind: See :data:`FailureKind`.
        status: The HTTP status, for ``status`` and ``malformed``; else ``None``.
        message: The server's error message (its ``error.message``), or what happened.
        code: The server's ``error.code`` when it sent one.
        body: The error reply's body (parsed JSON when it is JSON, else text), or ``None``.
        retryable: Whether the openai client's rules retry this failure.
        retry_after: Seconds the server asked to wait (``retry-after-ms``/``Retry-After``),
            when it asked for 0-60 s.

    """

    def __init__(
        self,
        kind: FailureKind,
        message: str,
        *,
        status: int | None = None,
        code: str | None = None,
        body: Any = None,
        retryable: bool = True,
        retry_after: float | None = None,
    ) -> None:
        self.kind, self.status, self.message = kind, status, message
        self.code, self.body = code, body
        self.retryable, self.retry_after = retryable, retry_after
        super().__init__(message)

    def __str__(self) -> str:
        if self.kind == "status":
            return f"HTTP {self.status}: {self.message}"
        return self.message


def retry_delay(error: BaseException | None, retry: int) -> float:
    """Seconds to wait before retry number ``retry`` (1-based) after ``error``.

    The server's ``Retry-After`` when it gave one of at most :data:`MAX_RETRY_AFTER` seconds,
    else ``min(INITIAL_RETRY_DELAY x 2^(retry-1), MAX_RETRY_DELAY)`` times a jitter factor drawn
    from (0.75, 1] (openai-python's backoff).
    """
    if isinstance(error, EndpointError) and error.retry_after is not None:
        return float(error.retry_after)
    backoff = min(INITIAL_RETRY_DELAY * 2.0 ** (retry - 1), MAX_RETRY_DELAY)
    jitter: float = 1 - 0.25 * random.random()  # jitter, not cryptography
    return backoff * jitter


def _tenacity_wait(offset: int) -> Any:
    def wait(state: RetryCallState) -> float:
        outcome = state.outcome
        error = outcome.exception() if outcome is not None else None
        if isinstance(error, Retryable):
            error = error.error
        return _waiting(error, state.attempt_number + offset)

    return wait


def _waiting(error: BaseException | None, retry: int) -> float:
    delay = retry_delay(error, retry)
    _log.debug("retry %d in %.2f s after: %s", retry, delay, error)
    return delay


class Retryable(Exception):
    """One attempt failed in a way the retry rules retry; raised inside :func:`post_with_retries`.

    Args:
        error: What went wrong (what is raised when no retry is left).

    """

    def __init__(self, error: EndpointError) -> None:
        self.error = error


async def post_with_retries(
    attempt: Callable[[], Awaitable[dict[str, Any]]], retries: int
) -> dict[str, Any]:
    """``attempt()``'s reply, retried up to ``retries`` times while it raises :class:`Retryable`.

    The first attempt runs outside tenacity (a call that succeeds at once pays nothing for the
    loop); the waits are :func:`retry_delay`'s. Every transport of the ``openai`` judge (this
    module's :class:`ChatTransport`, a user's own openai client) retries through this function.

    Raises:
        EndpointError: the last attempt's failure, or a failure that is not retried.

    """
    try:
        return await attempt()
    except Retryable as failed:
        if retries < 1:
            raise failed.error from None
        first = failed.error
    await asyncio.sleep(_waiting(first, 1))
    retrying = AsyncRetrying(
        stop=stop_after_attempt(retries),
        wait=_tenacity_wait(offset=1),
        retry=retry_if_exception_type(Retryable),
        reraise=True,
    )
    try:
        async for try_ in retrying:
            with try_:
                data = await attempt()
    except Retryable as failed:
        raise failed.error from None
    return data


class ChatTransport:
    """POSTs JSON bodies to one chat-completions URL, with the openai client's retry rules.

    Args:
        url: The full endpoint URL (``.../chat/completions``, query included).
        headers: Headers of every request (authorization, custom ones); never logged.
        timeout: Seconds to connect and between reads of the reply (see the module doc).
        retries: Retries of a failed request (so ``1 + retries`` attempts at most).

    """

    def __init__(
        self, url: str, headers: Mapping[str, str], *, timeout: float, retries: int
    ) -> None:
        self.url = URL(url)
        self.headers = {"Content-Type": "application/json", "Accept": "application/json"}
        self.headers.update(headers)
        self.timeout = timeout
        self.retries = retries
        self._session: aiohttp.ClientSession | None = None
        self._connected = False
        self._connect_failures = 0
        self._connect_error = ""

    async def post(self, body: bytes, counts: SendCounts) -> dict[str, Any]:
        """POST ``body``; the reply's JSON object, counting each attempt in ``counts``.

        Raises:
            EndpointError: the request failed and retrying did not help (or is not allowed:
                e.g. HTTP 400, 401, 404), or the 200 reply is not a JSON object.

        """
        return await post_with_retries(lambda: self._attempt(body, counts), self.retries)

    def _connect_failed(self, counts: SendCounts, message: str) -> EndpointError:
        """Count a failed connection attempt (this call's and the transport's)."""
        counts.connect_failures += 1
        if not self._connected:
            self._connect_failures += 1
            self._connect_error = message
        return EndpointError("connect", message)

    async def _attempt(self, body: bytes, counts: SendCounts) -> dict[str, Any]:
        import aiohttp  # loaded by _open; here a dictionary lookup

        if not self._connected and self._connect_failures >= CONNECT_FAILURES_BEFORE_GIVING_UP:
            raise EndpointError(  # not retried: see CONNECT_FAILURES_BEFORE_GIVING_UP
                "connect",
                f"cannot connect ({self._connect_failures} connection attempts to this endpoint "
                f"failed and none ever connected; last: {self._connect_error})",
            )
        session = self._session or self._open()
        try:
            async with session.post(self.url, data=body) as response:
                self._connected = True
                status = response.status
                content = await response.read()
                headers = response.headers
        except aiohttp.ClientConnectorError as exc:  # no connection: nothing was sent
            raise Retryable(self._connect_failed(counts, f"cannot connect: {exc}")) from None
        except aiohttp.ConnectionTimeoutError:
            message = f"connecting timed out after {self.timeout:g} s"
            raise Retryable(self._connect_failed(counts, message)) from None
        except (TimeoutError, aiohttp.ServerTimeoutError):
            counts.sent += 1
            raise Retryable(
                EndpointError("timeout", f"no reply within the {self.timeout:g} s timeout")
            ) from None
        except aiohttp.ClientError as exc:
            counts.sent += 1
            message = f"connection error: {type(exc).__name__}: {exc}"
            raise Retryable(EndpointError("connection", message)) from None
        except asyncio.CancelledError:  # in flight when the run was interrupted
            counts.sent += 1
            counts.cancelled += 1
            raise
        counts.sent += 1
        if _log.isEnabledFor(logging.DEBUG):  # the URL carries no credentials (see the judge)
            _log.debug("POST %s -> HTTP %d (%d bytes)", self.url, status, len(content))
        if status == 200:
            return json_object(content)
        raise status_error(status, content, headers)

    def _open(self) -> aiohttp.ClientSession:
        import aiohttp

        timeout = aiohttp.ClientTimeout(
            total=None, sock_connect=self.timeout, sock_read=self.timeout
        )
        # No connection limit: the engine bounds the requests in flight (its concurrency).
        connector = aiohttp.TCPConnector(limit=0)
        self._session = aiohttp.ClientSession(
            headers=self.headers, timeout=timeout, connector=connector
        )
        return self._session

    async def aclose(self) -> None:
        """Close the session and its connections (idempotent); a later request opens anew."""
        session, self._session = self._session, None
        if session is not None:
            await session.close()


def json_object(content: bytes) -> dict[str, Any]:
    """A 200 reply's body as a JSON object.

    Raises:
        Retryable: the body does not parse as JSON (the openai client retries that).
        EndpointError: it parses but is not an object (not retried).

    """
    try:
        data = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        message = f"the judge endpoint sent a 200 reply whose JSON body does not parse ({exc})"
        raise Retryable(EndpointError("malformed", message, status=200)) from None
    if not isinstance(data, dict):
        raise EndpointError(
            "malformed", "the reply body is not a JSON object", status=200, retryable=False
        )
    return data


def status_error(
    status: int, content: bytes, headers: Mapping[str, str]
) -> Retryable | EndpointError:
    """The failure an HTTP error reply means: :class:`Retryable` when the rules retry it.

    ``x-should-retry: true|false`` decides when present, else the status (408, 409, 429, 5xx
    are retried); the server's ``error.message`` and ``error.code`` are kept, and its
    ``Retry-After`` (:func:`retry_after_seconds`).
    """
    try:
        body: Any = orjson.loads(content)
    except orjson.JSONDecodeError:
        body = content.decode("utf-8", "replace")
    found = body.get("error") if isinstance(body, dict) else None
    detail = found if isinstance(found, dict) else {}
    message = detail.get("message") if isinstance(detail.get("message"), str) else None
    code = detail.get("code")
    should = headers.get("x-should-retry")
    if should in ("true", "false"):
        retryable = should == "true"
    else:
        retryable = status in _RETRY_STATUSES or status >= 500
    error = EndpointError(
        "status",
        message or (str(body)[:500] if body else "no error message"),
        status=status,
        code=None if code is None else str(code),
        body=body,
        retryable=retryable,
        retry_after=retry_after_seconds(headers),
    )
    return Retryable(error) if retryable else error


def retry_after_seconds(headers: Mapping[str, str]) -> float | None:
    """Seconds asked for by ``retry-after-ms`` or ``Retry-After``, when within 0-60 s."""
    seconds: float | None = None
    milliseconds = headers.get("retry-after-ms")
    if milliseconds is not None:
        try:
            seconds = float(milliseconds) / 1000
        except ValueError:
            seconds = None
    given = headers.get("retry-after")
    if seconds is None and given is not None:
        try:
            seconds = float(given)
        except ValueError:
            try:
                when = email.utils.parsedate_to_datetime(given)
            except (TypeError, ValueError):
                when = None
            seconds = None if when is None else when.timestamp() - time.time()
    if seconds is None or not 0 < seconds <= MAX_RETRY_AFTER:
        return None
    return seconds
