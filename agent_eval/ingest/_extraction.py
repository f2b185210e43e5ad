"""What a semantic convention reads out of one span: :class:`SpanExtraction`.

A convention mapper turns a :class:`~agent_eval.ingest._spans.SpanRecord` (plus the GenAI log
events joined to it) into one ``SpanExtraction``; assembly then orders, deduplicates and pairs
extractions into an :class:`~agent_eval._trace.AgentTrace`. Messages are already our own
message types; ``span_ids`` on them are filled in by assembly.
"""

from __future__ import annotations

from dataclasses import dataclass, fields
from typing import Literal, TypeAlias

from pydantic import JsonValue

from agent_eval._trace import Message, RetrievedDocument

__all__ = ["SpanExtraction", "SpanKind", "ToolExecution", "new_span_extraction"]

SpanKind: TypeAlias = Literal["llm", "tool", "agent", "retriever", "chain", "other"]
"""The role a span plays in an agent run (OpenInference span kinds, GenAI operation names)."""


@dataclass(frozen=True, slots=True, kw_only=True)
class ToolExecution:
    """A tool run recorded on its own span (GenAI ``execute_tool``, OpenInference TOOL).

    Attributes:
        name: The tool name.
        call_id: The tool-call id the run answers, when recorded.
        arguments: The arguments as parsed JSON; ``None`` when they did not parse (see
            ``raw_arguments``) or were not recorded.
        raw_arguments: The argument string verbatim, kept only when it did not parse as JSON.
        result: The tool output as text, when recorded.

    """

    name: str | None = None
    call_id: str | None = None
    arguments: JsonValue = None
    raw_arguments: str | None = None
    result: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SpanExtraction:
    """Everything one convention read from one span.

    Attributes:
        convention: The convention's registered name (``"genai"``, ``"openinference"``...).
        kind: What the span is.
        input_messages: The messages the LLM call was sent (often the replayed history,
            system instructions first).
        output_messages: The messages it returned (choices).
        tool: The tool run, for tool spans.
        agent_name: The agent the span belongs to (``gen_ai.agent.name``...), when recorded.
        conversation_id: ``gen_ai.conversation.id`` / ``session.id``..., when recorded.
        model: Response model, else request model, when recorded.
        input_tokens / output_tokens: The agent's token usage on this call, when recorded.
        retrieval_query / documents: For retriever spans.
        ignored_reason: Why nothing usable was found (the span accounting's reason), for
            extractions that carry nothing.
        notes: What the convention had to leave out of an otherwise usable span (e.g. a message
            with a role it does not know), one sentence each; they become the trace's notes.
        completion: The text a completions-API call returned, for an LLM span sent prompts
            instead of messages (OpenInference ``llm.prompts``, the reply in ``output.value``):
            the call's recorded output, never a conversation message (such calls are a
            framework's internal steps, e.g. LlamaIndex's condense-question call).
        turn: ``(user message, reply)`` read from a root chain or agent span's input and output
            (OpenInference ``input.value``/``output.value``), used only for a turn no LLM call
            of its trace answered (LlamaIndex answers "Empty Response" itself when the
            retriever returns nothing).
        retrieved_nothing: A retriever span that ran and recorded an empty result (OpenInference
            ``output.value`` ``[]`` and no ``retrieval.documents``): a retrieval with no
            documents, kept so the turn says its retriever returned nothing.
        text_hint: For a span of an instrumentation that never records message text (AutoGen's
            own tracing; Haystack's OpenInference component spans): what the span is and which
            instrumentation records the text, said when its conversation has none.

    """

    convention: str
    kind: SpanKind
    input_messages: tuple[Message, ...] = ()
    output_messages: tuple[Message, ...] = ()
    tool: ToolExecution | None = None
    agent_name: str | None = None
    conversation_id: str | None = None
    model: str | None = None
    input_tokens: int | None = None
    output_tokens: int | None = None
    retrieval_query: str | None = None
    documents: tuple[RetrievedDocument, ...] = ()
    ignored_reason: str | None = None
    notes: tuple[str, ...] = ()
    completion: str | None = None
    turn: tuple[str, str] | None = None
    retrieved_nothing: bool = False
    text_hint: str | None = None

    @property
    def is_empty(self) -> bool:
        """True when the extraction carries no message, tool run, document or empty retrieval."""
        return not (
            self.input_messages
            or self.output_messages
            or self.tool
            or self.documents
            or self.retrieved_nothing
        )


_new = object.__new__
(
    _set_convention,
    _set_kind,
    _set_input_messages,
    _set_output_messages,
    _set_tool,
    _set_agent_name,
    _set_conversation_id,
    _set_model,
    _set_input_tokens,
    _set_output_tokens,
    _set_retrieval_query,
    _set_documents,
    _set_ignored_reason,
    _set_notes,
    _set_completion,
    _set_turn,
    _set_retrieved_nothing,
    _set_text_hint,
) = (getattr(SpanExtraction, f.name).__set__ for f in fields(SpanExtraction))


def new_span_extraction(  # noqa: PLR0917  (one argument per field, positional for speed)
    convention: str,
    kind: SpanKind,
    input_messages: tuple[Message, ...],
    output_messages: tuple[Message, ...],
    tool: ToolExecution | None,
    agent_name: str | None,
    conversation_id: str | None,
    model: str | None,
    input_tokens: int | None,
    output_tokens: int | None,
    retrieval_query: str | None,
    documents: tuple[RetrievedDocument, ...],
    ignored_reason: str | None,
    notes: tuple[str, ...],
    completion: str | None = None,
    turn: tuple[str, str] | None = None,
    retrieved_nothing: bool = False,
    text_hint: str | None = None,
) -> SpanExtraction:
    """A :class:`SpanExtraction` equal to ``SpanExtraction(...)`` of the same fields, built faster.

    For a convention that builds one per span: the frozen dataclass ``__init__`` parses keyword
    arguments and sets each of the 18 slots through ``object.__setattr__``, about 2.5x the cost
    of setting the slots directly. The arguments are the fields in declaration order; no checks
    are made (the types are the caller's to get right, as with the plain constructor).
    """
    extraction = _new(SpanExtraction)
    _set_convention(extraction, convention)
    _set_kind(extraction, kind)
    _set_input_messages(extraction, input_messages)
    _set_output_messages(extraction, output_messages)
    _set_tool(extraction, tool)
    _set_agent_name(extraction, agent_name)
    _set_conversation_id(extraction, conversation_id)
    _set_model(extraction, model)
    _set_input_tokens(extraction, input_tokens)
    _set_output_tokens(extraction, output_tokens)
    _set_retrieval_query(extraction, retrieval_query)
    _set_documents(extraction, documents)
    _set_ignored_reason(extraction, ignored_reason)
    _set_notes(extraction, notes)
    _set_completion(extraction, completion)
    _set_turn(extraction, turn)
    _set_retrieved_nothing(extraction, retrieved_nothing)
    _set_text_hint(extraction, text_hint)
    return extraction
