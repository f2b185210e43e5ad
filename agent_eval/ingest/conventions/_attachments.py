"""Attachments (images, audio, files) as typed placeholders: their bytes never reach a judge.

Multimodal message parts carry their payload inline: base64 strings (OpenAI ``image_url`` data
URIs, ``input_audio.data``, ``file.file_data``, GenAI v1.37 ``blob`` parts' ``content``, Bedrock
Converse ``source.bytes``), sometimes hundreds of kilobytes. A judge reading that as text pays
for tokens that say nothing. :func:`strip_inline_data` keeps a part's structure (type, MIME
type, format, file name, URL of a hosted file) and replaces every inline payload with a short
marker ``"<base64 image/png, 12345 chars omitted>"``; :func:`attachment_part` builds the
:class:`~agent_eval._trace.OpaquePart` that formatters render as an attachment placeholder.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from typing import Any

from agent_eval._trace import OpaquePart
from agent_eval.ingest.conventions._json_values import to_json_value

__all__ = ["INLINE_DATA_MIN_CHARS", "attachment_part", "is_inline_data", "strip_inline_data"]

INLINE_DATA_MIN_CHARS = 256
"""A string at least this long made only of base64 characters counts as an inline payload."""

_DATA_URI = re.compile(r"data:([\w.+-]+/[\w.+-]+)?(;[\w-]+=[^;,]*)*;base64,", re.ASCII)
_BASE64 = re.compile(r"[A-Za-z0-9+/_-]+={0,2}", re.ASCII)


def is_inline_data(value: Any) -> bool:
    """Whether ``value`` is an inline payload: a base64 data URI, bytes, or a long base64 run."""
    if isinstance(value, bytes | bytearray):
        return True
    if not isinstance(value, str):
        return False
    if _DATA_URI.match(value):
        return True
    return len(value) >= INLINE_DATA_MIN_CHARS and _BASE64.fullmatch(value) is not None


def _marker(value: str | bytes | bytearray) -> str:
    if isinstance(value, bytes | bytearray):
        return f"<{len(value)} bytes omitted>"
    match = _DATA_URI.match(value)
    mime = match.group(1) if match and match.group(1) else None
    size = len(value) - (match.end() if match else 0)
    return f"<base64{' ' + mime if mime else ''}, {size} chars omitted>"


def strip_inline_data(value: Any) -> Any:
    """``value`` (any JSON-like structure) with every inline payload replaced by a marker."""
    if is_inline_data(value):
        return _marker(value)
    if isinstance(value, Mapping):
        return {str(k): strip_inline_data(v) for k, v in value.items()}
    if isinstance(value, list | tuple):
        return [strip_inline_data(v) for v in value]
    return value


def attachment_part(kind: str, data: Any) -> OpaquePart:
    """An :class:`OpaquePart` of type ``kind`` whose data has no inline payload."""
    return OpaquePart(type=kind, data=to_json_value(strip_inline_data(data)))
