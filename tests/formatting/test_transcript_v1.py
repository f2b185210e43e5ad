"""``transcript@1``: labels, numbering, tool-call rendering and its two parameters."""

from __future__ import annotations

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.formatting import get_formatter


def render(identity: str, *messages: Message) -> str:
    return get_formatter(identity).render(AgentTrace(conversation_id="c", messages=messages))


CONVERSATION = (
    SystemMessage(content="Be brief."),
    UserMessage(content="Weather?"),
    AssistantMessage(
        agent_name="weather-bot",
        tool_calls=(ToolCall(id="c1", name="get_weather", arguments={"city": "Zürich"}),),
    ),
    ToolMessage(content="x" * 50, tool_call_id="c1"),
    AssistantMessage(content="Sunny."),
)


def test_layout() -> None:
    assert render("transcript@1", *CONVERSATION) == (
        "[1] SYSTEM\nBe brief.\n\n"
        "[2] USER\nWeather?\n\n"
        "[3] ASSISTANT (agent: weather-bot)\n"
        '-> tool call get_weather (call id: c1) with arguments {"city": "Zürich"}\n\n'
        f"[4] TOOL RESULT from get_weather (call id: c1)\n{'x' * 50}\n\n"
        "[5] ASSISTANT\nSunny."
    )


def test_system_off_renumbers() -> None:
    out = render("transcript@1[system=off]", *CONVERSATION)
    assert "SYSTEM" not in out and "Be brief." not in out
    assert out.startswith("[1] USER\nWeather?") and "[4] ASSISTANT\nSunny." in out


def test_truncation_says_how_much_was_cut() -> None:
    out = render("transcript@1[max_tool_chars=20]", *CONVERSATION)
    assert f"{'x' * 20}\n[truncated: 30 of 50 characters cut]" in out
    assert "Weather?" in out  # only tool results are truncated


def test_no_truncation_at_or_under_the_limit() -> None:
    assert "truncated" not in render("transcript@1[max_tool_chars=50]", *CONVERSATION)


def test_truncation_counts_code_points_not_bytes() -> None:
    out = render("transcript@1[max_tool_chars=2]", ToolMessage(content="ééé✓"))
    assert out.endswith("éé\n[truncated: 2 of 4 characters cut]")


def test_zero_keeps_only_the_note() -> None:
    out = render("transcript@1[max_tool_chars=0]", ToolMessage(content="abc"))
    assert (
        out
        == "[1] TOOL RESULT from unknown tool (no call id)\n\n[truncated: 3 of 3 characters cut]"
    )


def test_invalid_and_missing_arguments() -> None:
    calls = (ToolCall(name="a", raw_arguments="{oops"), ToolCall(name="b"))
    out = render("transcript@1", AssistantMessage(tool_calls=calls))
    assert "-> tool call a (no call id) with arguments that are not valid JSON: {oops" in out
    assert "-> tool call b (no call id) with no arguments" in out


def test_identical_messages_get_distinct_numbers() -> None:
    out = render("transcript@1", UserMessage(content="yes"), UserMessage(content="yes"))
    assert out == "[1] USER\nyes\n\n[2] USER\nyes"


def test_empty_conversation_renders_empty_string() -> None:
    assert render("transcript@1") == ""
