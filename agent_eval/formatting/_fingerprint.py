r"""Formatter fingerprints: sha256 over the renderings of the probe set.

Definition (scheme ``agent-eval-fingerprint/1``), for a formatter ``f`` and probe set version
``v`` with traces ``t_1 .. t_n`` in their fixed order: feed SHA-256 the UTF-8 bytes of

    ``"agent-eval-fingerprint/1\n"`` + ``"probe-set/{v}\n"``

then, for each trace ``t_i``, with ``r_i = f.render(t_i).encode("utf-8", "surrogatepass")``:

    ``"{t_i.conversation_id}\n{len(r_i)}\n"`` (UTF-8; the length in bytes, decimal), then ``r_i``.

The fingerprint is the lowercase hex digest (64 characters). The length prefix makes the framing
unambiguous, so two formatters share a fingerprint only if they render every probe identically.
The identity (name, version, parameters) is not hashed: the fingerprint is behaviour alone.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._probe_set import PROBE_SET_VERSION, probe_set

__all__ = ["FINGERPRINT_SCHEME", "fingerprint", "probe_renderings"]

FINGERPRINT_SCHEME = "agent-eval-fingerprint/1"
"""The recipe's name and version, hashed first into every fingerprint (a new recipe, a new name)."""


def probe_renderings(
    formatter: Formatter[Any], version: int = PROBE_SET_VERSION
) -> list[tuple[AgentTrace, str]]:
    """``(probe trace, rendering)`` for every trace of probe set ``version``, in order."""
    return [(trace, formatter.render(trace)) for trace in probe_set(version)]


def _digest(version: int, renderings: Iterable[tuple[AgentTrace, str]]) -> str:
    sha = hashlib.sha256(f"{FINGERPRINT_SCHEME}\nprobe-set/{version}\n".encode())
    for trace, text in renderings:
        data = text.encode("utf-8", "surrogatepass")
        sha.update(f"{trace.conversation_id}\n{len(data)}\n".encode())
        sha.update(data)
    return sha.hexdigest()


def fingerprint(formatter: Formatter[Any], version: int = PROBE_SET_VERSION) -> str:
    """The 64-hex sha256 fingerprint of ``formatter`` over probe set ``version``.

    Raises:
        ConfigError: ``version`` is not a known probe set.

    """
    return _digest(version, probe_renderings(formatter, version))
