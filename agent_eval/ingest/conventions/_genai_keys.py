"""Attribute keys, event names and values of the OpenTelemetry GenAI semantic conventions.

Followed versions (https://opentelemetry.io/docs/specs/semconv/gen-ai/):

- v1.26: span events ``gen_ai.content.prompt`` / ``gen_ai.content.completion`` carrying the
  attributes ``gen_ai.prompt`` / ``gen_ai.completion`` (JSON strings of message lists); some
  libraries set these two attributes on the span itself.
- v1.28-v1.36: one event per message (``gen_ai.system.message``, ``gen_ai.user.message``,
  ``gen_ai.assistant.message``, ``gen_ai.tool.message``, ``gen_ai.choice``) whose body holds
  ``content``, ``tool_calls``, ``id`` (tool messages), ``message``/``index``/``finish_reason``
  (choices). They are OTLP log records joined to the span by trace and span id; some libraries
  write them as span events with the body fields as attributes.
- v1.37+: ``gen_ai.input.messages``, ``gen_ai.output.messages``, ``gen_ai.system_instructions``
  (JSON; messages are ``{"role", "parts": [...]}`` with part types ``text``, ``tool_call``,
  ``tool_call_response``, ``reasoning``, others kept opaque), on the span or on a
  ``gen_ai.client.inference.operation.details`` event (span event or log record).
- Spans of every version: ``gen_ai.operation.name`` (``chat``, ``execute_tool``,
  ``invoke_agent``...), ``execute_tool`` attributes ``gen_ai.tool.*``, ``gen_ai.agent.name``,
  ``gen_ai.conversation.id``, usage ``gen_ai.usage.input_tokens`` / ``output_tokens`` (before
  v1.27: ``prompt_tokens`` / ``completion_tokens``), ``error.type``.
"""

from __future__ import annotations

from typing import Final

PREFIX: Final = "gen_ai."

# Operation and identity
OPERATION_NAME: Final = "gen_ai.operation.name"
SYSTEM: Final = "gen_ai.system"
PROVIDER_NAME: Final = "gen_ai.provider.name"
REQUEST_MODEL: Final = "gen_ai.request.model"
RESPONSE_MODEL: Final = "gen_ai.response.model"
RESPONSE_ID: Final = "gen_ai.response.id"
"""The provider's id of the completion (also written by OpenLLMetry)."""
CONVERSATION_ID: Final = "gen_ai.conversation.id"
CONVERSATION_ID_FALLBACKS: Final = (
    "session.id",
    "langfuse.session.id",
    "conversation.id",
    "thread.id",
)
"""Not GenAI: conversation-id keys frameworks write beside (or instead of) the GenAI one, in
order of preference: ``session.id`` (OpenInference, Strands ``trace_attributes``, OpenLLMetry
association properties), Langfuse's ``langfuse.session.id``, and the generic
``conversation.id`` / ``thread.id``."""
AGENT_NAME: Final = "gen_ai.agent.name"
AGENT_ID: Final = "gen_ai.agent.id"
ERROR_TYPE: Final = "error.type"

# Usage
USAGE_INPUT_TOKENS: Final = "gen_ai.usage.input_tokens"
USAGE_OUTPUT_TOKENS: Final = "gen_ai.usage.output_tokens"
USAGE_PROMPT_TOKENS: Final = "gen_ai.usage.prompt_tokens"
"""Before v1.27."""
USAGE_COMPLETION_TOKENS: Final = "gen_ai.usage.completion_tokens"
"""Before v1.27."""

# v1.37+ message attributes
INPUT_MESSAGES: Final = "gen_ai.input.messages"
OUTPUT_MESSAGES: Final = "gen_ai.output.messages"
SYSTEM_INSTRUCTIONS: Final = "gen_ai.system_instructions"
INFERENCE_DETAILS_EVENT: Final = "gen_ai.client.inference.operation.details"
"""v1.37+ opt-in event carrying the three message attributes above (span event or log record)."""

# v1.26 prompt/completion events and attributes
CONTENT_PROMPT_EVENT: Final = "gen_ai.content.prompt"
CONTENT_COMPLETION_EVENT: Final = "gen_ai.content.completion"
PROMPT: Final = "gen_ai.prompt"
COMPLETION: Final = "gen_ai.completion"

# v1.28-v1.36 per-message events
SYSTEM_MESSAGE_EVENT: Final = "gen_ai.system.message"
USER_MESSAGE_EVENT: Final = "gen_ai.user.message"
ASSISTANT_MESSAGE_EVENT: Final = "gen_ai.assistant.message"
TOOL_MESSAGE_EVENT: Final = "gen_ai.tool.message"
CHOICE_EVENT: Final = "gen_ai.choice"
MESSAGE_EVENT_ROLES: Final = {
    SYSTEM_MESSAGE_EVENT: "system",
    USER_MESSAGE_EVENT: "user",
    ASSISTANT_MESSAGE_EVENT: "assistant",
    TOOL_MESSAGE_EVENT: "tool",
}
EVENT_CONTENT_ATTRIBUTE: Final = "gen_ai.event.content"
"""Span-event form used by some libraries: the whole event body as a JSON string attribute."""
BODY_MESSAGE: Final = "message"
BODY_INDEX: Final = "index"

# execute_tool spans
TOOL_NAME: Final = "gen_ai.tool.name"
TOOL_CALL_ID: Final = "gen_ai.tool.call.id"
TOOL_CALL_ARGUMENTS: Final = "gen_ai.tool.call.arguments"
TOOL_CALL_RESULT: Final = "gen_ai.tool.call.result"
TOOL_INPUT_FALLBACK: Final = "input"
"""Not GenAI: generic ``input``/``output`` tool-span keys (OpenInference GenAI fixtures)."""
TOOL_OUTPUT_FALLBACK: Final = "output"

# gen_ai.operation.name values -> span role
LLM_OPERATIONS: Final = frozenset(
    {"chat", "text_completion", "generate_content", "completion", "responses"}
)
TOOL_OPERATIONS: Final = frozenset({"execute_tool"})
AGENT_OPERATIONS: Final = frozenset({"invoke_agent", "create_agent"})
OTHER_OPERATIONS: Final = frozenset({"embeddings"})

LITELLM_FUNCTION_CALL_NAME: Final = "gen_ai.completion.{}.function_call.name"
"""LiteLLM's OpenTelemetry callback (litellm 1.7x-1.11x): the name of the reply's i-th tool call
(``.format(i)``); its ``gen_ai.output.messages`` message holds no part for the calls."""
LITELLM_FUNCTION_CALL_ARGUMENTS: Final = "gen_ai.completion.{}.function_call.arguments"
"""The JSON arguments of that call (no call id is written)."""
