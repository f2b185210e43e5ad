"""Re-asking a judge whose reply did not validate: the loop every adapter shares.

The ``openai``, ``langchain`` and ``llama-cpp`` judges validate each reply themselves. When it
fails they append the reply and the validation error to the conversation
(:func:`reask_messages`) and raise :class:`InvalidReply`; :func:`ask_with_reasks` retries
(tenacity, entered only after the first try failed) up to ``max_retries`` times and returns a
:class:`~agent_eval.judges._base.JudgeReply` with the usage of every attempt, or raises
:class:`~agent_eval.errors.JudgeOutputError` with the last raw reply.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

from tenacity import AsyncRetrying, RetryError, retry_if_exception_type, stop_after_attempt

from agent_eval.errors import JudgeOutputError
from agent_eval.judges._base import JudgeReply
from agent_eval.judges._inflight import CancelledUsage, note_cancelled

__all__ = ["AttemptUsage", "InvalidReply", "ask_with_reasks", "reask_messages"]

T = TypeVar("T")


class InvalidReply(Exception):
    """The reply did not validate; raised by one attempt so that the loop asks again.

    Args:
        error: The validation error (its text is what the model is shown).
        raw_reply: The text the model wrote.

    """

    def __init__(self, error: BaseException, raw_reply: str) -> None:
        self.error, self.raw_reply = error, raw_reply
        super().__init__(str(error))


@dataclass
class AttemptUsage:
    """Tokens and attempts summed over the tries of one judge call (filled by each attempt).

    Attributes:
        input_tokens / output_tokens: Tokens the endpoint reported, summed over the tries.
        attempts: Requests (or local generations) made.
        known: False once a reply came without a usage report: the sums are then a lower
            bound, and results mark the usage as unknown.
        model: The model the endpoint said answered, when it said.
        unanswered: Of ``attempts``, those cancelled before their reply was read (counted as
            made: the endpoint can have received them; their tokens are unknown).

    """

    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0
    known: bool = True
    model: str | None = None
    unanswered: int = 0


def reask_messages(messages: list[dict[str, str]], raw_reply: str, error: object) -> None:
    """Append the invalid reply and a user message quoting ``error`` to ``messages``."""
    messages += [
        {"role": "assistant", "content": raw_reply},
        {"role": "user", "content": f"Your reply was invalid: {error}\nAnswer again, fixing it."},
    ]


async def ask_with_reasks(
    attempt: Callable[[AttemptUsage], Awaitable[tuple[T, str]]],
    *,
    model: str,
    max_retries: int,
    unit: str = "request",
) -> JudgeReply[T]:
    """Call ``attempt`` until it returns, at most ``1 + max_retries`` times.

    Args:
        attempt: One try: counts itself in the :class:`AttemptUsage` it is given and returns
            ``(validated output, raw reply)``, or raises :class:`InvalidReply` to be re-asked.
        model: The model name for the reply.
        max_retries: Re-asks after an invalid reply.
        unit: What one attempt is, for the error message (``request``, ``generation``).

    Raises:
        JudgeOutputError: every attempt was invalid; carries the attempts, the last raw reply
            and the tokens used. Any other exception from ``attempt`` propagates unchanged; a
            cancellation after reporting the usage so far
            (:func:`~agent_eval.judges._inflight.note_cancelled`).

    """
    usage = AttemptUsage()
    start = time.perf_counter()
    try:  # the first try outside tenacity: a reply that validates at once pays nothing for it
        output, raw = await attempt(usage)
    except InvalidReply as first:
        if max_retries < 1:
            raise _invalid(first, usage, unit) from None
        retrying = AsyncRetrying(
            stop=stop_after_attempt(max_retries), retry=retry_if_exception_type(InvalidReply)
        )
        try:
            async for try_ in retrying:
                with try_:
                    output, raw = await attempt(usage)
        except RetryError as exc:
            raise _invalid(exc.last_attempt.exception(), usage, unit) from None
        except asyncio.CancelledError:
            _note_cancelled(usage)
            raise
    except asyncio.CancelledError:
        _note_cancelled(usage)
        raise
    return JudgeReply(
        output=output,
        model=usage.model or model,
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        latency_ms=(time.perf_counter() - start) * 1000,
        attempts=usage.attempts,
        raw_reply=raw,
        usage_known=usage.known,
    )


def _note_cancelled(usage: AttemptUsage) -> None:
    """Report the usage so far of a call being cancelled (:mod:`agent_eval.judges._inflight`)."""
    note_cancelled(
        CancelledUsage(usage.attempts, usage.input_tokens, usage.output_tokens, usage.unanswered)
    )


def _invalid(invalid: BaseException | None, usage: AttemptUsage, unit: str) -> JudgeOutputError:
    return JudgeOutputError(
        f"judge reply did not validate after {usage.attempts} {unit}(s): {invalid}",
        attempts=usage.attempts,
        raw_reply=getattr(invalid, "raw_reply", None),
        input_tokens=usage.input_tokens,
        output_tokens=usage.output_tokens,
        usage_known=usage.known,
    )
