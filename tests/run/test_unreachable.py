"""A judge that cannot be reached stops the sending early, and the summary says why (issue 31)."""

from __future__ import annotations

import socket
import time
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.errors import JudgeOutputError, JudgeTransportError
from agent_eval.judges._base import JudgeReply, JudgeRequest
from agent_eval.run._store import load_results
from agent_eval.run._unreachable import UnreachableGuard

from .fakes import CountingJudge, request

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otel"


class Refusing(CountingJudge):
    """Fails every call as a refused connection (nothing sent) until ``up`` is set."""

    def __init__(self, error: type[Exception] = JudgeTransportError) -> None:
        super().__init__()
        self.up = False
        self.error = error

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        if self.up:
            return await super().ask(request)
        self.calls.append(request)
        if self.error is JudgeOutputError:
            raise JudgeOutputError("bad reply", attempts=1)
        raise JudgeTransportError("cannot connect: Connection refused", attempts=0)


async def _fail(guard: UnreachableGuard, error: type[Exception] = JudgeTransportError) -> str:
    with pytest.raises(error) as caught:
        await guard.ask(request("x"))
    return str(caught.value)


async def test_the_guard_stops_after_the_first_unreached_calls_and_names_the_cause() -> None:
    inner = Refusing()
    guard = UnreachableGuard(inner, refused_before_stop=3, probe_seconds=3600)
    for _ in range(3):
        await _fail(guard)
    assert guard.stopped and len(inner.calls) == 3
    message = await _fail(guard)
    assert len(inner.calls) == 3  # not sent
    assert message.startswith("not sent: the first 3 judge calls reached no endpoint")
    assert "Connection refused" in message and "--resume" in message
    assert guard.line() == f"judge unreachable: {message} (1 calls not sent)"
    assert guard.not_sent == 1


async def test_one_answer_disarms_the_guard_for_the_run() -> None:
    inner = Refusing()
    guard = UnreachableGuard(inner, refused_before_stop=2, probe_seconds=3600)
    await _fail(guard)
    inner.up = True
    assert (await guard.ask(request("x"))).output.verdict == "1"
    inner.up = False
    for _ in range(4):  # failures after an answer are ordinary ones: always sent
        await _fail(guard)
    assert not guard.stopped and len(inner.calls) == 6 and guard.line() is None


async def test_an_invalid_reply_is_an_answer() -> None:
    guard = UnreachableGuard(Refusing(JudgeOutputError), refused_before_stop=1)
    await _fail(guard, JudgeOutputError)
    assert guard.answered and not guard.stopped


async def test_a_probe_after_the_pause_lets_a_judge_that_came_up_judge_again() -> None:
    inner = Refusing()
    guard = UnreachableGuard(inner, refused_before_stop=1, probe_seconds=0.0)
    await _fail(guard)
    assert guard.stopped
    inner.up = True  # the server started; the next call is a probe and is answered
    assert (await guard.ask(request("x"))).output.verdict == "1"
    assert not guard.stopped


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


@pytest.mark.usefixtures("judge_env_cleared")
def test_score_against_a_closed_port_stops_sending_and_says_why(tmp_path: Path) -> None:
    out = tmp_path / "run"
    base_url = f"http://127.0.0.1:{_closed_port()}/v1"
    started = time.monotonic()
    result = CliRunner().invoke(
        app,
        [
            *("score", str(FIXTURES), "--judge", "fake-model", "--base-url", base_url),
            *("--out", str(out), "--no-cache", "--concurrency", "4"),
        ],
    )
    assert result.exit_code == 4, result.output  # the metric errored on every unit
    # stops within seconds (about 1.5 s unloaded; the default transport retries, 27 units),
    # not after every unit's retries and back-off: the bound is loose for a loaded machine
    assert time.monotonic() - started < 30
    rows = load_results(out)
    assert len(rows) == 27 and {r.error_type for r in rows} == {"judge_unavailable"}
    not_sent = [r for r in rows if (r.error_message or "").startswith("not sent:")]
    # sent: at most the 4 in flight (concurrency) plus the 2 started while the first 2 refused
    # calls had not yet stopped the run (it stops at the 3rd)
    assert len(not_sent) >= 27 - (4 + 3 - 1)
    assert all(r.attempts == 0 for r in rows)
    said = " ".join(result.stderr.split())
    assert "judge unreachable: not sent: the first" in said
    assert "Connection refused" in said or "connect" in said
