"""In-process judges implementing the Judge ABC, for unit tests of the wrappers."""

from __future__ import annotations

import asyncio
from typing import Any, Literal

from pydantic import BaseModel

from agent_eval.errors import JudgeTransportError
from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest


class Verdict(BaseModel):
    reason: str
    verdict: Literal["0", "1"]


class CountingJudge(Judge):
    """Answers verdict "1" with the last message's length as reason; counts its calls."""

    def __init__(self, model: str = "fake-model", delay_s: float = 0.0, fail: int = 0) -> None:
        self.model = model
        self.delay_s = delay_s
        self.fail = fail
        self.calls: list[JudgeRequest] = []
        self.started: list[float] = []

    async def ask(self, request: JudgeRequest) -> JudgeReply[Any]:
        self.calls.append(request)
        self.started.append(asyncio.get_running_loop().time())
        await asyncio.sleep(self.delay_s)
        if self.fail:
            self.fail -= 1
            raise JudgeTransportError("injected failure", attempts=3)
        content = request.messages[-1]["content"]
        output = request.response_model.model_validate(
            {"reason": f"len={len(content)}", "verdict": "1"}
        )
        return JudgeReply(
            output=output,
            model=self.model,
            input_tokens=len(content),
            output_tokens=7,
            latency_ms=self.delay_s * 1000,
            attempts=1,
            raw_reply=output.model_dump_json(),
        )


def request(text: str, **kwargs: Any) -> JudgeRequest:
    return JudgeRequest(
        messages=({"role": "system", "content": "judge"}, {"role": "user", "content": text}),
        response_model=Verdict,
        **kwargs,
    )
