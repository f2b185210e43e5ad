"""LangSmith over OpenTelemetry: ``langsmith.*`` plus run inputs/outputs in ``gen_ai.prompt``.

Follows what the LangSmith SDK's OTel exporter writes (``langsmith[otel]`` >= 0.3.18,
``LANGSMITH_OTEL_ENABLED=true``) and what LangSmith's OTel ingestion documents:

- ``langsmith.span.kind``: the run type (``llm``, ``chain``, ``tool``, ``retriever``,
  ``embedding``, ``prompt``, ``parser``); ``langsmith.trace.name``: the run name;
  ``langsmith.trace.session_id`` / ``session_name``: the LangSmith *project* (not a
  conversation); ``langsmith.metadata.*``: run metadata, where ``thread_id`` / ``session_id`` /
  ``conversation_id`` group runs into a conversation thread; ``langsmith.span.tags``;
- ``gen_ai.prompt`` / ``gen_ai.completion``: the run's raw inputs and outputs as JSON (not GenAI
  v1.26 event attributes): LangChain chat-model runs hold ``{"messages": [[message...]]}`` and
  ``{"generations": [[{"text", "message"}]]}``; wrapped OpenAI calls hold the request
  (``{"messages": [...]}``) and the response (``{"choices": [{"message"}]}``); graph runs
  ``{"messages": [...]}``; tool runs ``{"input": ...}`` and ``{"output": ...}``;
- messages are LangChain messages, serialized (``{"lc": 1, "type": "constructor", "id": [...,
  "HumanMessage"], "kwargs": {...}}``) or dumped (``{"type": "human", "content"}``), or OpenAI
  chat messages (``{"role", "content", "tool_calls"}``);
- ``gen_ai.request.model`` / ``gen_ai.response.model``, ``gen_ai.usage.input_tokens`` /
  ``output_tokens``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, ClassVar

from agent_eval._trace import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._extraction import SpanExtraction, SpanKind
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._values import (
    as_int,
    as_str,
    content_of,
    first,
    maybe_json,
    text_of,
    tool_call,
    tool_execution,
)

__all__ = ["LangSmithConvention"]

SPAN_KIND = "langsmith.span.kind"
TRACE_NAME = "langsmith.trace.name"
PREFIX = "langsmith."
METADATA_PREFIX = "langsmith.metadata."
THREAD_KEYS = ("thread_id", "session_id", "conversation_id")
PROMPT = "gen_ai.prompt"
COMPLETION = "gen_ai.completion"
MODEL = ("gen_ai.response.model", "gen_ai.request.model")
INPUT_TOKENS = ("gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")
OUTPUT_TOKENS = ("gen_ai.usage.output_tokens", "gen_ai.usage.completion_tokens")

_KINDS: dict[str, SpanKind] = {
    "llm": "llm",
    "chain": "chain",
    "tool": "tool",
    "retriever": "retriever",
}
_ROLES = {
    "human": "user",
    "user": "user",
    "ai": "assistant",
    "assistant": "assistant",
    "system": "system",
    "developer": "system",
    "tool": "tool",
    "function": "tool",
}


class LangSmithConvention(Convention):
    """Reads LangSmith runs exported as spans: run type, thread and raw inputs/outputs."""

    name: ClassVar[str] = "langsmith"
    semconv: ClassVar[str] = "LangSmith OpenTelemetry export (langsmith.*), langsmith >= 0.3.18"
    priority: ClassVar[int] = 20
    triggers: ClassVar[frozenset[str]] = markers_of(PREFIX)

    def detect(self, span: SpanRecord) -> bool:
        """Any ``langsmith.*`` attribute."""
        return any(key.startswith(PREFIX) for key in span.attributes)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """Messages of an ``llm`` run, the tool run of a ``tool`` run, else the run's kind."""
        attributes = span.attributes
        kind = _KINDS.get(str(attributes.get(SPAN_KIND) or ""), "other")
        inputs, outputs = maybe_json(attributes.get(PROMPT)), maybe_json(attributes.get(COMPLETION))
        common: dict[str, Any] = {
            "convention": self.name,
            "conversation_id": as_str(
                first(attributes, [METADATA_PREFIX + k for k in THREAD_KEYS])
            ),
        }
        if kind == "tool":
            tool = tool_execution(
                attributes.get(TRACE_NAME) or span.name,
                None,
                _tool_input(inputs),
                _tool_output(outputs),
            )
            return SpanExtraction(kind="tool", tool=tool, **common)
        in_messages = tuple(_messages(_message_list(inputs)))
        out_messages = tuple(_output_messages(outputs))
        if kind != "llm":
            reason = None if in_messages or out_messages else "no_message_content"
            return SpanExtraction(
                kind=kind,
                input_messages=in_messages,
                output_messages=out_messages,
                agent_name=as_str(attributes.get(TRACE_NAME)) if kind == "chain" else None,
                ignored_reason=reason,
                **common,
            )
        return SpanExtraction(
            kind="llm",
            input_messages=in_messages,
            output_messages=out_messages,
            model=as_str(first(attributes, MODEL)),
            input_tokens=as_int(first(attributes, INPUT_TOKENS)),
            output_tokens=as_int(first(attributes, OUTPUT_TOKENS)),
            ignored_reason=None if in_messages or out_messages else "no_message_content",
            **common,
        )


def _message_list(value: Any) -> list[Any]:
    """The messages of a run's inputs/outputs: ``{"messages": [...] | [[...]]}`` or a list."""
    if isinstance(value, Mapping):
        value = value.get("messages")
    if isinstance(value, list) and value and all(isinstance(v, list) for v in value):
        value = value[0]  # a batch of prompts: LangChain runs hold one
    return value if isinstance(value, list) else []


def _output_messages(outputs: Any) -> list[Message]:
    if not isinstance(outputs, Mapping):
        return []
    generations = outputs.get("generations")
    if isinstance(generations, list) and generations:
        batch = generations[0] if isinstance(generations[0], list) else generations
        return [_generation(g) for g in batch[:1] if isinstance(g, Mapping)]
    choices = outputs.get("choices")
    if isinstance(choices, list) and choices and isinstance(choices[0], Mapping):
        return _messages([choices[0].get("message")])
    if "messages" in outputs:
        return _messages(_message_list(outputs))[-1:]
    if outputs.get("role") or outputs.get("type") in _ROLES:
        return _messages([outputs])
    return []


def _generation(generation: Mapping[str, Any]) -> Message:
    message = _messages([generation.get("message")])
    return message[0] if message else AssistantMessage(content=text_of(generation.get("text")))


def _messages(raw: list[Any]) -> list[Message]:
    return [m for item in raw if (m := _message(item)) is not None]


def _message(raw: Any) -> Message | None:
    if not isinstance(raw, Mapping):
        return None
    if raw.get("lc") == 1 and isinstance(raw.get("kwargs"), Mapping):
        class_name = str((raw.get("id") or [""])[-1])
        fields = dict(raw["kwargs"])
        fields.setdefault(
            "type", class_name.removesuffix("MessageChunk").removesuffix("Message").lower()
        )
        raw = fields
    role = _ROLES.get(str(raw.get("role") or raw.get("type") or ""))
    content, parts = content_of(raw.get("content"))  # images etc.: typed placeholders
    if role == "assistant":
        calls = _tool_calls(raw)
        calls_or_none = tuple(calls) if calls else None
        return AssistantMessage(content=content, parts=parts, tool_calls=calls_or_none)
    if role == "tool":
        return ToolMessage(
            content=content,
            parts=parts,
            tool_call_id=as_str(raw.get("tool_call_id")),
            tool_name=as_str(raw.get("name")),
        )
    if role == "system":
        return SystemMessage(content=content, parts=parts)
    return UserMessage(content=content, parts=parts) if role == "user" else None


def _tool_calls(raw: Mapping[str, Any]) -> list[ToolCall]:
    calls = raw.get("tool_calls")
    if not calls and isinstance(raw.get("additional_kwargs"), Mapping):
        calls = raw["additional_kwargs"].get("tool_calls")
    out = []
    for call in calls or ():
        if not isinstance(call, Mapping):
            continue
        function = call.get("function")
        if isinstance(function, Mapping):  # OpenAI shape
            out.append(tool_call(call.get("id"), function.get("name"), function.get("arguments")))
        else:  # LangChain ToolCall shape
            out.append(tool_call(call.get("id"), call.get("name"), call.get("args")))
    return out


def _tool_input(inputs: Any) -> Any:
    if isinstance(inputs, Mapping) and set(inputs) == {"input"}:
        return maybe_json(inputs["input"])
    return inputs


def _tool_output(outputs: Any) -> Any:
    if isinstance(outputs, Mapping) and "output" in outputs:
        output = outputs["output"]
        if isinstance(output, Mapping) and output.get("lc") == 1:  # a serialized ToolMessage
            return (output.get("kwargs") or {}).get("content")
        return output
    return outputs
