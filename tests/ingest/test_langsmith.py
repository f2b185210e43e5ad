"""LangSmith-over-OTel convention."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from agent_eval._trace import AssistantMessage, SystemMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest import ingest
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.conventions._langsmith import LangSmithConvention
from agent_eval.testing import _otlp as otlp

CONVENTION = LangSmithConvention()


def span(attributes: dict[str, Any]) -> SpanRecord:
    return SpanRecord(trace_id="a" * 32, span_id="b" * 16, name="ChatOpenAI", attributes=attributes)


def lc(kind: str, **kwargs: Any) -> dict[str, Any]:
    return {
        "lc": 1,
        "type": "constructor",
        "id": ["langchain", "schema", "messages", kind],
        "kwargs": kwargs,
    }


def test_chat_model_run_with_serialized_langchain_messages() -> None:
    inputs = {
        "messages": [
            [
                lc("SystemMessage", content="Be brief.", type="system"),
                lc("HumanMessage", content="Weather in Paris?", type="human"),
                lc(
                    "AIMessage",
                    content="",
                    tool_calls=[
                        {
                            "name": "get_weather",
                            "args": {"city": "Paris"},
                            "id": "c1",
                            "type": "tool_call",
                        }
                    ],
                ),
                lc("ToolMessage", content="rainy", tool_call_id="c1", name="get_weather"),
            ]
        ]
    }
    outputs = {
        "generations": [
            [{"text": "It is rainy.", "message": lc("AIMessage", content="It is rainy.")}]
        ]
    }
    attrs = {
        "langsmith.span.kind": "llm",
        "langsmith.trace.name": "ChatOpenAI",
        "langsmith.trace.session_id": "project-uuid",
        "langsmith.metadata.thread_id": "thread-1",
        "gen_ai.prompt": json.dumps(inputs),
        "gen_ai.completion": json.dumps(outputs),
        "gen_ai.response.model": "gpt-4o",
        "gen_ai.usage.input_tokens": 20,
        "gen_ai.usage.output_tokens": 4,
    }
    assert CONVENTION.detect(span(attrs))
    ex = CONVENTION.extract(span(attrs))
    assert ex.kind == "llm"
    assert ex.input_messages == (
        SystemMessage(content="Be brief."),
        UserMessage(content="Weather in Paris?"),
        AssistantMessage(
            tool_calls=(ToolCall(id="c1", name="get_weather", arguments={"city": "Paris"}),)
        ),
        ToolMessage(content="rainy", tool_call_id="c1", tool_name="get_weather"),
    )
    assert ex.output_messages == (AssistantMessage(content="It is rainy."),)
    # the LangSmith session is the project, not a conversation: the thread id is
    assert (ex.conversation_id, ex.model, ex.input_tokens) == ("thread-1", "gpt-4o", 20)


def test_wrapped_openai_call_with_openai_messages_and_choices() -> None:
    inputs = {"messages": [{"role": "user", "content": "2+2?"}], "model": "gpt-4o-mini"}
    outputs = {
        "choices": [
            {
                "message": {
                    "role": "assistant",
                    "content": None,
                    "tool_calls": [
                        {
                            "id": "c2",
                            "type": "function",
                            "function": {"name": "calc", "arguments": '{"e": "2+2"}'},
                        }
                    ],
                }
            }
        ]
    }
    ex = CONVENTION.extract(
        span(
            {
                "langsmith.span.kind": "llm",
                "gen_ai.prompt": json.dumps(inputs),
                "gen_ai.completion": json.dumps(outputs),
            }
        )
    )
    assert ex.input_messages == (UserMessage(content="2+2?"),)
    assert ex.output_messages == (
        AssistantMessage(tool_calls=(ToolCall(id="c2", name="calc", arguments={"e": "2+2"}),)),
    )


def test_tool_run() -> None:
    attrs = {
        "langsmith.span.kind": "tool",
        "langsmith.trace.name": "get_weather",
        "gen_ai.prompt": json.dumps({"input": '{"city": "Paris"}'}),
        "gen_ai.completion": json.dumps(
            {"output": lc("ToolMessage", content="rainy", tool_call_id="c1")}
        ),
    }
    ex = CONVENTION.extract(span(attrs))
    assert ex.kind == "tool" and ex.tool is not None
    assert (ex.tool.name, ex.tool.arguments, ex.tool.result) == (
        "get_weather",
        {"city": "Paris"},
        "rainy",
    )


def test_chain_run_with_graph_state_messages() -> None:
    state = {"messages": [{"type": "human", "content": "hi"}, {"type": "ai", "content": "hello"}]}
    attrs = {
        "langsmith.span.kind": "chain",
        "langsmith.trace.name": "agent",
        "gen_ai.prompt": json.dumps({"messages": state["messages"][:1]}),
        "gen_ai.completion": json.dumps(state),
    }
    ex = CONVENTION.extract(span(attrs))
    assert (ex.kind, ex.agent_name) == ("chain", "agent")
    assert ex.input_messages == (UserMessage(content="hi"),)
    assert ex.output_messages == (AssistantMessage(content="hello"),)


def test_a_langgraph_run_exported_over_otlp_gives_each_message_once(tmp_path: Path) -> None:
    """Two chat-model runs under a graph run; GenAI also detects the spans (gen_ai.* keys)."""
    trace = "0af7651916cd43dd8448eb211c80319c"
    call = {"name": "lookup", "args": {"q": "x"}, "id": "c1", "type": "tool_call"}
    history = [lc("HumanMessage", content="find x", type="human")]
    first = {
        "generations": [[{"text": "", "message": lc("AIMessage", content="", tool_calls=[call])}]]
    }
    history2 = [
        *history,
        lc("AIMessage", content="", tool_calls=[call]),
        lc("ToolMessage", content="x is 1", tool_call_id="c1", name="lookup"),
    ]
    second = {"generations": [[{"text": "x is 1.", "message": lc("AIMessage", content="x is 1.")}]]}

    def run(span_id: str, start: int, inputs: Any, outputs: Any) -> dict[str, Any]:
        return otlp.span(
            trace,
            span_id,
            "ChatOpenAI",
            parent_span_id="a000000000000001",
            start=start,
            attributes={
                "langsmith.span.kind": "llm",
                "langsmith.metadata.thread_id": "thread-9",
                "gen_ai.system": "openai",
                "gen_ai.prompt": json.dumps(inputs),
                "gen_ai.completion": json.dumps(outputs),
            },
        )

    spans = [
        otlp.span(
            trace,
            "a000000000000001",
            "LangGraph",
            start=1,
            attributes={"langsmith.span.kind": "chain", "langsmith.trace.name": "LangGraph"},
        ),
        run("a000000000000002", 2, {"messages": [history]}, first),
        run("a000000000000003", 3, {"messages": [history2]}, second),
    ]
    path = tmp_path / "langsmith.json"
    path.write_text(json.dumps(otlp.export_request(spans)))
    run_ = ingest(path)
    (conversation,) = run_.collect()
    assert conversation.conversation_id == "thread-9"
    assert [(m.role, m.content) for m in conversation.messages] == [
        ("user", "find x"),
        ("assistant", ""),
        ("tool", "x is 1"),
        ("assistant", "x is 1."),
    ]
    assert conversation.source.conventions == ("langsmith",)
    assert run_.report.balanced
