"""Stop sending when the judge cannot be reached at all: the first calls could not connect.

A judge URL with nothing listening (a typo, a server not started, a closed tunnel) makes every
call fail only after its transport retries and back-off; over a run of many units that costs far
longer than a working run, for no result. :class:`UnreachableGuard` wraps the judge adapter:
once :data:`REFUSED_BEFORE_STOP` calls have failed without a single request reaching the endpoint
(``JudgeTransportError`` with 0 attempts: every connection was refused or timed out) and no call
has been answered, every later call fails at once with the same error type
(``judge_unavailable``), naming the cause, without connecting. Each unit still ends as one
``error`` row, so ``scored + skipped + errored == units`` holds, and ``--resume`` scores them
once the judge is up. One answered call (any reply, even an invalid one) disarms the guard for
the run: an endpoint that answered once is reachable, and later failures are ordinary ones.
While stopped, one call every :data:`PROBE_SECONDS` is sent as a probe, so a long-running
``serve`` whose judge comes up later starts judging again (a probe that is answered disarms the
guard).
"""

from __future__ import annotations

import asyncio
import time
from typing import Any

from agent_eval.errors import JudgeTransportError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest

__all__ = ["PROBE_SECONDS", "REFUSED_BEFORE_STOP", "UnreachableGuard"]

REFUSED_BEFORE_STOP = 3
"""Calls that found no connection, with none answered, before the run stops sending."""
PROBE_SECONDS = 30.0
"""While stopped, seconds between probes (one call sent to see whether the judge is up)."""


class UnreachableGuard(Judge):
    """Wraps ``inner``; fails fast once the judge has proved unreachable (module docstring).

    Args:
        inner: The judge adapter (innermost: rate limits, budget and cache wrap this).
        refused_before_stop: Unreached calls, with none answered, that stop the sending.
        probe_seconds: While stopped, seconds between probe calls.

    Attributes:
        refused: Calls that failed without reaching the endpoint, before any was answered.
        not_sent: Calls failed at once after the stop.
        cause: The first unreached call's error message.

    """

    def __init__(
        self,
        inner: Judge,
        refused_before_stop: int = REFUSED_BEFORE_STOP,
        probe_seconds: float = PROBE_SECONDS,
    ) -> None:
        self.inner, self.model = inner, inner.model
        self.refused_before_stop, self.probe_seconds = refused_before_stop, probe_seconds
        self.refused = self.not_sent = 0
        self.answered = False
        self.cause: str | None = None
        self._next_probe = 0.0

    @property
    def stopped(self) -> bool:
        """Whether calls are now failed without being sent."""
        return not self.answered and self.refused >= self.refused_before_stop

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        """Ask ``inner``, unless the judge has proved unreachable.

        Raises:
            JudgeTransportError: after the stop, at once (``attempts`` 0), naming the cause;
                before it, whatever ``inner`` raises.

        """
        if self.stopped:
            now = time.monotonic()
            if now < self._next_probe:
                self.not_sent += 1
                raise JudgeTransportError(self._stop_message(), attempts=0)
            self._next_probe = now + self.probe_seconds  # this call is the probe
        try:
            reply = await self.inner.ask(request)
        except JudgeTransportError as exc:
            if exc.attempts == 0 and not self.answered:
                self.refused += 1
                self.cause = self.cause or str(exc)
                if self.refused == self.refused_before_stop:
                    self._next_probe = time.monotonic() + self.probe_seconds
            else:
                self.answered = True
            raise
        except asyncio.CancelledError:
            raise
        except Exception:  # the endpoint answered (an invalid reply is still an answer)
            self.answered = True
            raise
        self.answered = True
        return reply

    def line(self) -> str | None:
        """One line for the run's summary when the guard stopped the sending, else ``None``.

        ``judge unreachable: not sent: the first 3 judge calls reached no endpoint and none was
        answered (judge endpoint failed after 0 request(s) ...: cannot connect ...); check
        --base-url and that the server is up, then --resume (24 calls not sent)``.
        """
        if not self.stopped:
            return None
        return f"judge unreachable: {self._stop_message()} ({self.not_sent} calls not sent)"

    def _stop_message(self) -> str:
        """The same text on every row and in the summary line: the cause, not running counts."""
        return (
            f"not sent: the first {self.refused_before_stop} judge calls reached no endpoint "
            f"and none was answered ({self.cause}); check --base-url and that the server is "
            "up, then --resume"
        )

    async def aclose(self) -> None:
        """Close the adapter's connections."""
        await self.inner.aclose()
