"""Text and non-text parts of a message content (OpenAI content parts, GenAI v1.37 parts).

A content is a string, a list of parts (``{"type": "text", "text" | "content": ...}``, images,
files...) or a single part mapping. :func:`text_of` joins the text parts; :func:`opaque_parts_of`
keeps the others verbatim as :class:`~agent_eval._trace.OpaquePart`.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import orjson

from agent_eval._trace import OpaquePart
from agent_eval.ingest.conventions._attachments import attachment_part, strip_inline_data
from agent_eval.ingest.conventions._json_values import to_json_value

__all__ = ["TEXT_PART_TYPES", "is_text_part", "opaque_parts_of", "text_of"]

TEXT_PART_TYPES = frozenset({"text", "input_text", "output_text"})
"""Part types holding plain text (GenAI/OpenAI chat ``text``, OpenAI Responses API types)."""


def text_of(content: Any) -> str:
    """The text of a message content: a string, a list of parts, or a part mapping.

    Text parts (``{"type": "text", "text"|"content": ...}``) are joined with newlines; other parts
    are skipped here (see :func:`opaque_parts_of`). JSON-ish values without text are dumped.
    """
    if content is None:
        return ""
    if isinstance(content, str):
        return content
    if isinstance(content, Mapping):
        for key in ("text", "content"):
            if isinstance(content.get(key), str):
                return str(content[key])
        value = to_json_value(strip_inline_data(content))
        return orjson.dumps(value, option=orjson.OPT_SORT_KEYS).decode()
    if isinstance(content, list | tuple):
        texts = [text_of(p) for p in content if is_text_part(p)]
        return "\n".join(t for t in texts if t)
    return str(content)


def opaque_parts_of(content: Any) -> tuple[OpaquePart, ...]:
    """The non-text parts of a list-of-parts content, kept verbatim but for inline payloads.

    Base64 images, audio and files are replaced by a marker (:mod:`.attachments`).
    """
    if not isinstance(content, list | tuple):
        return ()
    return tuple(
        attachment_part(str(p.get("type", "unknown")), p)
        for p in content
        if isinstance(p, Mapping) and not is_text_part(p)
    )


def is_text_part(part: Any) -> bool:
    """Whether a content part is plain text (a bare string or a text-typed part)."""
    if isinstance(part, str):
        return True
    return isinstance(part, Mapping) and part.get("type", "text") in TEXT_PART_TYPES
