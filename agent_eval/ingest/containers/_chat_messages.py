"""OpenAI-style chat logs: message lists, ``{"messages": [...]}`` records, or JSON Lines of them.

Accepted shapes (messages in the OpenAI Chat Completions format: ``role``, ``content``,
assistant ``tool_calls`` with ``function.name``/``function.arguments``, tool ``tool_call_id``):

- a JSON list of messages: one conversation;
- a JSON object ``{"messages": [...], "conversation_id"?, "reference"?, "labels"?,
  "metadata"?}``: one conversation;
- a JSON list of such objects, or JSON Lines with one object (or one message list) per line:
  one conversation each, streamed.

A conversation without ``conversation_id`` is named after the file: ``<stem>`` (of the name without
``.gz``: ``x`` for ``x.json`` and ``x.json.gz``) for a whole-file conversation, ``<stem>/<n>`` for
the n-th record (1-based, bad lines counted) of a list or JSON Lines file. A record that cannot be
read, or a JSON Lines line that is not valid JSON (a writer killed mid-line), is skipped with a
reason naming its line; the other records are still read.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from itertools import chain
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.errors import DecodeError
from agent_eval.ingest._safe_text import brief
from agent_eval.ingest._sources import input_stem, open_input
from agent_eval.ingest._spans import SourceLocation
from agent_eval.ingest.containers import _builtin as builtin
from agent_eval.ingest.containers._base import ContainerItem, Skipped
from agent_eval.ingest.containers._chat import chat_messages, chat_trace
from agent_eval.ingest.containers._json_stream import BadValue, JsonStream

__all__ = ["OpenAIMessagesContainer"]

_ROLE = rb'"role"\s*:\s*"(system|developer|user|assistant|tool|function)"'
_MESSAGE_LIST = re.compile(rb"\A\s*\[\s*\{[^{}]*?" + _ROLE)
_RECORD = re.compile(rb'\A\s*\[?\s*\{\s*"(messages|conversation_id|reference|labels|metadata)"\s*:')
_FOREIGN = (b'"resourceSpans"', b'"resourceLogs"', b'"traj"', b'"simulations"', b'"span_kind"')


class OpenAIMessagesContainer(builtin.OpenAIMessages):
    """OpenAI chat message lists, with optional conversation id, reference and labels."""

    def sniff(self, path: str, head: bytes) -> bool:
        """A list whose first object has a chat ``role``, or records opening with ``messages``."""
        if any(marker in head for marker in _FOREIGN):
            return False
        if _RECORD.match(head) is not None:
            return b'"messages"' in head and re.search(_ROLE, head) is not None
        return _MESSAGE_LIST.match(head) is not None

    def read(self, path: str) -> Iterator[ContainerItem]:
        """Yield one AgentTrace per conversation (or a Skipped note per unreadable record).

        Raises:
            DecodeError: the file is not JSON or JSON Lines (names the line).

        """
        stem = input_stem(path)  # x for x.json and x.json.gz
        with open_input(path) as stream:
            json = JsonStream(stream, path)
            first = json.peek()
            if not first:
                raise DecodeError("the file is empty; expected chat messages", path=path)
            reader = _read_list if first == "[" else _read_values
            yield from reader(json, path, stem)


def _read_list(json: JsonStream, path: str, stem: str) -> Iterator[AgentTrace | Skipped]:
    """A whole-file list (of messages, or of records); more values after it: JSON Lines."""
    line = json.line
    items = json.array()
    first = next(items, None)
    if first is None or _is_message(first[1]):
        messages = [] if first is None else [first[1], *(value for _, value in items)]
        more = bool(json.peek())  # JSON Lines of message lists: this was the first line
        yield _trace({"messages": messages}, path, f"{stem}/1" if more else stem, line)
        yield from _numbered(json.records(known=True), path, stem, start=2)
        return
    count = 0
    for count, (item_line, value) in enumerate(chain([first], items), start=1):
        yield _trace(value, path, f"{stem}/{count}", item_line)
    yield from _numbered(json.records(known=True), path, stem, start=count + 1)


def _read_values(json: JsonStream, path: str, stem: str) -> Iterator[AgentTrace | Skipped]:
    records = json.records()
    first = next(records)  # records() raises when no value decodes
    if not isinstance(first, BadValue) and not json.peek():  # the whole file is one record
        yield _trace(first[1], path, stem, first[0])
        return
    yield from _numbered(chain([first], records), path, stem, start=1)


def _numbered(
    records: Iterator[tuple[int, Any] | BadValue], path: str, stem: str, start: int
) -> Iterator[AgentTrace | Skipped]:
    """JSON Lines records as conversations ``<stem>/<n>`` from ``start``; a bad line skipped."""
    for number, record in enumerate(records, start=start):
        if isinstance(record, BadValue):  # a bad JSON Lines line: skipped, the rest read
            yield record.skipped()
        else:
            yield _trace(record[1], path, f"{stem}/{number}", record[0])


def _is_message(value: Any) -> bool:
    return isinstance(value, Mapping) and "role" in value and "messages" not in value


def _trace(record: Any, path: str, default_id: str, line: int) -> AgentTrace | Skipped:
    if isinstance(record, list):
        record = {"messages": record}
    try:
        if not isinstance(record, Mapping) or "messages" not in record:
            raise ValueError("a record is a message list or an object with 'messages'")
        messages = chat_messages(record["messages"])
        return chat_trace(
            conversation_id=str(record.get("conversation_id") or default_id),
            messages=messages,
            container="openai-messages",
            path=path,
            reference=_optional_str(record, "reference"),
            labels=_optional_dict(record, "labels"),
            metadata=_optional_dict(record, "metadata"),
        )
    except ValueError as exc:
        return Skipped(
            reason="invalid_chat_record",
            detail=f"{exc}; expected {{messages: [...], conversation_id?, reference?, labels?}}",
            source=SourceLocation(path, line),
            spans=0,
        )


def _optional_str(record: Mapping[str, Any], key: str) -> str | None:
    value = record.get(key)
    if value is not None and not isinstance(value, str):
        raise ValueError(f"{key!r} must be a string, got {brief(value)}")
    return value


def _optional_dict(record: Mapping[str, Any], key: str) -> dict[str, Any]:
    value = record.get(key)
    if value is not None and not isinstance(value, Mapping):
        raise ValueError(f"{key!r} must be an object, got {brief(value)}")
    return dict(value or {})
