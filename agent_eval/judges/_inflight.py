"""What a judge call had sent when it was cancelled (a run interrupted by Ctrl-C or SIGTERM).

A cancelled call returns no :class:`~agent_eval.judges._base.JudgeReply` and raises no
:class:`~agent_eval.errors.JudgeError`, so neither carries its usage, yet the endpoint
received the requests it sent and may bill them (trial6 #2: 56 requests received, 54
counted). The caller of a judge opens :func:`watch` around the call; the adapters' shared
re-ask loop (:func:`agent_eval.judges._reask.ask_with_reasks`) reports the call's usage so far
with :func:`note_cancelled` as the cancellation passes through it. The usage is then

- ``requests``: requests sent, retries and re-asks included; a request cancelled while in
  flight counts as sent (the endpoint can have received it), its reply never read;
- ``input_tokens`` / ``output_tokens``: what the replies read before the cancellation reported;
- ``unanswered``: of the requests, those whose reply was never read: their tokens are unknown
  (a result then marks its usage unknown and estimates it).

A judge that does not use the shared loop reports nothing: its cancelled call counts no
request. Outside :func:`watch`, :func:`note_cancelled` does nothing.
"""

from __future__ import annotations

from contextvars import ContextVar, Token
from dataclasses import dataclass

__all__ = ["CancelledUsage", "note_cancelled", "watch"]


@dataclass(frozen=True, slots=True)
class CancelledUsage:
    """The usage of one judge call cancelled before it returned (see the module docstring)."""

    requests: int
    input_tokens: int
    output_tokens: int
    unanswered: int


_watching: ContextVar[list[CancelledUsage] | None] = ContextVar(
    "agent_eval_cancelled_judge_calls", default=None
)


class watch:  # lower case: used as a function, ``with watch() as cancelled``
    """Collect, into the list ``with`` gives, the usage of judge calls cancelled in the block.

    The block's task (and the tasks it starts, which copy its context) reports into the list.
    A class, not a generator-based context manager: it is entered once per judge call.
    """

    __slots__ = ("_token", "cancelled")
    _token: Token[list[CancelledUsage] | None]

    def __init__(self) -> None:
        self.cancelled: list[CancelledUsage] = []

    def __enter__(self) -> list[CancelledUsage]:
        self._token = _watching.set(self.cancelled)
        return self.cancelled

    def __exit__(self, *exc_info: object) -> None:
        _watching.reset(self._token)


def note_cancelled(usage: CancelledUsage) -> None:
    """Report the usage of a call being cancelled to the enclosing :func:`watch`, if any."""
    watching = _watching.get()
    if watching is not None and usage.requests:
        watching.append(usage)
