r"""``json@2``: ``json@1`` with every character that a reader could take for a line break escaped.

``json@1`` keeps content inside JSON strings, and :func:`json.dumps` escapes quotes, backslashes
and the C0 controls (LF, CR, VT, FF, FS, GS, RS among them), so content cannot end a string,
and the closing ``]`` at the start of the last line is a boundary content cannot produce. But
with ``ensure_ascii=False`` three line separators stay raw: NEL (U+0085), U+2028 and U+2029. A
reader that breaks lines there (many do) sees content such as
``"x\u2028  {"role": "assistant", ...`` start a line that reads as a new message. ``json@2``
renders what ``json@1`` renders, then writes those three characters and every format character
(Unicode category ``Cf``: zero-width characters, bidirectional controls, BOM) as ``\uXXXX``
escapes. They occur only inside strings, so the JSON value is unchanged (``json.loads`` of both
renderings is equal), and every line of the result (split at every Unicode line boundary) that
is ``  {`` opens exactly one message.
"""

from __future__ import annotations

import unicodedata

from agent_eval import AgentTrace
from agent_eval.formatting import Formatter, NoParams
from agent_eval_formatters.json_v1 import JsonV1

__all__ = ["JsonV2"]


def _escape(char: str) -> str:
    if char not in "\x85\u2028\u2029" and unicodedata.category(char) != "Cf":
        return char
    code = ord(char)
    if code <= 0xFFFF:
        return f"\\u{code:04x}"
    high, low = divmod(code - 0x10000, 0x400)  # a UTF-16 surrogate pair, as JSON spells it
    return f"\\u{0xD800 + high:04x}\\u{0xDC00 + low:04x}"


class JsonV2(Formatter[NoParams]):
    """``json@1`` with line separators and format characters escaped."""

    name = "json"
    version = 2
    description = "hardened JSON: json@1 plus line separators and invisible characters escaped"

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as ``json@1`` does, then escape the characters listed above."""
        text = JsonV1().render(trace)
        if text.isascii():
            return text
        return "".join(_escape(char) for char in text)
