"""Handing the heap memory ``serve`` freed back to the operating system.

A long-running receiver frees memory all the time (conversations evicted to disk, requests
answered, conversations scored), in chunks that sit among live ones: the C allocator keeps such
free pages mapped, so the process's resident size stays at its high-water mark although
nothing uses them. glibc's ``malloc_trim(0)`` returns every whole free page of its heaps to the
system (``madvise(MADV_DONTNEED)``; glibc >= 2.8). :func:`trim` calls it where there is one
(Linux with glibc) and does nothing elsewhere (musl, macOS, Windows): their allocators differ,
and the bound on what the receiver holds does not depend on it.
"""

from __future__ import annotations

import ctypes
import functools
from collections.abc import Callable

__all__ = ["trim"]


@functools.cache
def _malloc_trim() -> Callable[[int], int] | None:
    try:
        function = ctypes.CDLL(None).malloc_trim
    except (OSError, AttributeError):  # not glibc
        return None
    function.argtypes, function.restype = [ctypes.c_size_t], ctypes.c_int
    return function


def trim() -> bool:
    """Return the free pages of the C heap to the system; ``False``: no ``malloc_trim`` here.

    Takes about a millisecond per 100 MB of heap (it walks the free lists).
    """
    function = _malloc_trim()
    if function is None:
        return False
    function(0)
    return True
