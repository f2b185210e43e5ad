"""The cyclic garbage collector kept off the CLI's start-up (imports, the command's click object).

Starting ``agent-eval ingest`` imports about 330 modules and builds a few hundred classes; those
objects live for the whole process, and the collector walked them about 80 times (73 young and
7 middle collections) before the command ran, freeing about 600 objects: about 5% of a small
``ingest``'s instructions (issue 15), and every later full collection walked them again.

:func:`agent_eval.cli._app.main` pauses the collector (:func:`pause_collector`) until the
command's own code is about to run; then :func:`resume_collector` moves what start-up made to
the permanent generation (:func:`gc.freeze`, meant for such long-lived objects) and enables the
collector again. When ``main`` returns, :func:`thaw` puts those objects back in the oldest
generation, so a program that calls ``main`` in process keeps an ordinary collector. Nothing is
done to a collector the program disabled, or that holds objects someone else froze.
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["collector_paused", "pause_collector", "resume_collector", "thaw"]

_paused = False
"""Whether :func:`pause_collector` disabled the collector (:func:`resume_collector` enables it)."""
_may_freeze = False
"""Whether the pause may end in :func:`gc.freeze` (nothing was frozen before it)."""
_frozen = False
"""Whether :func:`resume_collector` froze the start-up's objects (so :func:`thaw` unfreezes)."""


def pause_collector(*, then_freeze: bool = False) -> None:
    """Disable the cyclic garbage collector, if it is enabled, until :func:`resume_collector`.

    ``then_freeze``: the resume freezes what was made meanwhile (``main`` only), provided no
    object is frozen now (``gc.get_freeze_count() == 0``).
    """
    global _paused, _may_freeze  # noqa: PLW0603  (one collector per process)
    if gc.isenabled():
        gc.disable()
        _paused = True
        _may_freeze = then_freeze and gc.get_freeze_count() == 0


def resume_collector() -> None:
    """Enable the collector again if :func:`pause_collector` disabled it; otherwise nothing.

    After ``pause_collector(then_freeze=True)`` every object alive is first moved to the
    permanent generation (:func:`gc.freeze`), which no collection walks, until :func:`thaw`.
    """
    global _paused, _may_freeze, _frozen  # noqa: PLW0603
    if _paused:
        if _may_freeze:
            gc.freeze()
            _frozen = True
        _paused = _may_freeze = False
        gc.enable()


def thaw() -> None:
    """Undo :func:`resume_collector`'s freeze (:func:`gc.unfreeze`), if it froze anything."""
    global _frozen  # noqa: PLW0603
    if _frozen:
        _frozen = False
        gc.unfreeze()


@contextmanager
def collector_paused() -> Iterator[None]:
    """The collector paused for the block (imports), unless it is already paused or disabled."""
    if not gc.isenabled():
        yield
        return
    pause_collector()
    try:
        yield
    finally:
        resume_collector()
