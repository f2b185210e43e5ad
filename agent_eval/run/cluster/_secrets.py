"""Environment variables holding secrets (the judge's API key), sent to Ray workers masked.

The key reaches every worker through Ray's runtime environment (``env_vars``), but Ray's
runtime-environment agent writes each runtime environment it creates, ``env_vars`` included,
in plain text to ``runtime_env_agent.log`` (Ray 2.x). So the value is never put there as it is:
:func:`mask` splits it into two shares, a random one-time pad (``secrets.token_bytes``) and the
value XOR the pad. The masked share travels in the runtime environment (logged, harmless
alone), the pad as the worker's constructor argument (kept by Ray for restarts, harmless
alone); :func:`unmask` joins them in the worker's own process environment. Neither the logs,
nor the task arguments, nor the object store hold the key.
"""

from __future__ import annotations

import base64
import os
import secrets
from collections.abc import Iterable, Mapping

__all__ = ["MASKED_PREFIX", "mask", "unmask"]

MASKED_PREFIX = "AGENT_EVAL_MASKED_"
"""The runtime-environment variable that carries the masked share of variable ``NAME``."""


def _xor(data: bytes, pad: bytes) -> bytes:
    return bytes(a ^ b for a, b in zip(data, pad, strict=True))


def mask(names: Iterable[str]) -> tuple[dict[str, str], dict[str, bytes]]:
    """Split the values of the variables ``names`` (those set) into two shares.

    Returns:
        ``(env_vars, pads)``: the runtime environment's variables (``AGENT_EVAL_MASKED_NAME``:
        base64 of value XOR pad) and the pads by variable name (one per value, as long as it).

    """
    env_vars: dict[str, str] = {}
    pads: dict[str, bytes] = {}
    for name in names:
        value = os.environ.get(name, "").encode()
        if not value:
            continue
        pads[name] = secrets.token_bytes(len(value))
        env_vars[MASKED_PREFIX + name] = base64.b64encode(_xor(value, pads[name])).decode()
    return env_vars, pads


def unmask(pads: Mapping[str, bytes]) -> None:
    """Set each variable of ``pads`` in this process from its masked share and its pad.

    A variable whose masked share is missing (a worker not started with the run's runtime
    environment) is left as it is.
    """
    for name, pad in pads.items():
        masked = os.environ.get(MASKED_PREFIX + name)
        if masked is not None:
            os.environ[name] = _xor(base64.b64decode(masked), pad).decode()
