"""Bad records at the start of a JSON Lines file: held until a good one shows the format (private).

A JSON Lines file whose first line is bad (cut off, garbled, another process's output) is still
JSON Lines when a good record follows: the bad line must cost only itself, as it does anywhere
else in the file. A file whose first records are all bad is another format (or not JSON at all)
and is rejected whole, with the first record's error. :func:`hold_leading_bad` gives that rule
to every JSON Lines reader: the bad records before the first good one are held back, then
yielded with it, or turned into the error when :data:`MAX_LEADING_BAD` of them (or the end of
the file) come first.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator
from typing import TypeVar

__all__ = ["MAX_LEADING_BAD", "hold_leading_bad"]

MAX_LEADING_BAD = 100
"""Bad records before the first good one beyond which a file is not taken for JSON Lines."""

Item = TypeVar("Item")


def hold_leading_bad(
    items: Iterable[Item], is_bad: Callable[[Item], bool], fail: Callable[[Item], Exception]
) -> Iterator[Item]:
    """``items`` unchanged, once a good one has shown that the file is of the format.

    Args:
        items: A reader's records and bad-record notes, in file order.
        is_bad: Whether an item is a bad record.
        fail: The error (usually a ``DecodeError`` naming file and line) for the first bad
            item, raised when no good item comes within :data:`MAX_LEADING_BAD`.

    Raises:
        Exception: ``fail(first bad item)``, when the file has no good record in reach.

    """
    held: list[Item] | None = []
    for item in items:
        if held is None:
            yield item
        elif is_bad(item):
            held.append(item)
            if len(held) > MAX_LEADING_BAD:
                raise fail(held[0])
        else:
            yield from held
            held = None
            yield item
    if held:
        raise fail(held[0])
