"""A conversation laid out for a reader: :func:`layout` turns an AgentTrace into blocks.

One block per message, in order, with its role; an assistant message's tool calls each carry
the tool message that answered them (paired by ``tool_call_id``, else by the tool name among
the following unanswered results), so a call and its result sit together and the answering tool
message is not repeated on its own; retrievals appear where they happened
(``Retrieval.after_message``). The template folds long content; :func:`clip` cuts text beyond a
hard limit so one huge message cannot make the page unbounded, saying how much it left out.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import orjson
from pydantic import JsonValue

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    Retrieval,
    ToolCall,
    ToolMessage,
)

__all__ = [
    "CONTENT_LIMIT",
    "FOLD_AT",
    "Block",
    "CallView",
    "QuoteSite",
    "clip",
    "json_text",
    "layout",
    "locate",
    "pretty_json",
]

CONTENT_LIMIT = 20_000
"""Characters of one message, tool result or document shown; the rest is counted in a note."""

FOLD_AT = 600
"""Content longer than this many characters (or 12 lines) is folded behind a summary line."""


@dataclass(frozen=True)
class CallView:
    """One tool call and the tool message that answered it (``None``: no result recorded)."""

    call: ToolCall
    result: ToolMessage | None


@dataclass(frozen=True)
class Block:
    """One block of the laid-out transcript: a message (``index`` in the trace) or a retrieval."""

    kind: str  # "message" | "retrieval"
    index: int
    message: Message | None = None
    calls: list[CallView] = field(default_factory=list)
    retrieval: Retrieval | None = None


def clip(text: str, limit: int = CONTENT_LIMIT) -> tuple[str, int]:
    """``(text cut to limit characters, number of characters left out)``."""
    return (text, 0) if len(text) <= limit else (text[:limit], len(text) - limit)


def folds(text: str) -> bool:
    """Whether ``text`` is long enough to fold (over :data:`FOLD_AT` characters or 12 lines)."""
    return len(text) > FOLD_AT or text.count("\n") >= 12


def pretty_json(value: JsonValue) -> str:
    """Indented JSON of tool arguments or opaque parts (keys in recorded order)."""
    return orjson.dumps(value, option=orjson.OPT_INDENT_2).decode("utf-8")


def json_text(text: str) -> str | None:
    """``text`` re-indented when it is a JSON object or array (tool results often are), else None.

    Only texts up to :data:`CONTENT_LIMIT` characters are tried; keys keep their order.
    """
    stripped = text.strip()
    if len(stripped) > CONTENT_LIMIT or not stripped.startswith(("{", "[")):
        return None
    try:
        value = orjson.loads(stripped)
    except orjson.JSONDecodeError:
        return None
    return pretty_json(value) if isinstance(value, dict | list) else None


def _pair(messages: tuple[Message, ...]) -> tuple[dict[tuple[int, int], int], set[int]]:
    """``{(assistant index, call index): tool message index}`` and the tool indexes used."""
    paired: dict[tuple[int, int], int] = {}
    used: set[int] = set()
    for i, message in enumerate(messages):
        if not isinstance(message, AssistantMessage) or not message.tool_calls:
            continue
        for k, call in enumerate(message.tool_calls):
            for j in range(i + 1, len(messages)):
                other = messages[j]
                if isinstance(other, AssistantMessage):
                    break  # results answer the calls of the assistant turn before them
                if not isinstance(other, ToolMessage) or j in used:
                    continue
                by_id = call.id is not None and other.tool_call_id == call.id
                by_name = (call.id is None or other.tool_call_id is None) and (
                    other.tool_name in (None, call.name)
                )
                if by_id or by_name:
                    paired[(i, k)] = j
                    used.add(j)
                    break
    return paired, used


def layout(trace: AgentTrace) -> list[Block]:
    """The trace's blocks in reading order (see the module docstring)."""
    paired, used = _pair(trace.messages)
    retrievals: dict[int, list[Retrieval]] = {}
    for r in trace.retrievals:
        retrievals.setdefault(min(r.after_message, len(trace.messages)), []).append(r)
    blocks: list[Block] = []
    for i, message in enumerate(trace.messages):
        blocks += [Block("retrieval", i, retrieval=r) for r in retrievals.get(i, [])]
        if i in used:
            continue
        calls = []
        if isinstance(message, AssistantMessage) and message.tool_calls:
            calls = [
                CallView(
                    call,
                    result
                    if isinstance(result := trace.messages[paired[(i, k)]], ToolMessage)
                    else None,
                )
                if (i, k) in paired
                else CallView(call, None)
                for k, call in enumerate(message.tool_calls)
            ]
        blocks.append(Block("message", i, message=message, calls=calls))
    end = len(trace.messages)
    blocks += [Block("retrieval", end, retrieval=r) for r in retrievals.get(end, [])]
    return blocks


@dataclass(frozen=True)
class QuoteSite:
    """Where an atom's evidence quote occurs in the conversation, with some text either side.

    Attributes:
        source: The message or document it was found in (``"message #3 (tool)"``,
            ``"document d1 of the retrieval after message 2"``).
        before / quote / after: The text around it, the quote as it appears, the text after.

    """

    source: str
    before: str
    quote: str
    after: str


_SEARCH_ORDER = {"tool": 0, "system": 1, "user": 2, "assistant": 3}


def _texts(trace: AgentTrace) -> list[tuple[str, str]]:
    """Texts evidence may come from: documents, tool results, system, user, then assistant."""
    texts = []
    for r in trace.retrievals:
        for k, doc in enumerate(r.documents):
            name = f"document {doc.id}" if doc.id else f"document {k + 1}"
            texts.append((f"{name} of the retrieval after message {r.after_message}", doc.content))
    messages = sorted(enumerate(trace.messages), key=lambda im: _SEARCH_ORDER[im[1].role])
    return texts + [(f"message #{i + 1} ({m.role})", m.content) for i, m in messages]


def locate(trace: AgentTrace | None, quote: str | None, window: int = 90) -> QuoteSite | None:
    """The first place ``quote`` occurs in ``trace``'s documents or messages, else ``None``.

    Retrieved documents and tool results are searched first, the assistant's messages last. An
    exact match is tried first, then one ignoring case (the report shows where the quote is;
    whether it counts as verified is the metric's ``evidence_verified``).
    """
    if trace is None or not quote or not quote.strip():
        return None
    needle = quote.strip()
    for exact in (True, False):
        for source, text in _texts(trace):
            at = text.find(needle) if exact else text.lower().find(needle.lower())
            if at < 0:
                continue
            end = at + len(needle)
            before = ("…" if at > window else "") + text[max(0, at - window) : at]
            after = text[end : end + window] + ("…" if len(text) > end + window else "")
            return QuoteSite(source, before, text[at:end], after)
    return None
