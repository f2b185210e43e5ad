"""Quoted evidence, checked against the context: is the quote really in what the agent had.

A judge that labels a claim SUPPORTED or CONTRADICTED quotes the span of context it relied on.
Models paraphrase, merge passages and invent quotes, so the quote is looked up in the context
after one documented normalization (:func:`normalize`), applied to both sides:

1. Unicode NFKC (full-width forms, ligatures, non-breaking spaces become their plain forms);
2. typographic quotes and apostrophes (‘ ’ ‚ ‛ “ ” „ ‟ « » ′ ″) become ``'`` / ``"``, and the
   dashes ‐ ‑ ‒ – — ― − become ``-``;
3. case folded (:meth:`str.casefold`);
4. every run of whitespace becomes one space, and the ends are stripped.

The quote is then also stripped of quotation marks around it and of a trailing ``...``/``…``
(models wrap or truncate quotes), and found when it is a substring of one passage's normalized
text (a quote never spans two passages). An empty quote is never found.
"""

from __future__ import annotations

import re
import unicodedata
from collections.abc import Sequence
from functools import lru_cache

__all__ = ["find_quote", "normalize"]

_TRANSLATE = str.maketrans(
    {
        **dict.fromkeys("‘’‚‛′`", "'"),
        **dict.fromkeys("“”„‟«»″", '"'),
        **dict.fromkeys("‐‑‒–—―−", "-"),
    }
)
_SPACE = re.compile(r"\s+")
_AROUND = "\"' "


def normalize(text: str) -> str:
    """``text`` normalized for quote matching (NFKC, plain quotes/dashes, casefold, spaces)."""
    text = unicodedata.normalize("NFKC", text).translate(_TRANSLATE).casefold()
    return _SPACE.sub(" ", text).strip()


@lru_cache(maxsize=4096)
def _normalized(text: str) -> str:
    return normalize(text)


def _quote(text: str) -> str:
    quote = normalize(text).strip(_AROUND)
    for ellipsis in ("...", "…"):
        quote = quote.removesuffix(ellipsis).removeprefix(ellipsis)
    return quote.strip(_AROUND)


def find_quote(quote: str | None, passages: Sequence[str]) -> int | None:
    """The index of the first passage containing ``quote`` (normalized), or ``None``.

    Args:
        quote: The judge's quoted evidence.
        passages: The context's passage texts, in order.

    """
    if not quote:
        return None
    needle = _quote(quote)
    if not needle:
        return None
    for index, passage in enumerate(passages):
        if needle in _normalized(passage):
            return index
    return None
