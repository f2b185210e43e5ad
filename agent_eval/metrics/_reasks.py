"""Re-asking a judge whose reply validated but does not fit the request.

A reply can match its schema and still be wrong for the case: verdicts that do not align with
the statements they judge (one missing, two swapped), quoted evidence that is not in the
context. The judge adapters re-ask on schema errors; this loop re-asks on such *case* errors,
judge-agnostic, by appending the reply and the error to the conversation (the same wording the
adapters use, :func:`agent_eval.judges._reask.reask_messages`), at most ``max_reasks`` times.
Every call is counted on the row's tally under its stage.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_eval.errors import JudgeOutputError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest
from agent_eval.judges._reask import reask_messages
from agent_eval.metrics._base import CallTally

__all__ = ["DEFAULT_REASKS", "Problem", "ask_checked"]

DEFAULT_REASKS = 2
"""Re-asks after a reply that does not fit the case (so up to 3 calls)."""


@dataclass(frozen=True)
class Problem:
    """What is wrong with a reply, for the judge to fix.

    Attributes:
        message: The error shown to the judge (and kept on an error row).
        fatal: When re-asks run out: ``True`` makes the row ``invalid_judge_output``; ``False``
            returns the last reply with this problem (the metric then discounts what is wrong,
            e.g. unverified evidence).

    """

    message: str
    fatal: bool = True


async def ask_checked(
    tally: CallTally,
    judge: Judge,
    request: JudgeRequest,
    check: Callable[[Any], Problem | None],
    *,
    stage: str,
    max_reasks: int = DEFAULT_REASKS,
) -> tuple[JudgeReply[Any], Problem | None, int]:
    """Ask, check the reply with ``check``, and re-ask with the problem until it is fixed.

    Args:
        tally: The row's usage (every call is counted, under ``stage``).
        judge: The judge.
        request: The first request.
        check: ``(output) -> Problem | None`` for the validated output.
        stage: The stage name for the per-stage usage.
        max_reasks: Re-asks after a reply with a problem.

    Returns:
        The last reply, its remaining non-fatal problem (``None`` when fixed), and how many
        re-asks were made.

    Raises:
        JudgeOutputError: a fatal problem remained after ``max_reasks`` re-asks (carries the
            last raw reply); any judge error of a call propagates.

    """
    messages = list(request.messages)
    for reask in range(max_reasks + 1):
        reply = await tally.ask(
            judge, dataclasses.replace(request, messages=tuple(messages)), stage
        )
        problem = check(reply.output)
        if problem is None:
            return reply, None, reask
        if reask == max_reasks:
            if problem.fatal:
                raise JudgeOutputError(
                    f"judge reply did not fit the case after {reask + 1} call(s): "
                    f"{problem.message}",
                    attempts=0,
                    raw_reply=reply.raw_reply,
                )
            return reply, problem, reask
        reask_messages(messages, reply.raw_reply, problem.message)
    raise AssertionError("unreachable")  # pragma: no cover
