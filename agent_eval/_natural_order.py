"""Natural order of identifiers: digit runs compare by value (``c2`` before ``c10``).

Conversation, unit and run ids are often a prefix and a counter (``c9``, ``c10``,
``begin/12/turn:1``); every list of them shown to a reader (the report, ``calibrate``) is in this
order, so the same ids read the same way everywhere.
"""

from __future__ import annotations

import re

__all__ = ["natural_key"]

_DIGITS = re.compile(r"(\d+)")


def natural_key(text: str) -> tuple[tuple[int, int | str], ...]:
    """Sort key that orders digit runs by value: ``c2`` < ``c10``, ``1`` < ``13`` < ``16``.

    Text parts compare case-folded; a digit run sorts before text at the same position.
    """
    return tuple(
        (0, int(part)) if part.isdigit() else (1, part.casefold())
        for part in _DIGITS.split(text)
        if part
    )
