r"""``xml@1``: messages in XML tags, trace content escaped so it can neither close nor open a tag.

The first step toward judges that treat trace content as data, not instructions. Layout::

    <conversation>
    <message index="1" role="user">
    What's the weather in Paris?
    </message>
    <message index="2" role="assistant" agent="planner">

    <tool_call id="call_1" name="get_weather" format="json">{"city": "Paris"}</tool_call>
    </message>
    <message index="3" role="tool" tool_call_id="call_1" tool_name="get_weather">
    {"temp": 18}
    </message>
    </conversation>

- A message's text is ``"\n" + content + "\n"`` (so an empty content leaves an empty line),
  followed by ``<attachment type="..."/>`` per non-text part and ``<tool_call>`` per call.
- ``<tool_call>``: ``id`` (when known), ``name``, and ``format="json"`` with the arguments as JSON
  (key order as recorded, non-ASCII kept), or ``format="raw"`` with the string verbatim when it was
  not valid JSON; no ``format`` and no text when no arguments were recorded.
- Retrieved documents appear where they were retrieved:
  ``<retrieval query="..."><document index="1" id="..." score="...">text</document></retrieval>``.
- All messages are shown, system included, numbered from 1; reasoning and metadata are not.

Escaping (every piece of trace text, tags' attribute values included): ``&`` -> ``&amp;``,
``<`` -> ``&lt;``, ``>`` -> ``&gt;``, carriage return -> ``&#13;``; in attribute values also
``"`` -> ``&quot;``, newline -> ``&#10;``, tab -> ``&#9;``. Characters XML 1.0 forbids (C0
controls other than tab, newline and carriage return; U+FFFE, U+FFFF; lone surrogates) become
U+FFFD. So no trace content can produce ``<``, ``>`` or ``]]>``; the output is well-formed XML
whose parsed text equals the original content (forbidden characters aside).
"""

from __future__ import annotations

import json
import re

from agent_eval import AgentTrace, AssistantMessage, Message, Retrieval, ToolCall, ToolMessage
from agent_eval.formatting import Formatter, NoParams

__all__ = ["XmlV1"]

_FORBIDDEN = re.compile("[\x00-\x08\x0b\x0c\x0e-\x1f\ufffe\uffff\ud800-\udfff]")
_TEXT = (("&", "&amp;"), ("<", "&lt;"), (">", "&gt;"), ("\r", "&#13;"))
"""(character, entity) pairs applied in order; ``&`` first so entities are not escaped twice."""
_ATTRIBUTE = (*_TEXT, ('"', "&quot;"), ("\n", "&#10;"), ("\t", "&#9;"))


def _escape(value: str, escapes: tuple[tuple[str, str], ...]) -> str:
    if _FORBIDDEN.search(value):
        value = _FORBIDDEN.sub("\ufffd", value)
    for char, entity in escapes:
        if char in value:
            value = value.replace(char, entity)
    return value


def _text(value: str) -> str:
    return _escape(value, _TEXT)


def _attributes(**values: str | int | float | None) -> str:
    return "".join(
        f' {key}="{_escape(str(value), _ATTRIBUTE)}"'
        for key, value in values.items()
        if value is not None
    )


def _call(call: ToolCall) -> str:
    if call.arguments is None and call.raw_arguments is not None:
        fmt, body = "raw", call.raw_arguments
    elif call.arguments is None:
        fmt, body = None, ""
    else:
        fmt, body = "json", json.dumps(call.arguments, ensure_ascii=False)
    return (
        f"<tool_call{_attributes(id=call.id, name=call.name, format=fmt)}>{_text(body)}</tool_call>"
    )


def _message(index: int, message: Message) -> str:
    attrs: dict[str, str | int | None] = {"index": index, "role": message.role}
    if isinstance(message, AssistantMessage):
        attrs["agent"] = message.agent_name
    if isinstance(message, ToolMessage):
        attrs.update(tool_call_id=message.tool_call_id, tool_name=message.tool_name)
    lines = [f"<message{_attributes(**attrs)}>", _text(message.content)]
    lines += [f"<attachment{_attributes(type=part.type)}/>" for part in message.parts]
    if isinstance(message, AssistantMessage):
        lines += [_call(call) for call in message.tool_calls or ()]
    return "\n".join([*lines, "</message>"])


def _retrieval(retrieval: Retrieval) -> str:
    documents = "".join(
        f"\n<document{_attributes(index=i, id=doc.id, score=doc.score)}>"
        f"{_text(doc.content)}</document>"
        for i, doc in enumerate(retrieval.documents, start=1)
    )
    return f"<retrieval{_attributes(query=retrieval.query)}>{documents}\n</retrieval>"


class XmlV1(Formatter[NoParams]):
    """Messages in escaped XML tags (see the module docstring)."""

    name = "xml"
    version = 1
    description = "messages in XML tags; trace content escaped so it cannot open or close a tag"

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as one ``<conversation>`` element."""
        parts = ["<conversation>"]
        count = len(trace.messages)
        placed: dict[int, list[str]] = {}
        for retrieval in trace.retrievals:
            placed.setdefault(min(retrieval.after_message, count), []).append(_retrieval(retrieval))
        for index in range(count + 1):
            parts += placed.get(index, [])
            if index < count:
                parts.append(_message(index + 1, trace.messages[index]))
        return "\n".join([*parts, "</conversation>"])
