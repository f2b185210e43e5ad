r"""What a reader (a person or a judge model) sees in a text, as plain ASCII-ish for matching.

Steering content hides from simple patterns: mathematical or fullwidth letters (``𝐇𝐮𝐦𝐚𝐧:``),
Cyrillic or Greek look-alikes (``АI:`` with a Cyrillic ``А``), zero-width characters inside
words (``Hu\\u200bman:``), escaped line breaks in JSON tool results (``\\nAI:``), spaced-out or
leetspeak words (``g r a d e r``, ``3valuat0r``). :func:`visible` undoes the first four (NFKC,
Unicode ``Cf`` format characters dropped, a look-alike table from the Unicode confusables list
restricted to Latin targets, escaped line breaks made real); :func:`deobfuscated` also joins
spaced-out letters and reads digits as the letters they stand for, for keyword matching only.
"""

from __future__ import annotations

import re
import unicodedata

__all__ = ["deobfuscated", "visible"]

_LOOK_ALIKES = str.maketrans(
    # Cyrillic and Greek letters that render like Latin ones (Unicode confusables.txt, the
    # entries whose prototype is a single Latin letter); plus the dotless i and the long s.
    "АВЕКМНОРСТХУаеорсухіјѕԁӏІЈЅԛԝɡΑΒΕΖΗΙΚΜΝΟΡΤΥΧοναικρτυıſ",
    "ABEKMHOPCTXYaeopcyxijsdlIJSqwgABEZHIKMNOPTYXovaikptuis",
)
_ESCAPED_BREAK = re.compile(r"\\r\\n|\\n|\\r")
_SPACED = re.compile(r"\b(?:[A-Za-z][ .\-_*·]){3,}[A-Za-z]\b")
_SPACED_HINT = re.compile(r"[A-Za-z][ .\-_*·][A-Za-z][ .\-_*·][A-Za-z][ .\-_*·][A-Za-z]")
_LEET_HINT = re.compile(r"[A-Za-z][0-9@$]|[0-9@$][A-Za-z]")
_SEPARATORS = re.compile(r"[ .\-_*·]")
_LEET = str.maketrans("013457@$", "oieastas")
_LEET_WORD = re.compile(r"\b(?=[A-Za-z0-9@$]*[A-Za-z])(?=[A-Za-z0-9@$]*[0-9@$])[A-Za-z0-9@$]{4,}\b")


_FORMAT_CHARS = re.compile(
    # Unicode general category Cf (format characters), as of Unicode 15
    "[\u00ad\u0600-\u0605\u061c\u06dd\u070f\u0890\u0891\u08e2\u180e\u200b-\u200f"
    "\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff\ufff9-\ufffb\U000110bd\U000110cd"
    "\U00013430-\U0001343f\U0001bca0-\U0001bca3\U0001d173-\U0001d17a\U000e0001"
    "\U000e0020-\U000e007f]"
)


def visible(text: str) -> str:
    r"""``text`` as a reader sees it: NFKC, format characters dropped, look-alikes as Latin.

    Escaped line breaks (the two characters ``\\n``) become real ones, since a judge reading a
    JSON tool result reads them as breaks. The result may be shorter than ``text``.
    """
    folded = unicodedata.normalize("NFKC", text)
    if not folded.isascii():
        folded = _FORMAT_CHARS.sub("", folded).translate(_LOOK_ALIKES)
    return _ESCAPED_BREAK.sub("\n", folded)


def deobfuscated(text: str) -> str:
    """:func:`visible` text with spaced-out letters joined and leetspeak words read as letters.

    ``g r a d e r`` becomes ``grader``, ``3valuat0r`` becomes ``evaluator``; words without
    digits, and numbers, stay as they are (so ``score 1`` keeps its ``1``).
    """
    if _SPACED_HINT.search(text):  # the hints first: a plain scan is much faster than \b...
        text = _SPACED.sub(lambda m: _SEPARATORS.sub("", m.group()), text)
    if _LEET_HINT.search(text):
        text = _LEET_WORD.sub(lambda m: m.group().translate(_LEET), text)
    return text
