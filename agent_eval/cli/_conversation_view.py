"""A readable terminal view of one AgentTrace (``agent-eval show`` without ``--formatter``).

This view is for people, not judges: it is not versioned and may change freely. What a judge
sees is a formatter's rendering (``agent-eval show --formatter NAME@V``). Trace content is
untrusted, so it is printed as plain text: never interpreted as rich markup.
"""

from __future__ import annotations

import json

from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    Retrieval,
    ToolCall,
    ToolMessage,
)

__all__ = ["conversation_view"]

_STYLES = {"system": "magenta", "user": "green", "assistant": "cyan", "tool": "yellow"}


def _arguments(call: ToolCall) -> str:
    if call.arguments is None and call.raw_arguments is not None:
        return f"{call.raw_arguments}  (not valid JSON)"
    return json.dumps(call.arguments, ensure_ascii=False)


def _title(number: int, message: Message) -> str:
    title = f"{number} {message.role}"
    if isinstance(message, AssistantMessage) and message.agent_name:
        title += f" · {message.agent_name}"
    if isinstance(message, ToolMessage):
        title += f" · {message.tool_name or '?'} ({message.tool_call_id or 'no call id'})"
    return title


def _body(message: Message) -> Text:
    lines: list[Text] = [Text(message.content)] if message.content else []
    lines += [Text(f"[{part.type} part]", style="dim") for part in message.parts]
    if isinstance(message, AssistantMessage):
        if message.reasoning:
            lines.append(Text(f"reasoning: {message.reasoning}", style="dim italic"))
        for call in message.tool_calls or ():
            line = Text(f"→ {call.name}", style="bold")
            line.append(f" ({call.id or 'no call id'}) {_arguments(call)}", style="not bold")
            lines.append(line)
    return Text("\n").join(lines) if lines else Text("(no content)", style="dim")


def _retrieval(retrieval: Retrieval) -> Panel:
    text = Text()
    for doc in retrieval.documents:
        text.append(f"[{doc.id or '-'} score={doc.score}] ", style="dim")
        text.append(doc.content + "\n")
    if not retrieval.documents:
        text.append("the retriever returned nothing", style="dim")
    title = f"retrieval: {retrieval.query or ''} ({len(retrieval.documents)} documents)"
    return Panel(text, title=Text(title), title_align="left", border_style="blue")


def _header(trace: AgentTrace) -> Text:
    text = Text(f"conversation {trace.conversation_id}", style="bold")
    text.append(f"  ({trace.source.container}, {len(trace.messages)} messages)", style="dim")
    if trace.reference:
        text.append(f"\nreference: {trace.reference}")
    if trace.labels:
        text.append(f"\nlabels: {json.dumps(trace.labels, ensure_ascii=False, sort_keys=True)}")
    for note in trace.notes:
        text.append(f"\nnote: {note}", style="dim")
    return text


def conversation_view(trace: AgentTrace) -> RenderableType:
    """A rich renderable: a header, then one panel per message with retrievals in place."""
    items: list[RenderableType] = [_header(trace)]
    for index in range(len(trace.messages) + 1):
        items += [
            _retrieval(r)
            for r in trace.retrievals
            if min(r.after_message, len(trace.messages)) == index
        ]
        if index < len(trace.messages):
            message = trace.messages[index]
            style = _STYLES.get(message.role, "white")
            items.append(
                Panel(
                    _body(message),
                    title=Text(_title(index + 1, message)),
                    title_align="left",
                    border_style=style,
                )
            )
    return Group(*items)
