"""Each live conversation read once by the detector: :func:`cached_flags`.

A run scores the same trace object under several metrics and units; :func:`detect` is pure, so
its flags are kept with a weak reference to the trace they came from and handed back only for
that same object (as :class:`~agent_eval.run._rendering.RenderCache` keeps renderings). An entry
goes when its trace is no longer used, so memory follows the traces in flight.
"""

from __future__ import annotations

import threading
import weakref

from agent_eval._trace import AgentTrace
from agent_eval.steering._detector import detect
from agent_eval.steering._flag import SteeringFlag

__all__ = ["cached_flags"]

_ENTRIES: dict[int, tuple[weakref.ref[AgentTrace], tuple[SteeringFlag, ...]]] = {}
_LOCK = threading.Lock()


def cached_flags(trace: AgentTrace) -> tuple[SteeringFlag, ...]:
    """``detect(trace)``, computed once per trace object while it lives."""
    key = id(trace)
    found = _ENTRIES.get(key)
    if found is not None and found[0]() is trace:
        return found[1]
    flags = detect(trace)

    def drop(ref: weakref.ref[AgentTrace]) -> None:
        with _LOCK:
            if (entry := _ENTRIES.get(key)) is not None and entry[0] is ref:
                del _ENTRIES[key]

    with _LOCK:
        _ENTRIES[key] = (weakref.ref(trace, drop), flags)
    return flags
