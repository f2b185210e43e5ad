"""The shared re-ask loop of the langchain and llama-cpp judges (agent_eval.judges._reask)."""

from __future__ import annotations

import pytest

from agent_eval.errors import JudgeOutputError, JudgeTransportError
from agent_eval.judges._reask import AttemptUsage, InvalidReply, ask_with_reasks, reask_messages


def scripted(replies: list[str], messages: list[dict[str, str]]):  # type: ignore[no-untyped-def]
    """An attempt that uses 10 + 2 tokens a try and accepts only the reply "ok"."""

    async def attempt(usage: AttemptUsage) -> tuple[str, str]:
        raw = replies[usage.attempts]
        usage.attempts += 1
        usage.input_tokens += 10
        usage.output_tokens += 2
        if raw != "ok":
            reask_messages(messages, raw, ValueError(f"bad {raw}"))
            raise InvalidReply(ValueError(f"bad {raw}"), raw)
        return raw.upper(), raw

    return attempt


async def test_reasks_until_valid_and_sums_usage() -> None:
    messages: list[dict[str, str]] = [{"role": "user", "content": "q"}]
    reply = await ask_with_reasks(scripted(["x", "y", "ok"], messages), model="m", max_retries=2)
    assert (reply.output, reply.raw_reply, reply.model) == ("OK", "ok", "m")
    assert (reply.attempts, reply.input_tokens, reply.output_tokens) == (3, 30, 6)
    assert [m["role"] for m in messages] == ["user", "assistant", "user", "assistant", "user"]
    assert messages[1]["content"] == "x"
    assert messages[2]["content"] == "Your reply was invalid: bad x\nAnswer again, fixing it."


async def test_gives_up_with_the_last_raw_reply_and_usage() -> None:
    with pytest.raises(JudgeOutputError) as caught:
        await ask_with_reasks(
            scripted(["x", "y", "ok"], []), model="m", max_retries=1, unit="generation"
        )
    error = caught.value
    assert (error.attempts, error.raw_reply) == (2, "y")
    assert (error.input_tokens, error.output_tokens) == (20, 4)
    assert "did not validate after 2 generation(s): bad y" in str(error)


async def test_other_errors_are_not_reasked() -> None:
    calls = []

    async def attempt(usage: AttemptUsage) -> tuple[str, str]:
        calls.append(usage.attempts)
        raise JudgeTransportError("down", attempts=1)

    with pytest.raises(JudgeTransportError):
        await ask_with_reasks(attempt, model="m", max_retries=3)
    assert calls == [0]
