"""Tool results as the model saw them: known framework wrappers around a tool span's output.

Several frameworks record on a tool span the object the tool returned, serialized, rather than
the text the model was sent. When no later LLM input replays the result (the replay always
wins, see :mod:`agent_eval.ingest._pairing`), these wrappers are unwrapped here:

- **LangChain tool messages** (Traceloop's ``opentelemetry-instrumentation-langchain`` writes
  ``traceloop.entity.output`` as ``{"output": <ToolMessage>, "kwargs": {...}}``): the message is
  either LangChain's serialized constructor form, ``{"lc": 1, "type": "constructor", "id":
  [..., "ToolMessage"], "kwargs": {"content", "tool_call_id", ...}}``, or its pydantic dump
  ``{"type": "tool", "content", "tool_call_id", ...}`` (possibly as a JSON string). The model
  was sent ``content``.
- **LlamaIndex ``ToolOutput``** (openinference-instrumentation-llama-index writes it as the
  TOOL span's ``output.value``): ``{"blocks": [{"block_type": "text", "text"}], "tool_name",
  "raw_input", "raw_output", "is_error"}`` (older versions: ``content`` instead of ``blocks``).
  The model was sent the text of its blocks (``ToolOutput.content``), else ``raw_output``.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from agent_eval.ingest.conventions._messages import decode_json, text_of

__all__ = ["langchain_tool_message", "llama_index_tool_output"]

LC_TOOL_MESSAGE = "ToolMessage"
"""The last element of the ``id`` of a serialized LangChain ``ToolMessage``."""
LLAMA_INDEX_KEYS = frozenset({"tool_name", "raw_input", "raw_output"})
"""Fields of a serialized LlamaIndex ``ToolOutput`` (``llama_index.core.tools.types``)."""
_TEXT_BLOCK = "text"


def langchain_tool_message(value: Any) -> tuple[str, str | None] | None:
    """``(content, tool_call_id)`` of a LangChain tool message, or ``None`` for anything else.

    ``value`` may be the message itself (either serialized form, as a mapping or JSON text) or
    Traceloop's ``{"output": <message>, "kwargs": {...}}`` wrapper around it.
    """
    value = decode_json(value)
    if isinstance(value, Mapping) and "output" in value and set(value) <= {"output", "kwargs"}:
        value = decode_json(value["output"])
    if not isinstance(value, Mapping):
        return None
    ident = value.get("id")
    if value.get("lc") == 1 and isinstance(ident, list) and ident[-1:] == [LC_TOOL_MESSAGE]:
        value = value.get("kwargs")
        if not isinstance(value, Mapping):
            return None
    elif value.get("type") != "tool":
        return None
    if "content" not in value:
        return None
    call_id = value.get("tool_call_id")
    return text_of(value["content"]), call_id if isinstance(call_id, str) and call_id else None


def llama_index_tool_output(value: Any) -> str | None:
    """The text a LlamaIndex ``ToolOutput`` gave the model, or ``None`` for anything else."""
    value = decode_json(value)
    if not isinstance(value, Mapping) or not set(value) >= LLAMA_INDEX_KEYS:
        return None
    blocks = value.get("blocks")
    if isinstance(blocks, list) and blocks:
        texts = [
            str(b.get("text") or "")
            for b in blocks
            if isinstance(b, Mapping) and b.get("block_type") == _TEXT_BLOCK
        ]
        if texts:
            return "".join(texts)
    content = value.get("content")
    if isinstance(content, str):
        return content
    raw = value.get("raw_output")
    return raw if isinstance(raw, str) else text_of(raw)
