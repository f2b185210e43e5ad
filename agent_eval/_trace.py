"""The normalized conversation: :class:`AgentTrace` and its message types.

Everything past ingest sees only these frozen pydantic models, never a foreign span type.
One ``AgentTrace`` is one conversation: its messages in order, deduplicated across the LLM calls
that replayed them, with tool calls paired to their results, the agent that spoke each assistant
turn, retrieved documents at the point they were retrieved, the agent's own token usage per
model, span errors, and where it all came from (trace ids, span ids, container, conventions).

The JSON form (``model_dump_json`` / ``AgentTrace.model_validate_json``) round-trips losslessly
and carries ``schema_version``; a reader meeting a newer schema version fails with a clear error.
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from pydantic import (
    BaseModel,
    ConfigDict,
    Field,
    JsonValue,
    SerializerFunctionWrapHandler,
    model_serializer,
    model_validator,
)

__all__ = [
    "SCHEMA_VERSION",
    "AgentTrace",
    "AssistantMessage",
    "Message",
    "ModelUsage",
    "OpaquePart",
    "Retrieval",
    "RetrievedDocument",
    "SourceInfo",
    "SpanErrorInfo",
    "SpanRef",
    "SpanTiming",
    "SystemMessage",
    "ToolCall",
    "ToolMessage",
    "UserMessage",
]

SCHEMA_VERSION = 1
"""Version of the AgentTrace JSON schema; bumped on any change that is not purely additive."""


class _Frozen(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class ToolCall(_Frozen):
    """A tool call requested by an assistant message.

    Attributes:
        id: The call id that the tool result refers back to; ``None`` when the source had none.
        name: The tool (function) name.
        arguments: The arguments as parsed JSON (usually an object). ``None`` when the source
            string was not valid JSON; then ``raw_arguments`` holds it verbatim.
        raw_arguments: The argument string exactly as recorded, kept only when it did not parse
            as JSON.

    """

    id: str | None = None
    name: str
    arguments: JsonValue = None
    raw_arguments: str | None = None


class OpaquePart(_Frozen):
    """A message part agent-eval does not interpret (image, file, audio, custom), kept as is.

    Attributes:
        type: The part's type as the source named it (e.g. ``"image"``, ``"blob"``).
        data: The part's JSON, verbatim.

    """

    type: str
    data: JsonValue = None


class _MessageBase(_Frozen):
    content: str = ""
    span_ids: tuple[str, ...] = ()
    """Ids (16 hex) of the spans this message was read from, first sighting first."""
    parts: tuple[OpaquePart, ...] = ()
    """Parts other than text, tool calls and reasoning, kept verbatim."""


class SystemMessage(_MessageBase):
    """System or developer instructions."""

    role: Literal["system"] = "system"


class UserMessage(_MessageBase):
    """A message from the user (or a simulated user)."""

    role: Literal["user"] = "user"


class AssistantMessage(_MessageBase):
    """A message produced by the agent's model.

    Attributes:
        tool_calls: ``None`` when the message carried no tool-call list; an empty tuple when the
            list was present but empty (renderers such as ``ragas-pretty@1`` tell the two apart).
        agent_name: The agent that produced it in a multi-agent trace, when known.
        model: The response model name, when known.
        reasoning: Reasoning/thinking text the model exposed, when recorded.

    """

    role: Literal["assistant"] = "assistant"
    tool_calls: tuple[ToolCall, ...] | None = None
    agent_name: str | None = None
    model: str | None = None
    reasoning: str | None = None


class ToolMessage(_MessageBase):
    """The result of a tool call.

    Attributes:
        tool_call_id: The id of the call this answers, when known.
        tool_name: The tool's name, when known.
        is_error: ``True`` when the source flagged the result as an error (tau2-bench
            ``error``, an ``is_error`` key, tau-bench's ``"Error: ..."`` observations),
            ``False`` when it flagged it as a success, ``None`` when it said nothing.

    """

    role: Literal["tool"] = "tool"
    tool_call_id: str | None = None
    tool_name: str | None = None
    is_error: bool | None = None


Message = Annotated[
    SystemMessage | UserMessage | AssistantMessage | ToolMessage, Field(discriminator="role")
]
"""Any message, discriminated by ``role``."""


class RetrievedDocument(_Frozen):
    """One document returned by a retriever.

    Attributes:
        content: The document text.
        id: The document id, when recorded.
        score: The retriever's relevance score (unitless, retriever-specific), when recorded.
        metadata: Further document metadata, verbatim.

    """

    content: str = ""
    id: str | None = None
    score: float | None = None
    metadata: dict[str, JsonValue] = Field(default_factory=dict)


class Retrieval(_Frozen):
    """A retrieval step, attached to the point in the conversation where it happened.

    Attributes:
        after_message: Number of messages of ``AgentTrace.messages`` that precede the retrieval
            (0 = before the first message).
        query: The retrieval query, when recorded.
        documents: The documents returned, in rank order.
        span_id: The retriever span (16 hex), when the retrieval came from a span.

    """

    after_message: int = Field(ge=0)
    query: str | None = None
    documents: tuple[RetrievedDocument, ...] = ()
    span_id: str | None = None


class ModelUsage(_Frozen):
    """The agent's own token usage for one model, summed over its LLM calls.

    Attributes:
        model: Model name (request or response model as recorded).
        input_tokens: Prompt tokens, summed.
        output_tokens: Completion tokens, summed.
        calls: Number of LLM calls counted.

    """

    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    calls: int = 0


class SpanErrorInfo(_Frozen):
    """An error recorded on a span (status ERROR or an exception event).

    Attributes:
        trace_id: 32 hex characters.
        span_id: 16 hex characters.
        span_name: The span's name.
        error_type: ``exception.type`` or ``error.type`` when recorded.
        message: The status message or ``exception.message``.
        tool_call_id: The tool call the span ran, for a tool span (``execute_tool``, TOOL)
            whose call id was recorded.
        tool_name: The tool the span ran, for a tool span.

    """

    trace_id: str
    span_id: str
    span_name: str = ""
    error_type: str | None = None
    message: str = ""
    tool_call_id: str | None = None
    tool_name: str | None = None


class SpanRef(_Frozen):
    """A span named by its ids: where a conversation-level verdict belongs.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters.
        name: The span's name (``invoke_agent booking``, ``AgentExecutor``...).

    """

    trace_id: str
    span_id: str
    name: str = ""


class SpanTiming(_Frozen):
    """One span of the agent's run with its times: a step of the conversation's trajectory.

    Read from the span's own start and end times (OTLP ``startTimeUnixNano`` /
    ``endTimeUnixNano``). Only for reports: no formatter renders it, and no metric reads it.
    Fields left unset are left out of the JSON form.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters.
        parent_span_id: The parent span (16 hex), when it had one.
        kind: What the span is: ``llm`` (a model call), ``tool`` (a tool run), ``agent`` (an
            agent invocation), ``retriever``, ``chain`` or ``other`` (OpenInference span kinds,
            GenAI operation names).
        name: The span's name.
        start_ns / end_ns: Unix nanoseconds; 0 when the span did not record it.
        agent_name: The agent the span belongs to (its own, or its nearest ancestor's).
        model: The model of an LLM call, when recorded.
        tool_name: The tool of a tool run.
        tool_call_id: The tool call a tool run answers, when recorded.
        input_tokens / output_tokens: The LLM call's usage, when recorded.

    """

    trace_id: str
    span_id: str
    parent_span_id: str | None = None
    kind: str = "other"
    name: str = ""
    start_ns: int = 0
    end_ns: int = 0
    agent_name: str | None = None
    model: str | None = None
    tool_name: str | None = None
    tool_call_id: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The JSON form without the fields left ``None`` (one line per step stays short)."""
        data = handler(self)
        if isinstance(data, dict):
            return {k: v for k, v in data.items() if v is not None}
        return data

    @property
    def duration_ms(self) -> float | None:
        """``end_ns - start_ns`` in milliseconds; ``None`` when either time is unknown."""
        if not self.start_ns or not self.end_ns or self.end_ns < self.start_ns:
            return None
        return (self.end_ns - self.start_ns) / 1e6


class SourceInfo(_Frozen):
    """Where a conversation was read from.

    Attributes:
        container: The container name (e.g. ``"otlp-json"``, ``"tau-bench"``).
        conventions: The semantic-convention families its messages were read with.
        files: The input files, as given.

    """

    container: str
    conventions: tuple[str, ...] = ()
    files: tuple[str, ...] = ()


class AgentTrace(_Frozen):
    """One normalized multi-turn conversation.

    Attributes:
        schema_version: :data:`SCHEMA_VERSION` of the model that wrote it.
        conversation_id: ``gen_ai.conversation.id`` / ``session.id`` when present, else the trace
            id, else the dataset's own record id.
        trace_ids: The traces (32 hex each) the conversation was assembled from, in first-seen
            order; empty for chat logs that never were spans.
        messages: The deduplicated transcript, in conversation order.
        retrievals: Retrieval steps with their documents.
        usage: The agent's own token usage per model (not the judge's).
        errors: Errors recorded on the spans.
        source: The container, conventions and files it came from.
        reference: A reference goal (e.g. the task instruction), when the dataset has one.
        reference_tool_calls: The tool calls the agent was expected to make, in order
            (tau-bench ``info.task.actions``, tau2-bench's expected actions, the span
            attribute ``agent_eval.reference.tool_calls``); ``None`` when there is no
            reference, ``()`` when the reference is that no tool is called.
        labels: Ground-truth labels such as ``{"success": 1}`` or ``{"reward": 0.0}``.
        metadata: Other facts about the conversation (task id, trial...), verbatim.
        notes: What assembly had to guess (e.g. tool results paired by order, not by id).
        final_reply_missing: The span id of the conversation's last LLM call when that call
            recorded output tokens but no output content, so the transcript is known to stop
            short of the model's final reply (e.g. Traceloop's openai instrumentation in events
            mode with ``stream=True`` writes its ``gen_ai.choice`` log records without span
            context); ``None`` otherwise. The last call is the one whose reply would be the
            final assistant message: a completions-API call that recorded its reply
            (OpenInference ``llm.prompts``, e.g. LlamaIndex's condense-question step) is not,
            nor is any call before a turn read from a root span (answered without an LLM
            call). Judge metrics skip such a conversation's conversation unit and last turn
            (``final_reply_missing``). Left out of the JSON form when ``None``.
        root_spans: The span that stands for each trace of the conversation, in trace order:
            its outermost agent-invocation span (GenAI ``invoke_agent``, OpenInference
            ``AGENT``) when it has one, else its root span (no parent, or a parent that was
            never exported). Conversation-level verdicts are parented to these spans (OTel
            evaluation events, Phoenix annotations). Empty for chat logs; left out of the JSON
            form when empty.
        response_ids: ``{span id: gen_ai.response.id}`` of the LLM calls that recorded one
            (the provider's id of the completion), for the ``gen_ai.response.id`` of evaluation
            events. Left out of the JSON form when empty.
        spans: The spans of the agent's run with their times, in conversation order: the
            spans read (LLM calls, tool runs, retrievals), the agent invocations and each
            trace's root (:class:`SpanTiming`); the trajectory the HTML report draws. Empty
            for chat logs; left out of the JSON form when empty.

    """

    schema_version: int = SCHEMA_VERSION
    conversation_id: str
    trace_ids: tuple[str, ...] = ()
    messages: tuple[Message, ...] = ()
    retrievals: tuple[Retrieval, ...] = ()
    usage: tuple[ModelUsage, ...] = ()
    errors: tuple[SpanErrorInfo, ...] = ()
    source: SourceInfo = SourceInfo(container="python")
    reference: str | None = None
    reference_tool_calls: tuple[ToolCall, ...] | None = None
    labels: dict[str, JsonValue] = Field(default_factory=dict)
    metadata: dict[str, JsonValue] = Field(default_factory=dict)
    notes: tuple[str, ...] = ()
    final_reply_missing: str | None = None
    root_spans: tuple[SpanRef, ...] = ()
    response_ids: dict[str, str] = Field(default_factory=dict)
    spans: tuple[SpanTiming, ...] = ()

    @model_serializer(mode="wrap")
    def _omit_unset(self, handler: SerializerFunctionWrapHandler) -> Any:
        """The JSON form without the optional fields left unset (older output stays as it was)."""
        data = handler(self)
        if isinstance(data, dict):
            if data.get("final_reply_missing", "") is None:
                del data["final_reply_missing"]
            for name in ("root_spans", "response_ids", "spans"):
                if name in data and not data[name]:
                    del data[name]
        return data

    @model_validator(mode="before")
    @classmethod
    def _check_schema_version(cls, data: Any) -> Any:
        if isinstance(data, dict):
            version = data.get("schema_version", SCHEMA_VERSION)
            if isinstance(version, int) and version > SCHEMA_VERSION:
                raise ValueError(
                    f"AgentTrace schema_version {version} is newer than this agent-eval "
                    f"understands ({SCHEMA_VERSION}); upgrade otel-agent-eval"
                )
        return data

    @property
    def agent_names(self) -> tuple[str, ...]:
        """The distinct agent names of assistant messages, in order of first appearance."""
        seen: dict[str, None] = {}
        for message in self.messages:
            if isinstance(message, AssistantMessage) and message.agent_name:
                seen.setdefault(message.agent_name)
        return tuple(seen)
