"""Hidden instructions: text a person reading the conversation does not see, but a model does.

Found on the raw text (before normalization), in this order:

- **invisible text**: Unicode tag characters (U+E0000-U+E007F, which spell ASCII invisibly),
  bidirectional controls (U+202A-U+202E, U+2066-U+2069, which make the shown order differ from
  the read order) not next to a right-to-left letter, a run of four or more zero-width
  characters (U+200B-U+200F, U+2060-U+2064, U+FEFF, U+180E: an encoding in invisible bits), or
  a zero-width space, word joiner or byte-order mark inside a word (between two letters). Stray
  zero-width characters between words, common in text scraped from the web, and the joiners of
  emoji sequences and of scripts that need them, are left alone;
- **encoded payloads**: a base64 (standard or URL-safe) or hex run (within one
  whitespace-separated piece of the text) that decodes to readable
  text of at least three words (random ids, hashes and binary blobs decode to no such text);
- **padding**: a short piece (1-8 characters holding a space or two distinct characters, not
  only separators such as ``-`` or ``=`` nor hex digits) repeated 64 times or more in a row,
  which floods the judge's context so that its own instructions lose their hold (the
  token-flooding attacks of Tensor Trust);
- **markup hidden from view**: HTML comments with words in them, markdown comments
  (``[//]: # (...)``), elements styled invisible (``display:none``, ``visibility:hidden``,
  ``font-size:0``, ``opacity:0``) or marked ``hidden``.
"""

from __future__ import annotations

import base64
import binascii
import re
import unicodedata

__all__ = ["find_hidden"]

_TAGS = re.compile("[\U000e0000-\U000e007f]+")
_BIDI = re.compile("[\u202a-\u202e\u2066-\u2069]")
_ZERO_WIDTH_RUN = re.compile("[\u200b-\u200f\u2060-\u2064\ufeff\u180e]{4,}")
_IN_WORD = re.compile("(?<=[^\\W\\d_])[\u200b\u2060\ufeff\u180e]+(?=[^\\W\\d_])")
_INVISIBLE = re.compile(
    "[\u200b-\u200f\u2060-\u2064\ufeff\u180e\u202a-\u202e\u2066-\u2069\u061c\U000e0000-\U000e007f]"
)
_B64 = re.compile(r"(?<![A-Za-z0-9+/_-])[A-Za-z0-9+/_-]{20,}={0,2}(?![A-Za-z0-9+/_-])")
_HEX = re.compile(r"(?<![0-9A-Fa-f])(?:[0-9A-Fa-f]{2}:?){12,}(?![0-9A-Fa-f])")
_WORDS = re.compile(r"[A-Za-z]{2,}(?:\s+[A-Za-z'\-,.:;!?]{1,})+")
_MARKUP = re.compile(
    r"<!--(?P<comment>.*?)(?:-->|$)"
    r"|^\s*\[//\]:\s*#\s*(?P<markdown>.+)$"
    r"|<[a-z][^<>]*(?:display\s*:\s*none|visibility\s*:\s*hidden|font-size\s*:\s*0(?:px|pt|em)?\b"
    r"|opacity\s*:\s*0(?:\.0+)?\b|\shidden\b|aria-hidden\s*=\s*[\"']?true)[^<>]*>(?P<element>[^<]*)",
    re.IGNORECASE | re.MULTILINE | re.DOTALL,
)
_TEXT_CHARS = frozenset("\n\t\r")
_PADDING = re.compile(r"(.{1,8}?)\1{63,}", re.DOTALL)
_HEX_DIGITS = frozenset("0123456789abcdefABCDEF")
_SEPARATOR_CHARS = frozenset(" \t\n\r-=_*#.~+|:")


def _right_to_left(char: str) -> bool:
    return bool(char) and unicodedata.bidirectional(char) in ("R", "AL", "AN")


def _bidi_misused(text: str) -> int | None:
    """Where a bidirectional control stands away from any right-to-left letter, or ``None``."""
    for match in _BIDI.finditer(text):
        at = match.start()
        near = text[max(at - 2, 0) : at] + text[at + 1 : at + 3]
        if not any(_right_to_left(c) for c in near):
            return at
    return None


def _invisible(text: str) -> str | None:
    if _INVISIBLE.search(text) is None:
        return None
    tags = _TAGS.search(text)
    if tags is not None:
        spelled = "".join(chr(ord(c) - 0xE0000) for c in tags.group() if c > "\U000e001f")
        return f"tag characters spelling: {spelled}"
    at = _bidi_misused(text)
    if at is None:
        found = _ZERO_WIDTH_RUN.search(text) or _IN_WORD.search(text)
        at = None if found is None else found.start()
    if at is None:
        return None
    count = len(_INVISIBLE.findall(text))
    return f"{count} invisible character(s): {_shown(text[max(at - 20, 0) : at + 40])}"


def _shown(text: str) -> str:
    return "".join(
        f"<U+{ord(c):04X}>" if _INVISIBLE.fullmatch(c) else c
        for c in text
        if c.isprintable() or c in _TEXT_CHARS or _INVISIBLE.fullmatch(c)
    )


def _readable(data: bytes) -> str | None:
    """``data`` as text when it is readable words (at least 3), else ``None``."""
    try:
        text = data.decode("utf-8")
    except UnicodeDecodeError:
        return None
    printable = sum(c.isprintable() or c in _TEXT_CHARS for c in text)
    if printable < 0.95 * len(text):
        return None
    words = _WORDS.search(text)
    if words is None or len(words.group().split()) < 3:
        return None
    return text


def _decoded_b64(run: str) -> str | None:
    padded = run + "=" * (-len(run) % 4)
    try:
        data = base64.b64decode(padded.replace("-", "+").replace("_", "/"), validate=True)
    except (binascii.Error, ValueError):
        return None
    return _readable(data)


def _decoded_hex(run: str) -> str | None:
    try:
        return _readable(bytes.fromhex(run.replace(":", "")))
    except ValueError:
        return None


def _payload(text: str) -> str | None:
    # only whitespace-separated pieces long enough to hold one are searched: str.split is far
    # faster than a regex scan of the whole text
    for piece in text.split():
        if len(piece) < 20:
            continue
        for pattern, decode, name in ((_B64, _decoded_b64, "base64"), (_HEX, _decoded_hex, "hex")):
            for match in pattern.finditer(piece):
                decoded = decode(match.group())
                if decoded is not None:
                    return f"{name} payload decoding to: {decoded}"
    return None


def _markup(text: str) -> str | None:
    for match in _MARKUP.finditer(text):
        inner = next(g for g in match.groups() if g is not None)
        words = _WORDS.search(inner)
        if words is not None and len(words.group().split()) >= 2:
            return match.group()
    return None


def _padding_unit(unit: str) -> bool:
    """Whether ``unit`` repeated is padding rather than data.

    Padding repeats tokens (a space in the unit, or two distinct characters); a run of one
    character, of separators or of hex digits is data (rules, dumps), not an attack.
    """
    core = "".join(unit.split())
    if _SEPARATOR_CHARS.issuperset(core) or _HEX_DIGITS.issuperset(core):
        return False
    return any(c.isspace() for c in unit) or len(set(unit)) > 1


_PADDING_TIMES = 64
_LONG_PIECE = 2 * _PADDING_TIMES


def _repeated_tokens(tokens: list[str]) -> str | None:
    """A unit of 1-4 whitespace-separated tokens repeated 64+ times in a row, if padding."""
    for period in range(1, 5):
        same = bytes(a == b for a, b in zip(tokens, tokens[period:], strict=False))
        run = b"\x01" * ((_PADDING_TIMES - 1) * period)
        at = same.find(run)
        while at >= 0:
            unit = " ".join(tokens[at : at + period]) + " "
            if _padding_unit(unit):
                return f"padding: {unit!r} repeated {_PADDING_TIMES}+ times"
            end = same.find(b"\x00", at)  # past this run, to the next one
            at = -1 if end < 0 else same.find(run, end)
    return None


def _padding(text: str) -> str | None:
    """Padding among whitespace-separated tokens, or inside one long piece.

    Tokens are compared as a whole (fast); only pieces long enough to hold a repeated unit
    without spaces are searched with the regular expression.
    """
    if len(text) < _PADDING_TIMES:
        return None
    pieces = text.split()
    found = _repeated_tokens(pieces) if len(pieces) >= _PADDING_TIMES else None
    if found is not None:
        return found
    return next(
        (found for p in pieces if len(p) >= _LONG_PIECE and (found := _padded_piece(p))), None
    )


def _padded_piece(text: str) -> str | None:
    for match in _PADDING.finditer(text):
        unit = match.group(1)
        if _padding_unit(unit):
            times = len(match.group()) // len(match.group(1))
            return f"padding: {match.group(1)!r} repeated {times} times"
    return None


def find_hidden(text: str) -> str | None:
    """The first hidden instruction in raw ``text``, described for the excerpt, or ``None``."""
    if not text.isascii():
        invisible = _invisible(text)
        if invisible is not None:
            return invisible
    markup = _markup(text) if "<" in text or "[//]" in text else None
    return _payload(text) or markup or _padding(text)
