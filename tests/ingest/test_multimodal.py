"""Multimodal content lists: every convention and container gives typed attachment placeholders.

One image in a content list is ~290,000 characters of base64. Whatever the recording's shape,
the text the judge reads holds the message's text parts only, and the image is an
:class:`~agent_eval._trace.OpaquePart` whose data has the base64 replaced by a short marker
(issue 32, item 6). The formatters render the part as an attachment line.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import yaml

from agent_eval._trace import AgentTrace, Message, UserMessage
from agent_eval.formatting import get_formatter
from agent_eval.ingest import ingest
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.conventions._google_adk import GoogleADKConvention
from agent_eval.ingest.conventions._langsmith import LangSmithConvention
from agent_eval.ingest.conventions._openllmetry import OpenLLMetryConvention
from agent_eval.ingest.conventions._pydantic_ai import PydanticAIConvention
from agent_eval.ingest.conventions._vercel_ai import VercelAIConvention

PAYLOAD = "iVBORw0KGgo" * 4000
IMAGE = "data:image/png;base64," + PAYLOAD
QUESTION = "What is in this picture?"
OPENAI_PARTS = [
    {"type": "text", "text": QUESTION},
    {"type": "image_url", "image_url": {"url": IMAGE, "detail": "auto"}},
]


def span(attrs: dict[str, Any], name: str = "chat") -> SpanRecord:
    return SpanRecord(
        trace_id="a" * 32, span_id="1" * 16, parent_span_id=None, name=name,
        start_time_unix_nano=1, end_time_unix_nano=2, attributes=attrs,
        source=SourceLocation("in.json", None),
    )  # fmt: skip


def check_user(message: Message, part_type: str = "image_url") -> None:
    assert isinstance(message, UserMessage)
    assert message.content == QUESTION
    (part,) = message.parts
    assert part.type == part_type
    dumped = json.dumps(part.data)
    assert PAYLOAD[:40] not in dumped and "omitted>" in dumped and len(dumped) < 500


def test_openllmetry_prompt_content_json_parts() -> None:
    attrs = {
        "gen_ai.prompt.0.role": "user",
        "gen_ai.prompt.0.content": json.dumps(OPENAI_PARTS),
        "gen_ai.completion.0.role": "assistant",
        "gen_ai.completion.0.content": "A cat.",
    }
    extraction = OpenLLMetryConvention().extract(span(attrs))
    (user,) = extraction.input_messages
    check_user(user)
    assert extraction.output_messages[0].content == "A cat."


def test_openllmetry_text_only_parts_are_unchanged() -> None:
    parts = [{"type": "text", "text": "a"}, {"type": "text", "text": "b"}]
    attrs = {"gen_ai.prompt.0.role": "user", "gen_ai.prompt.0.content": json.dumps(parts)}
    (user,) = OpenLLMetryConvention().extract(span(attrs)).input_messages
    assert (user.content, user.parts) == ("ab", ())


def test_langsmith_langchain_content_list() -> None:
    messages = [{"role": "user", "content": OPENAI_PARTS}]
    attrs = {
        "langsmith.span.kind": "llm",
        "gen_ai.prompt": json.dumps({"messages": messages}),
        "gen_ai.completion": json.dumps({"choices": [{"role": "assistant", "content": "A cat."}]}),
    }
    extraction = LangSmithConvention().extract(span(attrs))
    check_user(extraction.input_messages[0])


def test_vercel_ai_user_image_part() -> None:
    prompt = [{"role": "user", "content": [{"type": "text", "text": QUESTION},
                                           {"type": "image", "image": PAYLOAD,
                                            "mediaType": "image/png"}]}]  # fmt: skip
    attrs = {
        "ai.operationId": "ai.generateText.doGenerate",
        "ai.prompt.messages": json.dumps(prompt),
        "ai.response.text": "A cat.",
    }
    extraction = VercelAIConvention().extract(span(attrs, "ai.generateText.doGenerate"))
    check_user(extraction.input_messages[0], "image")


def test_google_adk_inline_data_part() -> None:
    request = {
        "model": "gemini",
        "contents": [
            {
                "role": "user",
                "parts": [
                    {"text": QUESTION},
                    {"inline_data": {"mime_type": "image/png", "data": PAYLOAD}},
                ],
            }
        ],
    }
    attrs = {
        "gcp.vertex.agent.llm_request": json.dumps(request),
        "gcp.vertex.agent.llm_response": json.dumps(
            {"content": {"role": "model", "parts": [{"text": "A cat."}]}}
        ),
    }  # fmt: skip
    extraction = GoogleADKConvention().extract(span(attrs, "call_llm"))
    check_user(extraction.input_messages[0], "inline_data")


def test_pydantic_ai_user_event_content_list() -> None:
    events = [{"event.name": "gen_ai.user.message", "role": "user", "content": OPENAI_PARTS},
              {"event.name": "gen_ai.choice", "index": 0,
               "message": {"role": "assistant", "content": "A cat."}}]  # fmt: skip
    attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai",
             "events": json.dumps(events), "logfire.msg": "chat fake-model"}  # fmt: skip
    extraction = PydanticAIConvention().extract(span(attrs, "chat fake-model"))
    check_user(extraction.input_messages[0])


def cassette(tmp_path: Path) -> Path:
    body = {"model": "gpt-4o-mini", "messages": [{"role": "user", "content": OPENAI_PARTS}]}
    reply = {"model": "gpt-4o-mini", "choices": [{"message": {"role": "assistant",
                                                              "content": "A cat."}}]}  # fmt: skip
    interaction = {
        "request": {"body": json.dumps(body), "method": "POST",
                    "uri": "https://api.openai.com/v1/chat/completions", "headers": {}},
        "response": {"body": {"string": json.dumps(reply)}, "status": {"code": 200},
                     "headers": {}},
    }  # fmt: skip
    path = tmp_path / "cassette.yaml"
    path.write_text(yaml.safe_dump({"interactions": [interaction], "version": 1}))
    return path


def test_openai_cassette_content_list(tmp_path: Path) -> None:
    (trace,) = ingest(cassette(tmp_path))
    check_user(trace.messages[0])


def test_formatters_render_a_placeholder_not_base64(tmp_path: Path) -> None:
    (trace,) = ingest(cassette(tmp_path))
    assert isinstance(trace, AgentTrace)
    for name in ("transcript@1", "xml@1", "json@1"):
        rendered = get_formatter(name).render(trace)
        assert PAYLOAD[:40] not in rendered and "image_url" in rendered, name
        assert len(rendered) < 2_000, name
