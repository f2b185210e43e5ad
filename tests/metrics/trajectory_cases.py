"""Small AgentTraces with tool calls, and a helper that scores one with a judge-free metric."""

from __future__ import annotations

import asyncio
from typing import Any

from agent_eval._result import MetricResult
from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    SpanErrorInfo,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.formatting._registry import get_formatter
from agent_eval.metrics._spec import build_metric
from agent_eval.run._engine import Engine


def calls(*specs: tuple[str, Any]) -> tuple[ToolCall, ...]:
    """``calls(("a", {"x": 1}), ...)`` -> ToolCalls with ids ``c0``, ``c1``..."""
    return tuple(ToolCall(id=f"c{i}", name=n, arguments=a) for i, (n, a) in enumerate(specs))


def conversation(
    made: tuple[ToolCall, ...],
    reference: tuple[ToolCall, ...] | None = None,
    *,
    results: dict[int, ToolMessage] | None = None,
    errors: tuple[SpanErrorInfo, ...] = (),
    cid: str = "c",
) -> AgentTrace:
    """User asks; the assistant makes ``made`` one message each, each answered by a result."""
    messages: list[Message] = [UserMessage(content="please")]
    for index, call in enumerate(made):
        messages.append(AssistantMessage(tool_calls=(call,)))
        default = ToolMessage(content="ok", tool_call_id=call.id, tool_name=call.name)
        messages.append((results or {}).get(index, default))
    messages.append(AssistantMessage(content="done"))
    return AgentTrace(
        conversation_id=cid,
        messages=tuple(messages),
        reference_tool_calls=reference,
        errors=errors,
    )


def score(spec: str, trace: AgentTrace) -> MetricResult:
    """The one result of ``spec`` (``tool_call_accuracy[order=any]``) on ``trace``."""
    engine = Engine(
        metric=build_metric(spec),
        formatter=get_formatter("ragas-pretty@1"),
        judge=None,
        run_id="r",
    )
    return asyncio.run(engine.score(trace))
