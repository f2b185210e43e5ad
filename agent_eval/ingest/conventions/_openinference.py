"""The OpenInference semantic conventions (Arize; convention ``openinference``).

Reads the flattened message lists ``llm.input_messages.{i}.message.*`` and
``llm.output_messages.{i}.message.*`` (text in ``message.content`` or in
``message.contents.{k}.message_content.*``; tool calls in
``message.tool_calls.{j}.tool_call.{id,function.name,function.arguments}``; ``message.tool_call_id``
and ``message.name`` on tool results), ``openinference.span.kind`` (LLM, TOOL, AGENT, CHAIN,
RETRIEVER...), ``session.id``, TOOL spans (``tool.name``, ``tool_call.*``, arguments from
``input.value``, the result from ``output.value``; an OpenAI Agents SDK handoff's TOOL span,
``handoff to <agent>``, is no tool run: ignored as ``agent_handoff``), RETRIEVER spans
(``retrieval.documents.{i}.document.{content,id,score,metadata}``; one with no documents and
``output.value`` ``[]`` ran and returned nothing: ``retrieved_nothing``), ``llm.model_name``,
``llm.token_count.{prompt,completion}``, ``agent.name`` and ``graph.node.name``. AutoGen's tool
results (role ``function``, one JSON object per result in ``function.{k}``) are one ``tool``
message each. A completions-API
LLM span (``llm.prompts``) has its reply, ``output.value``, read as the call's ``completion`` (no
message); a root CHAIN/AGENT span's ``input.value``/``output.value`` are read as its ``turn`` (see
:func:`_turn`), used only where no LLM call answered that turn. When an LLM span
has no flattened messages, a JSON ``input.value`` request body with ``messages`` and an
``output.value`` chat completion (``choices[0].message``) are read instead; a flattened tool
call without arguments takes them from the span's Responses API ``function_call`` items or
chat-completions ``tool_calls`` of the same call id (openai-agents writes none for ``{}``).
Keys are in :mod:`~agent_eval.ingest.conventions._openinference_keys`.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import replace
from typing import Any, ClassVar

from agent_eval._trace import Message, OpaquePart, RetrievedDocument, ToolCall
from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._extraction import SpanExtraction, SpanKind, ToolExecution
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._spans import LogRecord, SpanRecord
from agent_eval.ingest.conventions import _openinference_keys as k
from agent_eval.ingest.conventions import _smolagents as smolagents
from agent_eval.ingest.conventions._attachments import attachment_part
from agent_eval.ingest.conventions._base import Convention, markers_of
from agent_eval.ingest.conventions._flatten import indexed
from agent_eval.ingest.conventions._messages import (
    build_message,
    decode_json,
    message_from_mapping,
    messages_from_value,
    parse_arguments,
    text_of,
    to_json_value,
    tool_call,
)
from agent_eval.ingest.conventions._text_hints import HAYSTACK_CHAIN_HINT, is_haystack_repr
from agent_eval.ingest.conventions._tool_outputs import llama_index_tool_output

__all__ = ["OpenInferenceConvention"]


class OpenInferenceConvention(Convention):
    """OpenInference span attributes (flattened messages, span kinds, retrievals, tools)."""

    name: ClassVar[str] = "openinference"
    semconv: ClassVar[str] = (
        "OpenInference semantic conventions (openinference-semantic-conventions 0.1)"
    )
    priority: ClassVar[int] = 60
    triggers: ClassVar[frozenset[str]] = markers_of(*k.DETECT_PREFIXES)

    def detect(self, span: SpanRecord) -> bool:
        """Whether the span has ``openinference.span.kind`` or flattened ``llm.*`` messages."""
        return any(key.startswith(k.DETECT_PREFIXES) for key in span.attributes)

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        """Read messages, tool run, retrieval, agent, session, model and usage from one span.

        Raises:
            InvalidSpanError: a message with an unknown role, or a non-integer token count.

        """
        attrs = span.attributes
        kind = _kind(attrs)
        smol = span.scope_name == smolagents.SCOPE
        notes: list[str] = []
        try:
            inputs, outputs = _messages(attrs, notes) if kind in ("llm", "other") else ([], [])
        except ValueError as exc:
            raise InvalidSpanError(str(exc), trace_id=span.trace_id, span_id=span.span_id) from exc
        if smol:
            inputs, outputs = smolagents.answer_turns(inputs), smolagents.answer_turns(outputs)
        if kind == "other" and (inputs or outputs):
            kind = "llm"
        if kind == "tool" and _is_handoff(span):
            # not a tool run: the transfer call the model made and its result (what the next
            # agent's model was sent) are in the LLM spans; this span only names the agents
            return SpanExtraction(
                convention=self.name,
                kind=kind,
                conversation_id=_str(attrs.get(k.SESSION_ID)),
                ignored_reason="agent_handoff",
            )
        tool = _tool(attrs, smol) if kind == "tool" else None
        if smol and tool is not None and tool.name == smolagents.FINAL_ANSWER_TOOL:
            tool = None  # the answer is the LLM output's final_answer call, read as its text
        extraction = SpanExtraction(
            convention=self.name,
            kind=kind,
            input_messages=tuple(inputs),
            output_messages=tuple(outputs),
            tool=tool,
            agent_name=_agent_name(span, kind, smol),
            conversation_id=_str(attrs.get(k.SESSION_ID)),
            model=_str(attrs.get(k.LLM_MODEL_NAME)),
            input_tokens=_tokens(span, k.LLM_TOKEN_COUNT_PROMPT),
            output_tokens=_tokens(span, k.LLM_TOKEN_COUNT_COMPLETION),
            retrieval_query=_str(attrs.get(k.INPUT_VALUE)) if kind == "retriever" else None,
            documents=(documents := _documents(attrs) if kind == "retriever" else ()),
            notes=tuple(f"span {span.span_id}: {note}" for note in notes),
            completion=_completion(attrs) if kind == "llm" and not outputs else None,
            turn=_turn(attrs) if kind in ("chain", "agent") and not span.parent_span_id else None,
            retrieved_nothing=kind == "retriever" and not documents and _empty_result(attrs),
            text_hint=HAYSTACK_CHAIN_HINT
            if kind == "chain" and is_haystack_repr(attrs, (k.INPUT_VALUE, k.OUTPUT_VALUE))
            else None,
        )
        if extraction.is_empty:
            return replace(extraction, ignored_reason="no_genai_content")
        return extraction


def _completion(attrs: Mapping[str, Any]) -> str | None:
    """The reply of a completions-API call (``llm.prompts``): ``output.value`` as text.

    A JSON ``output.value`` holding a completion object gives its ``choices[0].text``; any other
    value is the text itself. ``None`` when the span was sent messages, not prompts, or recorded
    no output.
    """
    if not any(key == k.LLM_PROMPTS or key.startswith(f"{k.LLM_PROMPTS}.") for key in attrs):
        return None
    value = attrs.get(k.OUTPUT_VALUE)
    if value is None:
        return None
    if _is_json(attrs, k.OUTPUT_MIME_TYPE):
        decoded = decode_json(value)
        choices = decoded.get("choices") if isinstance(decoded, Mapping) else None
        first = choices[0] if isinstance(choices, list) and choices else None
        if isinstance(first, Mapping) and isinstance(first.get("text"), str):
            return str(first["text"])
    return str(value)


def _turn(attrs: Mapping[str, Any]) -> tuple[str, str] | None:
    """A root chain/agent span's ``(user message, reply)``, when both read as text.

    ``input.value``/``output.value`` are the text itself when not JSON; a JSON object gives the
    string under :data:`~.openinference_keys.TURN_INPUT_KEYS` /
    :data:`~.openinference_keys.TURN_OUTPUT_KEYS` (what openinference-instrumentation-llama-index
    records for a chat or query engine call; a ``QueryBundle`` argument gives its ``query_str``).
    Any other shape, or a value hidden by OpenInference (``__REDACTED__``), gives ``None``: the
    span's values are not known to be a message and a reply.
    """
    user = _turn_text(attrs, k.INPUT_VALUE, k.INPUT_MIME_TYPE, k.TURN_INPUT_KEYS)
    reply = _turn_text(attrs, k.OUTPUT_VALUE, k.OUTPUT_MIME_TYPE, k.TURN_OUTPUT_KEYS)
    return (user, reply) if user and reply else None


def _turn_text(
    attrs: Mapping[str, Any], key: str, mime_key: str, names: tuple[str, ...]
) -> str | None:
    value = attrs.get(key)
    if not isinstance(value, str) or not value.strip() or value == k.REDACTED_VALUE:
        return None  # (hidden by OPENINFERENCE_HIDE_INPUTS / _OUTPUTS: no turn to read)
    if not _is_json(attrs, mime_key):
        return value
    decoded = decode_json(value)
    if not isinstance(decoded, Mapping):
        return None
    for name in names:
        found = decoded.get(name)
        if isinstance(found, Mapping):  # a QueryBundle
            found = found.get("query_str")
        if isinstance(found, str) and found.strip() and found != k.REDACTED_VALUE:
            return found
    return None


def _kind(attrs: Mapping[str, Any]) -> SpanKind:
    value = str(attrs.get(k.SPAN_KIND, "")).upper()
    kind = k.SPAN_KINDS.get(value, "other")
    return kind  # type: ignore[return-value]


def _messages(attrs: Mapping[str, Any], notes: list[str]) -> tuple[list[Message], list[Message]]:
    inputs = _known(indexed(attrs, k.LLM_INPUT_MESSAGES), "user", k.LLM_INPUT_MESSAGES, notes)
    outputs = _known(
        indexed(attrs, k.LLM_OUTPUT_MESSAGES), "assistant", k.LLM_OUTPUT_MESSAGES, notes
    )
    if not inputs and _is_json(attrs, k.INPUT_MIME_TYPE):
        value = decode_json(attrs.get(k.INPUT_VALUE))
        if isinstance(value, Mapping) and isinstance(value.get("messages"), list):
            inputs = messages_from_value(value["messages"], "user")
    if not outputs and _is_json(attrs, k.OUTPUT_MIME_TYPE):
        outputs = _choice_messages(decode_json(attrs.get(k.OUTPUT_VALUE)))
    if any(_unrecorded_arguments(m) for m in (*inputs, *outputs)):
        found = _function_call_arguments(attrs)
        inputs, outputs = (
            [_with_arguments(m, found) for m in inputs],
            [_with_arguments(m, found) for m in outputs],
        )
    return inputs, outputs


def _unrecorded_arguments(message: Message) -> bool:
    calls = getattr(message, "tool_calls", None) or ()
    return any(c.arguments is None and c.raw_arguments is None and c.id for c in calls)


def _function_call_arguments(attrs: Mapping[str, Any]) -> dict[str, Any]:
    """``{call_id: arguments}`` of the tool calls the span's JSON input and output hold.

    Read from the JSON ``input.value`` and ``output.value``: Responses API ``function_call``
    items (``call_id``, ``arguments``), chat-completions ``tool_calls`` (``id``,
    ``function.arguments``) and LangChain tool calls (``id``, ``args``), wherever they sit in the
    body. openinference writes no flattened ``tool_call.function.arguments`` for an empty
    argument object (an Agents SDK or langgraph-supervisor handoff's ``{}``); the request and
    response bodies still hold what the model sent.
    """
    found: dict[str, Any] = {}
    for key, mime in ((k.INPUT_VALUE, k.INPUT_MIME_TYPE), (k.OUTPUT_VALUE, k.OUTPUT_MIME_TYPE)):
        if _is_json(attrs, mime):
            _collect_arguments(decode_json(attrs.get(key)), found, CALL_SEARCH_DEPTH)
    return found


CALL_SEARCH_DEPTH = 12
"""How deep :func:`_collect_arguments` looks into a body (LangChain's ``LLMResult`` nests a
tool call 7 levels down)."""


def _collect_arguments(value: Any, found: dict[str, Any], depth: int) -> None:
    if depth <= 0:
        return
    if isinstance(value, list):
        for item in value:
            _collect_arguments(item, found, depth - 1)
        return
    if not isinstance(value, Mapping):
        return
    call_id, arguments = _call_arguments(value)
    if call_id is not None:
        found.setdefault(call_id, arguments)
    for item in value.values():
        if isinstance(item, Mapping | list):
            _collect_arguments(item, found, depth - 1)


def _call_arguments(value: Mapping[str, Any]) -> tuple[str | None, Any]:
    """``(call id, arguments)`` when ``value`` is one tool call, else ``(None, None)``."""
    if value.get("type") == "function_call" and isinstance(value.get("arguments"), str):
        return _str(value.get("call_id")), value["arguments"]
    function = value.get("function")
    if isinstance(function, Mapping) and isinstance(function.get("arguments"), str):
        return _str(value.get("id")), function["arguments"]
    if isinstance(value.get("args"), Mapping) and "name" in value:
        return _str(value.get("id")), dict(value["args"])
    return None, None


def _with_arguments(message: Message, found: Mapping[str, Any]) -> Message:
    calls = getattr(message, "tool_calls", None)
    if not calls or not _unrecorded_arguments(message):
        return message
    filled = tuple(
        tool_call(c.name, found[c.id], c.id)
        if c.arguments is None and c.raw_arguments is None and c.id in found
        else c
        for c in calls
    )
    return message.model_copy(update={"tool_calls": filled})


def _is_json(attrs: Mapping[str, Any], mime_key: str) -> bool:
    return attrs.get(mime_key) == k.JSON_MIME_TYPE


def _choice_messages(value: Any) -> list[Message]:
    if not isinstance(value, Mapping) or not isinstance(value.get("choices"), list):
        return []
    choices = [c for c in value["choices"] if isinstance(c, Mapping)]
    message = choices[0].get("message") if choices else None
    return [message_from_mapping(message, "assistant")] if isinstance(message, Mapping) else []


def _known(
    flats: Sequence[Mapping[str, Any]], default_role: str, prefix: str, notes: list[str]
) -> list[Message]:
    """The messages of one flattened list; one with an unknown role is left out, with a note."""
    messages: list[Message] = []
    for index, flat in enumerate(flats):
        try:
            messages.extend(_function_results(flat) or (_message(flat, default_role),))
        except ValueError as exc:
            notes.append(f"message {prefix}.{index} left out: {exc}")
    return messages


def _function_results(flat: Mapping[str, Any]) -> list[Message]:
    """The tool results of an AutoGen ``FunctionExecutionResultMessage``, one message each.

    openinference-instrumentation-autogen-agentchat writes that message as role ``function``
    with one JSON object per result in ``function.{k}`` (``name``, ``content``, ``call_id``,
    ``is_error``) instead of ``message.content``. A message without such keys gives ``[]``.
    """
    found = sorted(
        (int(key[len(k.FUNCTION_RESULT_PREFIX) :]), value)
        for key, value in flat.items()
        if key.startswith(k.FUNCTION_RESULT_PREFIX)
        and key[len(k.FUNCTION_RESULT_PREFIX) :].isdigit()
    )
    results = [decode_json(value) for _, value in found]
    return [
        build_message(
            "tool",
            text_of(result.get("content")),
            tool_call_id=_str(result.get("call_id")),
            tool_name=_str(result.get("name")),
        )
        for result in results
        if isinstance(result, Mapping)
    ]


def _message(flat: Mapping[str, Any], default_role: str) -> Message:
    role = flat.get(k.MESSAGE_ROLE) or default_role
    text, parts = _content(flat)
    special = smolagents.smolagents_message(str(role), text)
    if special is not None:
        return special
    name = _str(flat.get(k.MESSAGE_NAME))
    return build_message(
        role,
        text,
        tool_calls=_tool_calls(flat),
        tool_call_id=_str(flat.get(k.MESSAGE_TOOL_CALL_ID)),
        tool_name=name,
        parts=parts,
        agent_name=name,  # an assistant message's name is the agent that spoke (LangGraph)
    )


def _content(flat: Mapping[str, Any]) -> tuple[str, list[OpaquePart]]:
    content = flat.get(k.MESSAGE_CONTENT)
    if content is not None:
        return str(content), []
    texts: list[str] = []
    parts: list[OpaquePart] = []
    for part in indexed(flat, k.MESSAGE_CONTENTS):
        kind = str(part.get(k.CONTENT_TYPE, "text"))
        if kind == "text":
            texts.append(str(part.get(k.CONTENT_TEXT, "")))
        else:
            parts.append(attachment_part(kind, part))
    return "\n".join(texts), parts


def _tool_calls(flat: Mapping[str, Any]) -> list[ToolCall] | None:
    calls = [
        tool_call(
            c.get(k.TOOL_CALL_FUNCTION_NAME),
            c.get(k.TOOL_CALL_FUNCTION_ARGUMENTS),
            c.get(k.TOOL_CALL_ID),
        )
        for c in indexed(flat, k.MESSAGE_TOOL_CALLS)
    ]
    if not calls and k.MESSAGE_FUNCTION_CALL_NAME in flat:
        name = flat[k.MESSAGE_FUNCTION_CALL_NAME]
        calls.append(tool_call(name, flat.get(k.MESSAGE_FUNCTION_CALL_ARGUMENTS)))
    return calls or None


def _is_handoff(span: SpanRecord) -> bool:
    """An OpenAI Agents SDK handoff's TOOL span (openinference ``handoff to <agent>``)."""
    attrs = span.attributes
    return (
        span.name.startswith(k.HANDOFF_SPAN_PREFIX)
        and k.TOOL_NAME not in attrs
        and k.TOOL_CALL_FUNCTION_NAME not in attrs
        and k.TOOL_CALL_ID not in attrs
        and attrs.get(k.OUTPUT_VALUE, span.name.removeprefix(k.HANDOFF_SPAN_PREFIX))
        == span.name.removeprefix(k.HANDOFF_SPAN_PREFIX)
    )


def _tool(attrs: Mapping[str, Any], smol: bool = False) -> ToolExecution:
    raw = attrs.get(k.TOOL_CALL_FUNCTION_ARGUMENTS, attrs.get(k.INPUT_VALUE))
    arguments, raw_arguments = parse_arguments(raw)
    if smol:
        arguments = to_json_value(smolagents.call_arguments(arguments))
    result, result_call_id = _tool_output(attrs.get(k.OUTPUT_VALUE))
    return ToolExecution(
        name=_str(attrs.get(k.TOOL_NAME)) or _str(attrs.get(k.TOOL_CALL_FUNCTION_NAME)),
        call_id=_str(attrs.get(k.TOOL_CALL_ID)) or result_call_id,
        arguments=arguments,
        raw_arguments=raw_arguments,
        result=result,
    )


def _tool_output(value: Any) -> tuple[str | None, str | None]:
    """A TOOL span's result text and call id, from its ``output.value``.

    openinference-instrumentation-langchain writes the LangChain ``ToolMessage`` a tool returned,
    serialized as ``{"type": "tool", "data": {"content", "tool_call_id", ...}}``: the result is
    its content. openinference-instrumentation-llama-index writes LlamaIndex's ``ToolOutput``
    (``blocks``/``raw_output``): the result is its text (:mod:`.tool_outputs`). Any other value
    is the result verbatim.
    """
    if value is None:
        return None, None
    llama_index = llama_index_tool_output(value)
    if llama_index is not None:
        return llama_index, None
    decoded = decode_json(value)
    is_message = isinstance(decoded, Mapping) and decoded.get("type") == "tool"
    data = decoded.get("data") if is_message else None
    if not isinstance(data, Mapping) or "content" not in data:
        return str(value), None
    return text_of(data["content"]), _str(data.get("tool_call_id"))


def _empty_result(attrs: Mapping[str, Any]) -> bool:
    """Whether a retriever span recorded an empty result: ``output.value`` is the JSON ``[]``.

    A retriever span without ``retrieval.documents`` whose output is a non-empty list (LlamaIndex's
    inner ``_retrieve`` span) or absent says nothing about what was retrieved.
    """
    return bool(decode_json(attrs.get(k.OUTPUT_VALUE)) == [])


def _documents(attrs: Mapping[str, Any]) -> tuple[RetrievedDocument, ...]:
    return tuple(_document(d) for d in indexed(attrs, k.RETRIEVAL_DOCUMENTS))


def _document(flat: Mapping[str, Any]) -> RetrievedDocument:
    metadata = decode_json(flat.get(k.DOCUMENT_METADATA))
    score = flat.get(k.DOCUMENT_SCORE)
    return RetrievedDocument(
        content=str(flat.get(k.DOCUMENT_CONTENT, "")),
        id=_str(flat.get(k.DOCUMENT_ID)),
        score=float(score)
        if isinstance(score, int | float) and not isinstance(score, bool)
        else None,
        metadata={str(key): to_json_value(v) for key, v in metadata.items()}
        if isinstance(metadata, Mapping)
        else {},
    )


def _agent_name(span: SpanRecord, kind: SpanKind, smol: bool = False) -> str | None:
    name = _str(span.attributes.get(k.AGENT_NAME)) or _langgraph_agent(span.attributes)
    if name or kind != "agent":
        return name
    if smol:  # smolagents names its agent span "<agent name>.run"
        return _str(span.name.removesuffix(".run"))
    # AutoGen (openinference-instrumentation-autogen-agentchat) names the AGENT span
    # "<agent>.on_messages_stream" and gives the agent's name as graph.node.id only
    attrs = span.attributes
    node = _str(attrs.get(k.GRAPH_NODE_NAME)) or _str(attrs.get(k.GRAPH_NODE_ID))
    return node or _str(span.name)


def _langgraph_agent(attrs: Mapping[str, Any]) -> str | None:
    """The LangGraph (sub)graph a span runs in, from its LangChain ``metadata``.

    openinference-instrumentation-langchain writes the run's metadata as JSON; LangGraph puts
    ``checkpoint_ns`` there: ``"<graph>:<task id>"`` inside a subgraph (``weather_agent``,
    ``supervisor``: the names ``create_react_agent(name=...)`` and ``create_supervisor`` give
    their graphs), empty at the top level. The span's node name (``agent``, the prebuilt ReAct
    agent's model node) names no agent; the graph does.
    """
    raw = attrs.get(k.METADATA)
    if not isinstance(raw, str) or k.CHECKPOINT_NS not in raw:
        return None
    metadata = decode_json(raw)
    namespace = metadata.get(k.CHECKPOINT_NS) if isinstance(metadata, Mapping) else None
    if not isinstance(namespace, str) or not namespace:
        return None
    graph = namespace.split("|")[-1].partition(":")[0]
    return graph or None


def _tokens(span: SpanRecord, key: str) -> int | None:
    value = span.attributes.get(key)
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool):
        return value
    if isinstance(value, float | str) and str(value).replace(".", "", 1).isdigit():
        return int(float(value))
    raise InvalidSpanError(
        f"{key} must be an integer token count, got {brief(value)}",
        trace_id=span.trace_id,
        span_id=span.span_id,
    )


def _str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)
