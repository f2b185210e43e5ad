r"""``transcript@2``: the numbered transcript, hardened so that content cannot forge structure.

``transcript@1``'s layout (numbered, labelled messages; tool calls; retrievals where they were
retrieved; same parameters), with three changes that make every line's origin readable:

1. **Content lines are quoted.** Every line of untrusted text (message content, document text,
   arguments that were not valid JSON) is split at every Unicode line boundary (LF, CR, CRLF,
   VT, FF, FS, GS, RS, NEL, U+2028, U+2029) and shown after ``| `` (an empty line as ``|``).
   A content line that imitates a turn header, a role label (``Human:``, ``AI:``, ``USER``,
   ``TOOL RESULT``...) or a boundary line, directly or through Unicode look-alikes (fullwidth
   or mathematical letters, Cyrillic or Greek homoglyphs, bracket look-alikes, zero-width
   characters between letters), is shown after ``|! `` instead. Invisible format and control
   characters are written as ``<U+XXXX>``. Structural lines never start with ``|``.
2. **Values inside structural lines are kept on their line.** Agent and tool names, call ids,
   queries, document ids and JSON arguments have every line boundary and invisible character
   written as ``<U+XXXX>``.
3. **The conversation sits between two boundary lines** that content cannot produce::

       === BEGIN TRANSCRIPT 5f1c0d9a2b7e4c31 ===
       [1] USER
       | What's the weather in Paris?

       [2] ASSISTANT (agent: planner)
       -> tool call get_weather (call id: call_1) with arguments {"city": "Paris"}

       [3] TOOL RESULT from get_weather (call id: call_1)
       | {"temp": 18}
       === END TRANSCRIPT 5f1c0d9a2b7e4c31 ===

   The tag is the first 16 hex digits of the SHA-256 of the text between the boundary lines, so
   the rendering stays a pure function of the trace (the judge-call cache keeps working) and no
   content line could carry it (it would have to contain the hash of a text that contains it).
   A conversation without messages renders ``(no messages)`` between the boundaries.

So a reader that takes the lines starting ``[N] `` between the boundary lines as turn headers
finds exactly one per shown message, whatever the content holds (property-tested).

Parameters: ``system`` (bool, default true) shows system messages; ``max_tool_chars`` (int >= 0,
default none) cuts each tool result after that many characters (code points) and appends the
structural line ``[truncated: N of M characters cut]``.
"""

from __future__ import annotations

import json

from pydantic import Field

from agent_eval import AgentTrace, AssistantMessage, Message, Retrieval, ToolCall, ToolMessage
from agent_eval.formatting import Formatter, FormatterParams, boundary_digest, one_line, quote_lines

__all__ = ["TranscriptV2", "TranscriptV2Params"]


class TranscriptV2Params(FormatterParams):
    """Parameters of ``transcript@2`` (the same as ``transcript@1``'s)."""

    system: bool = True
    max_tool_chars: int | None = Field(default=None, ge=0)


def _arguments(call: ToolCall) -> list[str]:
    if call.arguments is None and call.raw_arguments is not None:
        return ["with arguments that are not valid JSON:", *quote_lines(call.raw_arguments)]
    if call.arguments is None:
        return ["with no arguments"]
    return [f"with arguments {one_line(json.dumps(call.arguments, ensure_ascii=False))}"]


def _call(call: ToolCall) -> list[str]:
    call_id = f"call id: {one_line(call.id)}" if call.id is not None else "no call id"
    first, *rest = _arguments(call)
    return [f"-> tool call {one_line(call.name)} ({call_id}) {first}", *rest]


def _retrieval(retrieval: Retrieval) -> str:
    count = len(retrieval.documents)
    query = f" (query: {one_line(retrieval.query)})" if retrieval.query is not None else ""
    lines = [f"-- retrieved {count} document{'' if count == 1 else 's'}{query} --"]
    for number, doc in enumerate(retrieval.documents, start=1):
        facts = [f"id: {one_line(doc.id)}"] if doc.id is not None else []
        facts += [f"score: {doc.score!r}"] if doc.score is not None else []
        lines.append(f"[document {number}]" + (f" {', '.join(facts)}" if facts else ""))
        lines += quote_lines(doc.content)
    return "\n".join(lines)


def _by_position(trace: AgentTrace) -> dict[int, list[Retrieval]]:
    """Retrievals by the number of messages before them (past the end: after the last)."""
    placed: dict[int, list[Retrieval]] = {}
    for retrieval in trace.retrievals:
        placed.setdefault(min(retrieval.after_message, len(trace.messages)), []).append(retrieval)
    return placed


class TranscriptV2(Formatter[TranscriptV2Params]):
    """A numbered transcript whose content cannot forge structure (see the module docstring)."""

    name = "transcript"
    version = 2
    description = (
        "hardened numbered transcript: quoted content lines, look-alike headers marked, "
        "hash-tagged boundaries (the default)"
    )
    Params = TranscriptV2Params
    lock_variants = ("max_tool_chars=200", "system=false")

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as numbered blocks between two hash-tagged boundary lines."""
        inner = "\n\n".join(self._blocks(trace)) or "(no messages)"
        tag = boundary_digest(inner)
        return f"=== BEGIN TRANSCRIPT {tag} ===\n{inner}\n=== END TRANSCRIPT {tag} ==="

    def _blocks(self, trace: AgentTrace) -> list[str]:
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
        return blocks

    def _shown(self, message: Message) -> bool:
        return self.params.system or message.role != "system"

    def _body(self, message: Message, tool_names: dict[str, str]) -> str:
        lines = [self._header(message, tool_names)]
        content, cut = message.content, ""
        if isinstance(message, ToolMessage):
            content, cut = self._truncate(content)
        calls = message.tool_calls or () if isinstance(message, AssistantMessage) else ()
        if content:
            lines += quote_lines(content)
        elif not (calls or message.parts):
            lines.append("(no content)")
        lines += [cut] if cut else []
        lines += [f"(attachment: {one_line(part.type)})" for part in message.parts]
        lines += [line for call in calls for line in _call(call)]
        return "\n".join(lines)

    @staticmethod
    def _header(message: Message, tool_names: dict[str, str]) -> str:
        if isinstance(message, AssistantMessage):
            agent = f" (agent: {one_line(message.agent_name)})" if message.agent_name else ""
            return f"ASSISTANT{agent}"
        if isinstance(message, ToolMessage):
            call_id = message.tool_call_id
            name = message.tool_name or tool_names.get(call_id or "", "unknown tool")
            shown_id = "call id: " + one_line(call_id) if call_id else "no call id"
            return f"TOOL RESULT from {one_line(name)} ({shown_id})"
        return message.role.upper()

    def _truncate(self, content: str) -> tuple[str, str]:
        limit = self.params.max_tool_chars
        if limit is None or len(content) <= limit:
            return content, ""
        cut = len(content) - limit
        return content[:limit], f"[truncated: {cut} of {len(content)} characters cut]"
