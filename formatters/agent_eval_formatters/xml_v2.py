r"""``xml@2``: ``xml@1`` with the characters that could forge structure for a reader escaped too.

``xml@1`` already escapes ``&``, ``<``, ``>`` and carriage returns, so no content can open or
close a tag and ``</conversation>`` is a boundary content cannot produce. What a reader other
than an XML parser (a language model, a person) can still be shown is a *line* that reads as a
tag: content holding a Unicode line separator (NEL, U+2028, U+2029) followed by look-alike
angle brackets (``＜/message＞``, ``‹message›``, ``〈conversation〉``), or zero-width characters
and bidirectional controls that hide text. ``xml@2`` renders exactly what ``xml@1`` renders,
then writes each of those characters as a hexadecimal character reference (``&#x2028;``):

- the line separators NEL (U+0085), U+2028 and U+2029;
- every format character (Unicode category ``Cf``: zero-width space/joiners, bidirectional
  controls, BOM, soft hyphen...);
- the angle-bracket look-alikes listed in :data:`LOOKALIKE_BRACKETS`.

None of these characters occurs in ``xml@1``'s own markup, so the replacement touches trace
text only, and an XML parser reads back the same text as from ``xml@1``. Lines of the result
(split at every Unicode line boundary) that start with ``<message`` are exactly the messages.
"""

from __future__ import annotations

import unicodedata

from agent_eval import AgentTrace
from agent_eval.formatting import Formatter, NoParams
from agent_eval_formatters.xml_v1 import XmlV1

__all__ = ["LOOKALIKE_BRACKETS", "XmlV2"]

LOOKALIKE_BRACKETS = (
    "\uff1c\uff1e\ufe64\ufe65\u2039\u203a\u2329\u232a\u3008\u3009"
    "\u27e8\u27e9\u02c2\u02c3\u1438\u1433\u276e\u276f\u300a\u300b"
)
"""Angle-bracket look-alikes escaped by ``xml@2`` (fullwidth, small, single guillemets, angle
brackets, modifier letters, Canadian syllabics, ornaments, double angle brackets)."""

_ESCAPED = frozenset("\x85\u2028\u2029" + LOOKALIKE_BRACKETS)


def _reference(char: str) -> str:
    if char in _ESCAPED or unicodedata.category(char) == "Cf":
        return f"&#x{ord(char):X};"
    return char


class XmlV2(Formatter[NoParams]):
    """``xml@1`` plus escaped line separators, format characters and bracket look-alikes."""

    name = "xml"
    version = 2
    description = "hardened XML: xml@1 plus line separators, invisible and look-alike <> escaped"

    def render(self, trace: AgentTrace) -> str:
        """Render ``trace`` as ``xml@1`` does, then escape the characters listed above."""
        text = XmlV1().render(trace)
        if text.isascii():
            return text
        return "".join(_reference(char) for char in text)
