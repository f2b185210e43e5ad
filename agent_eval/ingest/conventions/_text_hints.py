"""Instrumentations that never record message text, recognised by their spans.

Some instrumentations describe an agent's steps without ever writing what was said: no setting
turns their text on, so advice to set a content-capture variable would send the user after
something those libraries never read. A convention that recognises such a span sets
:attr:`~agent_eval.ingest._extraction.SpanExtraction.text_hint` to one of the sentences here,
which say what the spans are and which instrumentation records the text; ingest gives it as the
reason when the conversation has no message text (``no_message_content``).

- AutoGen's own OpenTelemetry tracing (``autogen-core`` 0.4-0.7, ``autogen_core._telemetry``):
  ``create_agent`` / ``invoke_agent`` / ``execute_tool`` spans with ``gen_ai.system`` =
  ``autogen`` and agent and tool names, ids and descriptions only.
- openinference-instrumentation-haystack's CHAIN spans of pipeline components: ``input.value``
  and ``output.value`` hold Python reprs of Haystack ``ChatMessage`` objects
  (``ChatMessage(_role=<ChatRole.USER: 'user'>, _content=[TextContent(...)], ...)``), not
  messages any convention can read.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any, Final

__all__ = [
    "AUTOGEN_SYSTEM",
    "AUTOGEN_TRACING_HINT",
    "HAYSTACK_CHAIN_HINT",
    "HAYSTACK_REPR_MARKER",
    "is_haystack_repr",
]

AUTOGEN_SYSTEM: Final = "autogen"
"""``gen_ai.system`` on the spans of AutoGen's own tracing (``GENAI_SYSTEM_AUTOGEN``)."""
AUTOGEN_TRACING_HINT: Final = (
    "the spans are AutoGen's own tracing (create_agent / invoke_agent / execute_tool, "
    "gen_ai.system 'autogen'), which records agent and tool names but never message text, "
    "whatever the environment says; add openinference-instrumentation-autogen-agentchat "
    "(AutogenAgentChatInstrumentor().instrument(tracer_provider=...)), whose LLM spans "
    "record the messages, and record again"
)
HAYSTACK_REPR_MARKER: Final = "ChatMessage(_role=<ChatRole."
"""How the Python repr of a Haystack ``ChatMessage`` starts (``haystack.dataclasses``)."""
HAYSTACK_CHAIN_HINT: Final = (
    "the spans are openinference-instrumentation-haystack's component (CHAIN) spans, whose "
    "input.value / output.value hold Python reprs of Haystack ChatMessage objects, not "
    "messages; the text is recorded by the LLM spans of the chat generator (an "
    "OpenAIChatGenerator, or another generator the instrumentation knows) or by the openai "
    "client's instrumentation (openinference-instrumentation-openai) beneath it: instrument "
    "that generator's client and record again"
)


def is_haystack_repr(attrs: Mapping[str, Any], keys: tuple[str, ...]) -> bool:
    """Whether any of ``keys`` holds text with a Haystack ``ChatMessage`` repr in it."""
    return any(
        isinstance(value := attrs.get(key), str) and HAYSTACK_REPR_MARKER in value for key in keys
    )
