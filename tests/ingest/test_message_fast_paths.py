"""The cache-miss fast paths of message reading give what the general code gives (issue 15)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, astuple, fields
from typing import Any

import pytest

from agent_eval._trace import AssistantMessage, ToolMessage, UserMessage
from agent_eval.ingest._extraction import SpanExtraction, ToolExecution, new_span_extraction
from agent_eval.ingest._safe_text import MAX_NESTING
from agent_eval.ingest.conventions import _messages as messages
from agent_eval.ingest.conventions._messages import (
    message_from_mapping,
    read_message,
    split_tool_responses,
)


@pytest.fixture(autouse=True)
def _fresh_cache() -> None:
    messages._read_message_json.cache_clear()


def _general(data: dict[str, Any], default_role: str | None = None) -> tuple[Any, ...]:
    return tuple(message_from_mapping(one, default_role) for one in split_tool_responses(data))


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        # a text part whose "text" is not a string: text_of dumps the part, sorted keys
        (
            {"role": "user", "parts": [{"type": "text", "text": 5}]},
            (UserMessage(content='{"text":5,"type":"text"}'),),
        ),
        # "text" absent, "content" read; "text" null also falls back to "content"
        (
            {"role": "user", "parts": [{"type": "text", "text": None, "content": "hi"}]},
            (UserMessage(content="hi"),),
        ),
        # a capitalised role still maps through the aliases
        (
            {"role": "User", "parts": [{"type": "text", "content": "hi"}]},
            (UserMessage(content="hi"),),
        ),
        # one tool result in a tool message: not split
        (
            {
                "role": "tool",
                "parts": [{"type": "tool_call_response", "id": "c1", "response": "ok"}],
            },
            (ToolMessage(content="ok", tool_call_id="c1"),),
        ),
        # a result in a user message (pydantic-ai): split into a tool message and the rest
        (
            {
                "role": "user",
                "parts": [
                    {"type": "tool_call_response", "id": "c1", "response": "ok"},
                    {"type": "text", "content": "next"},
                ],
            },
            (ToolMessage(content="ok", tool_call_id="c1"), UserMessage(content="next")),
        ),
        # leading whitespace before a wrapped function result: still unwrapped
        (
            {
                "role": "tool",
                "parts": [
                    {
                        "type": "tool_call_response",
                        "id": "c1",
                        "response": ' {"type": "function_result", "result": "done"}',
                    }
                ],
            },
            (ToolMessage(content="done", tool_call_id="c1"),),
        ),
        # an empty response is empty text
        (
            {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c1", "response": ""}]},
            (ToolMessage(content="", tool_call_id="c1"),),
        ),
    ],
)
def test_read_message_fast_paths_match_the_general_path(
    data: dict[str, Any], expected: tuple[Any, ...]
) -> None:
    assert _general(data) == expected
    assert read_message(data) == expected  # cache miss
    assert read_message(data) == expected  # cache hit


def test_default_role_fills_a_missing_role_on_the_parts_fast_path() -> None:
    data = {"parts": [{"type": "tool_call", "id": "c1", "name": "f", "arguments": {"a": 1}}]}
    (message,) = read_message(data, "assistant")
    assert isinstance(message, AssistantMessage)
    assert message.tool_calls is not None
    assert (message.tool_calls[0].name, message.tool_calls[0].arguments) == ("f", {"a": 1})


def test_many_brackets_but_shallow_reads_the_same_through_the_cache() -> None:
    parts = [{"type": "text", "content": "[{" * 60}] * 3  # >MAX_NESTING brackets, depth 3
    data = {"role": "user", "parts": parts}
    expected = (UserMessage(content="\n".join(["[{" * 60] * 3)),)
    assert read_message(data) == expected


def test_a_message_nested_past_the_limit_is_still_refused() -> None:
    deep: Any = "x"
    for _ in range(MAX_NESTING + 5):
        deep = [deep]
    data = {"role": "tool", "parts": [{"type": "tool_call_response", "id": "c", "response": deep}]}
    with pytest.raises(ValueError, match="nest"):
        read_message(data)


def test_new_span_extraction_sets_every_field_in_declaration_order() -> None:
    values: dict[str, Any] = {
        "convention": "genai",
        "kind": "tool",
        "input_messages": (UserMessage(content="q"),),
        "output_messages": (AssistantMessage(content="a"),),
        "tool": ToolExecution(name="f", call_id="c1"),
        "agent_name": "agent",
        "conversation_id": "conv",
        "model": "gpt-4o",
        "input_tokens": 3,
        "output_tokens": 4,
        "retrieval_query": "query",
        "documents": (),
        "ignored_reason": "why",
        "notes": ("note",),
        "completion": "a completion",
        "turn": ("question", "reply"),
        "retrieved_nothing": True,
        "text_hint": "what the spans are",
    }
    assert list(values) == [f.name for f in fields(SpanExtraction)]
    fast = new_span_extraction(*values.values())
    plain = SpanExtraction(**values)
    assert fast == plain
    assert astuple(fast) == astuple(plain)
    with pytest.raises(FrozenInstanceError):
        fast.model = "other"  # type: ignore[misc]
