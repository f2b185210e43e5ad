"""``ragas-pretty@1`` against the spec's examples (byte for byte) and its edge cases."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

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

RAGAS = get_formatter("ragas-pretty@1")


def render(*messages: Message) -> str:
    return RAGAS.render(AgentTrace(conversation_id="c", messages=messages))


def ai(content: str = "", calls: list[ToolCall] | None = None) -> AssistantMessage:
    return AssistantMessage(content=content, tool_calls=None if calls is None else tuple(calls))


EXAMPLE_TRACES: list[tuple[Message, ...]] = [
    (
        UserMessage(content="What's the weather in Paris?"),
        ai(calls=[ToolCall(name="get_weather", arguments={"city": "Paris", "units": "metric"})]),
        ToolMessage(content='{"temp": 18, "condition": "cloudy"}', tool_name="get_weather"),
        ai("It is 18°C and cloudy in Paris."),
    ),
    (
        UserMessage(content="Refund order #123"),
        ai(
            "Checking.",
            [
                ToolCall(
                    id="c1",
                    name="lookup_order",
                    arguments={
                        "order_id": 123,
                        "note": "user's request",
                        "tags": ["refund", "vip"],
                        "meta": {"rush": False, "amount": 12.0, "x": None},
                    },
                )
            ],
        ),
        ToolMessage(content="status: delivered", tool_call_id="c1"),
        ai("Refund issued.", []),
        UserMessage(content="Merci ✓"),
    ),
    (
        SystemMessage(content="You are a travel agent."),
        UserMessage(content="Book a flight to NYC on 2024-05-01 and a hotel"),
        ai(
            "Sure, searching.",
            [
                ToolCall(
                    name="search_flights",
                    arguments={
                        "dest": "NYC",
                        "date": "2024-05-01",
                        "max_stops": 1,
                        "flex": True,
                        "price": 199.5,
                        "cabins": ["economy"],
                        "opts": {"seat": None},
                    },
                ),
                ToolCall(name="search_hotels", arguments={}),
            ],
        ),
        ToolMessage(content="Flight AA100 found"),
        ToolMessage(content="Hotel Hilton found"),
        ai("Found AA100 and Hilton.\nShall I book?"),
        UserMessage(content="yes"),
        ai(calls=[]),
        ai(),
    ),
]


def spec_examples(shared_dir: Path) -> list[str]:
    text = (shared_dir / "specs" / "ragas-pretty-repr.md").read_text(encoding="utf-8")
    return re.findall(r"^```\n(.*?)\n```$", text, flags=re.DOTALL | re.MULTILINE)


def test_spec_has_the_three_examples(shared_dir: Path) -> None:
    assert len(spec_examples(shared_dir)) == len(EXAMPLE_TRACES)


@pytest.mark.parametrize("index", range(len(EXAMPLE_TRACES)))
def test_spec_example_byte_for_byte(shared_dir: Path, index: int) -> None:
    expected = spec_examples(shared_dir)[index]
    assert render(*EXAMPLE_TRACES[index]).encode() == expected.encode()


def test_third_example_ends_with_bare_tools_and_newline() -> None:
    assert render(*EXAMPLE_TRACES[2]).endswith("Human: yes\nTools:\n")


def test_empty_human_keeps_trailing_space() -> None:
    assert render(UserMessage(content=""), ai("ok")) == "Human: \nAI: ok"


def test_empty_ai_in_the_middle_leaves_a_blank_line() -> None:
    assert (
        render(UserMessage(content="a"), ai(), UserMessage(content="b")) == "Human: a\n\nHuman: b"
    )


def test_only_message_empty_ai_renders_empty_string() -> None:
    assert render(ai()) == ""


def test_no_messages_render_empty_string() -> None:
    assert render() == ""


def test_system_only_renders_empty_string() -> None:
    assert render(SystemMessage(content="be nice")) == ""


def test_tool_output_drops_name_and_call_id() -> None:
    assert render(ToolMessage(content="x", tool_name="t", tool_call_id="id-1")) == "ToolOutput: x"


def test_empty_tool_output_keeps_trailing_space() -> None:
    assert render(ToolMessage(content="")) == "ToolOutput: "


def test_multiline_content_verbatim() -> None:
    assert render(UserMessage(content="l1\n\nl3\r\n")) == "Human: l1\n\nl3\r\n"


def test_python_str_quoting_rules() -> None:
    args = {"a": "it's", "b": 'say "hi"', "c": "both ' and \"", "d": "tab\there", "é": "ü"}
    line = render(ai(calls=[ToolCall(name="t", arguments=args)])).splitlines()[1]
    assert line == "  t: " + str(args)
    assert line == (
        "  t: {'a': \"it's\", 'b': 'say \"hi\"', 'c': 'both \\' and \"', 'd': 'tab\\there', "
        "'é': 'ü'}"
    )


def test_numbers_and_nesting() -> None:
    args = {"i": 1, "f": 1.5, "g": 1e20, "n": [1, [2, {"k": None}]], "t": True}
    out = render(ai(calls=[ToolCall(name="t", arguments=args)]))
    assert (
        out == "Tools:\n  t: {'i': 1, 'f': 1.5, 'g': 1e+20, 'n': [1, [2, {'k': None}]], 't': True}"
    )


def test_agent_name_and_reasoning_are_dropped() -> None:
    message = AssistantMessage(content="hi", agent_name="planner", reasoning="hmm")
    assert render(message) == "AI: hi"


def test_invalid_json_arguments_are_wrapped_deterministically() -> None:
    call = ToolCall(name="t", arguments=None, raw_arguments="{city: 'Paris'")
    assert render(ai(calls=[call])) == "Tools:\n  t: {'raw_arguments': \"{city: 'Paris'\"}"


def test_missing_arguments_render_empty_dict() -> None:
    assert render(ai(calls=[ToolCall(name="t")])) == "Tools:\n  t: {}"


def test_non_object_json_arguments_render_python_str() -> None:
    calls = [ToolCall(name="a", arguments=[1, "x"]), ToolCall(name="b", arguments="s")]
    assert render(ai(calls=calls)) == "Tools:\n  a: [1, 'x']\n  b: s"


def test_json_round_trip_keeps_rendering() -> None:
    trace = AgentTrace(conversation_id="c", messages=EXAMPLE_TRACES[1])
    again = AgentTrace.model_validate_json(trace.model_dump_json())
    assert RAGAS.render(again) == RAGAS.render(trace)
