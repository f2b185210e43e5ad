"""``transcript@1``: a readable, numbered transcript for judges.

Layout: messages numbered from 1 in the order shown, separated by one blank line, no trailing
newline. Each message is a header line then its content verbatim::

    [2] USER
    What's the weather in Paris?

    [3] ASSISTANT (agent: planner)
    -> tool call get_weather (call id: call_1) with arguments {"city": "Paris"}

    [4] TOOL RESULT from get_weather (call id: call_1)
    {"temp": 18}

- Headers: ``SYSTEM``, ``USER``, ``ASSISTANT`` (plus ``(agent: NAME)`` when known),
  ``TOOL RESULT from NAME (call id: ID)``; a result without a tool name takes the name of the
  call it answers, else ``unknown tool``; one without an id says ``(no call id)``.
- Tool calls: arguments as JSON (key order as recorded, non-ASCII kept, ``", "``/``": "``
  separators); arguments that were not valid JSON are shown verbatim after ``with arguments that
  are not valid JSON:``; none recorded: ``with no arguments``.
- Empty content with nothing else to show: ``(no content)``; non-text parts: ``(attachment: TYPE)``.
- Retrieved documents appear where they were retrieved, as ``-- retrieved N documents (query:
  Q) --`` followed by ``[document i] id: ID, score: S`` and the text. Reasoning, model names and
  metadata are not shown.

Parameters: ``system`` (bool, default true) shows system messages; ``max_tool_chars`` (int >= 0,
default none) cuts each tool result after that many characters (code points) and appends
``[truncated: N of M characters cut]``.
"""

from __future__ import annotations

import json

from pydantic import Field

from agent_eval import AgentTrace, AssistantMessage, Message, Retrieval, ToolCall, ToolMessage
from agent_eval.formatting import Formatter, FormatterParams

__all__ = ["TranscriptParams", "TranscriptV1"]


class TranscriptParams(FormatterParams):
    """Parameters of ``transcript@1``."""

    system: bool = True
    max_tool_chars: int | None = Field(default=None, ge=0)


def _arguments(call: ToolCall) -> str:
    if call.arguments is None and call.raw_arguments is not None:
        return f"with arguments that are not valid JSON: {call.raw_arguments}"
    if call.arguments is None:
        return "with no arguments"
    return f"with arguments {json.dumps(call.arguments, ensure_ascii=False)}"


def _call(call: ToolCall) -> str:
    call_id = f"call id: {call.id}" if call.id is not None else "no call id"
    return f"-> tool call {call.name} ({call_id}) {_arguments(call)}"


def _retrieval(retrieval: Retrieval) -> str:
    count = len(retrieval.documents)
    query = f" (query: {retrieval.query})" if retrieval.query is not None else ""
    lines = [f"-- retrieved {count} document{'' if count == 1 else 's'}{query} --"]
    for number, doc in enumerate(retrieval.documents, start=1):
        facts = [f"id: {doc.id}"] if doc.id is not None else []
        facts += [f"score: {doc.score!r}"] if doc.score is not None else []
        lines.append(f"[document {number}]" + (f" {', '.join(facts)}" if facts else ""))
        lines.append(doc.content)
    return "\n".join(lines)


def _by_position(trace: AgentTrace) -> dict[int, list[Retrieval]]:
    """Retrievals by the number of messages before them (past the end: after the last)."""
    placed: dict[int, list[Retrieval]] = {}
    for retrieval in trace.retrievals:
        placed.setdefault(min(retrieval.after_message, len(trace.messages)), []).append(retrieval)
    return placed


class TranscriptV1(Formatter[TranscriptParams]):
    """A numbered, labelled transcript (see the module docstring)."""

    name = "transcript"
    version = 1
    description = (
        "numbered transcript: roles, agent names, JSON tool calls, labelled tool results; "
        "not hardened (see transcript@2)"
    )
    Params = TranscriptParams
    lock_variants = ("max_tool_chars=200", "system=false")

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as numbered blocks separated by blank lines."""
        tool_names = {
            call.id: call.name
            for message in trace.messages
            if isinstance(message, AssistantMessage)
            for call in message.tool_calls or ()
            if call.id is not None
        }
        retrievals = _by_position(trace)
        blocks: list[str] = []
        number = 0
        for index in range(len(trace.messages) + 1):
            blocks += [_retrieval(r) for r in retrievals.get(index, ())]
            if index < len(trace.messages) and self._shown(trace.messages[index]):
                number += 1
                blocks.append(f"[{number}] {self._body(trace.messages[index], tool_names)}")
        return "\n\n".join(blocks)

    def _shown(self, message: Message) -> bool:
        return self.params.system or message.role != "system"

    def _body(self, message: Message, tool_names: dict[str, str]) -> str:
        lines = [self._header(message, tool_names)]
        content = message.content
        if isinstance(message, ToolMessage):
            content = self._truncate(content)
        calls = message.tool_calls or () if isinstance(message, AssistantMessage) else ()
        if content or not (calls or message.parts):
            lines.append(content or "(no content)")
        lines += [f"(attachment: {part.type})" for part in message.parts]
        lines += [_call(call) for call in calls]
        return "\n".join(lines)

    @staticmethod
    def _header(message: Message, tool_names: dict[str, str]) -> str:
        if isinstance(message, AssistantMessage):
            agent = f" (agent: {message.agent_name})" if message.agent_name else ""
            return f"ASSISTANT{agent}"
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            name = message.tool_name or tool_names.get(call_id or "", "unknown tool")
            return f"TOOL RESULT from {name} ({'call id: ' + call_id if call_id else 'no call id'})"
        return message.role.upper()

    def _truncate(self, content: str) -> str:
        limit = self.params.max_tool_chars
        if limit is None or len(content) <= limit:
            return content
        cut = len(content) - limit
        return f"{content[:limit]}\n[truncated: {cut} of {len(content)} characters cut]"
