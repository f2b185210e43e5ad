"""Attribute keys of the OpenInference semantic conventions (Arize, spec as of 2025, semconv 0.1.x).

Source: https://arize-ai.github.io/openinference/spec/ (semantic_conventions.md). Lists are
flattened into indexed keys: ``llm.input_messages.{i}.message.role``,
``llm.input_messages.{i}.message.contents.{k}.message_content.text``,
``llm.input_messages.{i}.message.tool_calls.{j}.tool_call.function.arguments``,
``retrieval.documents.{i}.document.content``...
"""

from __future__ import annotations

from typing import Final

SPAN_KIND: Final = "openinference.span.kind"
SESSION_ID: Final = "session.id"
USER_ID: Final = "user.id"
INPUT_VALUE: Final = "input.value"
INPUT_MIME_TYPE: Final = "input.mime_type"
OUTPUT_VALUE: Final = "output.value"
OUTPUT_MIME_TYPE: Final = "output.mime_type"
JSON_MIME_TYPE: Final = "application/json"
REDACTED_VALUE: Final = "__REDACTED__"
"""What openinference-instrumentation writes in place of a value its ``OPENINFERENCE_HIDE_*``
settings hide (``openinference.instrumentation.config.REDACTED_VALUE``)."""

LLM_PREFIX: Final = "llm."
LLM_MODEL_NAME: Final = "llm.model_name"
LLM_INPUT_MESSAGES: Final = "llm.input_messages"
LLM_OUTPUT_MESSAGES: Final = "llm.output_messages"
LLM_PROMPTS: Final = "llm.prompts"
"""The prompts sent to a completions API (OpenAI legacy completions; LlamaIndex ``LLM.complete``):
a list of strings, or flattened ``llm.prompts.{i}.prompt.text``. Such a call's reply is the
span's ``output.value`` text (or a JSON completion, ``choices[0].text``), not output messages."""
LLM_TOKEN_COUNT_PROMPT: Final = "llm.token_count.prompt"
LLM_TOKEN_COUNT_COMPLETION: Final = "llm.token_count.completion"

# Within one flattened message (after "llm.input_messages.{i}.")
MESSAGE_ROLE: Final = "message.role"
MESSAGE_CONTENT: Final = "message.content"
MESSAGE_CONTENTS: Final = "message.contents"
MESSAGE_NAME: Final = "message.name"
MESSAGE_TOOL_CALL_ID: Final = "message.tool_call_id"
MESSAGE_TOOL_CALLS: Final = "message.tool_calls"
MESSAGE_FUNCTION_CALL_NAME: Final = "message.function_call_name"
MESSAGE_FUNCTION_CALL_ARGUMENTS: Final = "message.function_call_arguments_json"
FUNCTION_RESULT_PREFIX: Final = "function."
"""openinference-instrumentation-autogen-agentchat (0.1.x) writes an AutoGen
``FunctionExecutionResultMessage`` as role ``function`` and, per result ``k``, the key
``function.{k}`` holding the JSON ``{"name", "content", "call_id", "is_error"}``."""
CONTENT_TYPE: Final = "message_content.type"
CONTENT_TEXT: Final = "message_content.text"
CONTENT_IMAGE_URL: Final = "message_content.image.image.url"
TOOL_CALL_ID: Final = "tool_call.id"
TOOL_CALL_FUNCTION_NAME: Final = "tool_call.function.name"
TOOL_CALL_FUNCTION_ARGUMENTS: Final = "tool_call.function.arguments"

# TOOL spans
TOOL_NAME: Final = "tool.name"
TOOL_PARAMETERS: Final = "tool.parameters"
"""The tool's parameter schema (not the call's arguments)."""

HANDOFF_SPAN_PREFIX: Final = "handoff to "
"""openinference-instrumentation-openai-agents names the TOOL span of an Agents SDK handoff
``handoff to <agent>`` (``input.value`` the agent handing off, ``output.value`` the one taking
over, no ``tool.name``): the SDK records no tool run there, the model's transfer call and its
result are in the LLM spans."""

# RETRIEVER spans
RETRIEVAL_DOCUMENTS: Final = "retrieval.documents"
DOCUMENT_CONTENT: Final = "document.content"
DOCUMENT_ID: Final = "document.id"
DOCUMENT_SCORE: Final = "document.score"
DOCUMENT_METADATA: Final = "document.metadata"

# The turn a root CHAIN/AGENT span records, as openinference-instrumentation-llama-index writes
# it: ``input.value`` the JSON of the instrumented method's bound arguments
# (``BaseChatEngine.chat(message)``, ``BaseQueryEngine.query(str_or_query_bundle)``),
# ``output.value`` the JSON of the returned ``AgentChatResponse``/``Response`` (``response``).
# A plain-text value is the text itself.
TURN_INPUT_KEYS: Final = ("message", "str_or_query_bundle", "query_str")
TURN_OUTPUT_KEYS: Final = ("response",)

# Agents and graphs
AGENT_NAME: Final = "agent.name"
GRAPH_NODE_ID: Final = "graph.node.id"
GRAPH_NODE_NAME: Final = "graph.node.name"
GRAPH_NODE_PARENT_ID: Final = "graph.node.parent_id"
METADATA: Final = "metadata"
"""The run's metadata as JSON (openinference-instrumentation-langchain)."""
CHECKPOINT_NS: Final = "checkpoint_ns"
"""LangGraph's key in that metadata: ``"<graph>:<task id>"`` inside a subgraph (nested ones
joined by ``|``), empty at the top level."""

SPAN_KINDS: Final = {
    "LLM": "llm",
    "TOOL": "tool",
    "AGENT": "agent",
    "CHAIN": "chain",
    "RETRIEVER": "retriever",
    "EMBEDDING": "other",
    "RERANKER": "retriever",
    "GUARDRAIL": "other",
    "EVALUATOR": "other",
    "PROMPT": "other",
    "UNKNOWN": "other",
}
"""``openinference.span.kind`` value -> :data:`~agent_eval.ingest._extraction.SpanKind`."""
DETECT_PREFIXES: Final = (
    "openinference.",
    "llm.input_messages",
    "llm.output_messages",
    "llm.model_name",
    "retrieval.documents",
)
