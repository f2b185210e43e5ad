"""``json@1``: the messages as canonical JSON.

A JSON array with one object per message, in conversation order, serialized by Python's
:func:`json.dumps` with ``sort_keys=True`` (at every depth, tool arguments included),
``indent=2``, ``ensure_ascii=False`` and no trailing newline. Keys per message:

- every message: ``role``, ``content``; ``parts`` (``[{"type", "data"}]``) when it has any;
- assistant: ``agent_name`` when known; ``tool_calls`` when the message has a tool-call list
  (an empty list stays ``[]``), each call ``{"id"?, "name", "arguments"}``, or
  ``{"id"?, "name", "raw_arguments"}`` when the arguments were not valid JSON;
- tool: ``tool_call_id`` and ``tool_name`` when known.

System messages are included. Retrievals, reasoning, models, span ids and metadata are not.
Floats use Python's shortest round-trip ``repr``, the same on every platform.
"""

from __future__ import annotations

import json

from pydantic import JsonValue

from agent_eval import AgentTrace, AssistantMessage, Message, ToolCall, ToolMessage
from agent_eval.formatting import Formatter, NoParams

__all__ = ["JsonV1"]


def _call(call: ToolCall) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = (
        {"name": call.name}
        if call.id is None
        else {
            "id": call.id,
            "name": call.name,
        }
    )
    if call.arguments is None and call.raw_arguments is not None:
        out["raw_arguments"] = call.raw_arguments
    else:
        out["arguments"] = call.arguments
    return out


def _message(message: Message) -> dict[str, JsonValue]:
    out: dict[str, JsonValue] = {"role": message.role, "content": message.content}
    if message.parts:
        out["parts"] = [{"type": part.type, "data": part.data} for part in message.parts]
    if isinstance(message, AssistantMessage):
        if message.agent_name is not None:
            out["agent_name"] = message.agent_name
        if message.tool_calls is not None:
            out["tool_calls"] = [_call(call) for call in message.tool_calls]
    if isinstance(message, ToolMessage):
        if message.tool_call_id is not None:
            out["tool_call_id"] = message.tool_call_id
        if message.tool_name is not None:
            out["tool_name"] = message.tool_name
    return out


class JsonV1(Formatter[NoParams]):
    """The messages as sorted-key JSON (see the module docstring)."""

    name = "json"
    version = 1
    description = "canonical JSON array of the messages (sorted keys, indent 2)"

    def render(self, trace: AgentTrace) -> str:
        """Render the messages of ``trace`` as canonical JSON."""
        messages = [_message(message) for message in trace.messages]
        return json.dumps(messages, sort_keys=True, indent=2, ensure_ascii=False)
