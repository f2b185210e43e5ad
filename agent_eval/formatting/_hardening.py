r"""Building blocks of hardened renderings: text that trace content cannot forge.

A hardened formatter (``transcript@2``, ``xml@2``, ``json@2``) guarantees that no message
content, whatever it holds, produces a line that reads as a turn header or closes the
conversation early (threat model: ``docs/hardened-judging.md``). The pieces here:

- :func:`split_lines`: content split at *every* Unicode line boundary (the ones
  :meth:`str.splitlines` knows: LF, CR, CRLF, VT, FF, FS, GS, RS, NEL, U+2028, U+2029), so a
  reader that breaks lines at any of them sees the same lines as one that breaks at LF only.
- :func:`visible`: invisible format and control characters (Unicode categories ``Cf`` and
  ``Cc`` other than tab: zero-width characters, bidirectional controls, BOM, C0/C1 controls)
  written as ``<U+200B>``, so hidden text cannot hide structure and the judge sees that it is
  there.
- :func:`one_line`: a value shown inside a structural line (an agent or tool name, a call id,
  a query), with every line boundary and invisible character written as ``<U+XXXX>``.
- :func:`fold`: the skeleton a line reads as, for detecting imitations of a rendering's syntax
  through Unicode look-alikes: NFKC (fullwidth and mathematical letters, fullwidth brackets),
  combining marks, format characters and controls removed, a table of Latin look-alikes from
  Cyrillic and Greek and of bracket look-alikes (after Unicode TR39's confusables data, in
  part), then :meth:`str.casefold`.
- :func:`boundary_digest`: the 16-hex tag of a conversation's boundary lines, the first 64 bits
  of the SHA-256 of the rendering they enclose: deterministic (the judge-call cache keeps
  working) and unforgeable in practice (a content line would have to contain the hash of a
  rendering that contains it).

The structural guarantee never depends on :func:`fold`: content lines carry a prefix that
structural lines never start with. :func:`fold` only adds a visible mark to content lines that
imitate the syntax, for the judge's benefit; a look-alike it misses is still inert.
"""

from __future__ import annotations

import hashlib
import re
import unicodedata

__all__ = [
    "LINE_BOUNDARIES",
    "boundary_digest",
    "fold",
    "imitates_syntax",
    "one_line",
    "quote_lines",
    "split_lines",
    "visible",
]

LINE_BOUNDARIES = "\n\r\v\f\x1c\x1d\x1e\x85\u2028\u2029"
"""Every character :meth:`str.splitlines` breaks a line at (CRLF counts as one boundary)."""

_SPLIT = re.compile("\r\n|[" + re.escape(LINE_BOUNDARIES) + "]")

_LOOKALIKES = str.maketrans(
    {
        # Cyrillic capitals and small letters that read as Latin ones
        "А": "a", "В": "b", "Е": "e", "К": "k", "М": "m", "Н": "h", "О": "o", "Р": "p",
        "С": "c", "Т": "t", "Х": "x", "У": "y", "І": "i", "Ј": "j", "Ѕ": "s", "Ү": "y",
        "а": "a", "е": "e", "о": "o", "р": "p", "с": "c", "у": "y", "х": "x", "і": "i",
        "ј": "j", "ѕ": "s", "һ": "h", "ԁ": "d", "ԛ": "q", "ԝ": "w", "ӏ": "l",
        # Greek
        "Α": "a", "Β": "b", "Ε": "e", "Ζ": "z", "Η": "h", "Ι": "i", "Κ": "k", "Μ": "m",
        "Ν": "n", "Ο": "o", "Ρ": "p", "Τ": "t", "Υ": "y", "Χ": "x", "ο": "o", "ι": "i",
        "ν": "v", "α": "a", "τ": "t", "υ": "u", "ρ": "p",
        # other letters
        "ı": "i", "ℓ": "l", "ɑ": "a", "ɡ": "g",
        # brackets
        "【": "[", "】": "]", "〔": "[", "〕": "]", "⟦": "[", "⟧": "]", "❲": "[", "❳": "]",
        "⁅": "[", "⁆": "]", "〚": "[", "〛": "]", "⦋": "[", "⦌": "]", "〖": "[", "〗": "]",
        "‹": "<", "›": ">", "〈": "<", "〉": ">", "⟨": "<", "⟩": ">", "˂": "<", "˃": ">",
        "ᐸ": "<", "ᐳ": ">", "《": "<", "》": ">", "«": "<", "»": ">",
        # colons and dashes
        "∶": ":", "ː": ":", "꞉": ":", "։": ":", "׃": ":", "‐": "-", "‑": "-", "‒": "-",
        "–": "-", "—": "-", "−": "-", "═": "=", "＝": "=",
    }
)  # fmt: skip


def split_lines(text: str) -> list[str]:
    """``text`` split at every Unicode line boundary; ``"a<LF>"`` gives ``["a", ""]``."""
    return _SPLIT.split(text)


def _hidden(char: str) -> bool:
    return char != "\t" and unicodedata.category(char) in ("Cf", "Cc")


def visible(text: str) -> str:
    """``text`` with format and control characters (tab aside) written as ``<U+XXXX>``."""
    if text.isprintable():
        return text
    return "".join(f"<U+{ord(c):04X}>" if _hidden(c) else c for c in text)


def one_line(text: str) -> str:
    """``text`` for a structural line: line boundaries and hidden characters as ``<U+XXXX>``."""
    if text.isprintable():
        return text
    return "".join(f"<U+{ord(c):04X}>" if c in LINE_BOUNDARIES or _hidden(c) else c for c in text)


def fold(line: str) -> str:
    """The look-alike skeleton of ``line``: what it reads as, lower-cased (see the module doc)."""
    text = unicodedata.normalize("NFKD", unicodedata.normalize("NFKC", line))
    text = "".join(c for c in text if unicodedata.category(c) not in ("Mn", "Cf", "Cc"))
    return unicodedata.normalize("NFKC", text.translate(_LOOKALIKES)).casefold()


_ROLE = r"(?:system|user|assistant|human|ai|tool ?results?|tool ?output|tools|tool ?calls?)"
_LABEL = (  # the headings of the judge prompts that carry trace text
    r"(?:question|answer|reference answer|answer to judge|context|passages?|statements?|claims?"
    r"|conversation|desired outcome|arrived outcome|result|verdict)"
)
_IMITATION = re.compile(
    r"^[\s\W_]*(?:"
    rf"(?:\[\s*\d+\s*\]\s*)?{_ROLE}\s*(?::|\(|\bfrom\b|$)"  # [6] ASSISTANT, AI:, TOOL RESULT from
    rf"|{_LABEL}\s*:"  # a prompt heading: Answer: / Statements:
    r"|(?:begin|end)\s*transcript"  # a boundary line
    r"|-+\s*(?:>\s*tool|retrieved)"  # a tool call or retrieval line
    r"|truncated\s*:"
    r")"
)


def imitates_syntax(line: str) -> bool:
    """Whether a content line reads, through look-alikes, as a structural or heading line.

    Structural lines are those of the transcript formatters (``[6] ASSISTANT``, ``Human:``,
    ``AI:``, ``ToolOutput:``, ``-> tool call``, boundary lines) and the headings of the judge
    prompts (``Answer:``, ``Statements:``...), after :func:`fold`.
    """
    return _IMITATION.match(fold(line)) is not None


def quote_lines(text: str) -> list[str]:
    """``text`` as quoted content lines: ``| line``, ``|! line`` when the line imitates syntax.

    Split with :func:`split_lines`, hidden characters made :func:`visible`; an empty line is
    ``|``. No returned line can be read as anything but quoted content.
    """
    return [
        ("|! " if imitates_syntax(line) else "| ") + visible(line) if line else "|"
        for line in split_lines(text)
    ]


def boundary_digest(rendering: str) -> str:
    """First 16 hex digits of the SHA-256 of ``rendering`` (UTF-8, lone surrogates kept)."""
    return hashlib.sha256(rendering.encode("utf-8", "surrogatepass")).hexdigest()[:16]
