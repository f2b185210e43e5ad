r"""``ragas-pretty@1``: the text Ragas' ``MultiTurnSample.pretty_repr()`` builds (0.2.15-0.4.3).

Byte-identical to Ragas for every conversation Ragas can hold, so verdicts are comparable with
Ragas users'. The format (see the project's ragas-pretty spec):

- user -> ``Human: {content}``; tool -> ``ToolOutput: {content}`` (no tool name, no call id);
- assistant -> ``AI: {content}`` only when the content is not empty, then, when the message has a
  tool-call list (even an empty one), ``Tools:`` and one line ``  {name}: {args}`` per call, where
  ``args`` is written the way Python's ``str()`` writes the argument dict; these lines joined by
  ``\n`` (an assistant message with empty content and no list renders as ``""``);
- system messages, agent names, reasoning, retrievals and metadata are dropped;
- message renderings joined by a single ``\n``: no trailing newline unless the last rendering
  is empty.

Arguments Ragas cannot hold are handled deterministically: arguments that were not valid JSON
(``ToolCall.raw_arguments``) render as ``{'raw_arguments': '<the string verbatim>'}``, the dict a
converter wrapping the string would pass to Ragas; valid JSON that is not an object (a list,
string or number) renders as Python's ``str()`` of that value; no recorded arguments render as
``{}``. ``str()`` of the parsed JSON is the same on every platform (shortest float ``repr``;
printable non-ASCII characters kept, non-printable ones escaped, by Python's Unicode database,
exactly as in Ragas).
"""

from __future__ import annotations

from agent_eval import AgentTrace, AssistantMessage, Message, ToolCall, ToolMessage
from agent_eval.formatting import Formatter, NoParams

__all__ = ["RagasPrettyV1"]


def _arguments(call: ToolCall) -> str:
    if call.raw_arguments is not None and call.arguments is None:
        return str({"raw_arguments": call.raw_arguments})
    if call.arguments is None:
        return "{}"
    return str(call.arguments)


def _assistant(message: AssistantMessage) -> str:
    lines = [f"AI: {message.content}"] if message.content != "" else []
    if message.tool_calls is not None:
        lines.append("Tools:")
        lines.extend(f"  {call.name}: {_arguments(call)}" for call in message.tool_calls)
    return "\n".join(lines)


def _message(message: Message) -> str | None:
    if isinstance(message, AssistantMessage):
        return _assistant(message)
    if isinstance(message, ToolMessage):
        return f"ToolOutput: {message.content}"
    if message.role == "user":
        return f"Human: {message.content}"
    return None  # system messages are not part of a Ragas sample


class RagasPrettyV1(Formatter[NoParams]):
    """Ragas' ``MultiTurnSample.pretty_repr()``, byte for byte (see the module docstring)."""

    name = "ragas-pretty"
    version = 1
    description = (
        "Ragas MultiTurnSample.pretty_repr(), byte-identical (Ragas 0.2.15-0.4.3); "
        "not hardened: content can forge turns (Ragas parity only)"
    )

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` the way Ragas renders the equivalent ``MultiTurnSample``."""
        rendered = (_message(message) for message in trace.messages)
        return "\n".join(text for text in rendered if text is not None)
