"""Live evaluation: ``agent-eval serve`` scores conversations as their spans arrive.

The public face is the OTLP/HTTP :class:`Receiver` and its bounds (:class:`ReceiverLimits`);
``agent-eval serve`` runs it. The implementation, in private modules:

- :mod:`agent_eval.live._payloads`: OTLP/HTTP request bodies (protobuf or JSON, gzip) to items;
- :mod:`agent_eval.live._buffer`: spans held per trace until a conversation closes, in bounded
  memory, and the conversations already scored (for re-scoring late spans);
- :mod:`agent_eval.live._selection`: which closed conversations are judged (``--where``
  filters on span and resource attributes, then a seeded ``--sample``);
- :mod:`agent_eval.live._scorer`: closed conversations scored into the results store, by every
  metric;
- :mod:`agent_eval.live._receiver`: the aiohttp server (``/v1/traces``, ``/v1/logs``,
  ``/healthz``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.live._receiver import Receiver, ReceiverLimits

__all__ = ["Receiver", "ReceiverLimits"]


def __getattr__(name: str) -> Any:
    """Import the receiver on first use (PEP 562): aiohttp loads slowly."""
    if name not in __all__:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module("agent_eval.live._receiver"), name)
