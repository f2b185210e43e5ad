"""The probe set: a fixed, versioned list of AgentTraces covering the shapes that break renderers.

A formatter's fingerprint (:mod:`agent_eval.formatting._fingerprint`) is computed over its
renderings of these traces, so any change of behaviour on any of these shapes changes the
fingerprint. Probe set 1 is frozen: changing it would change every locked fingerprint. A new
shape goes into a new probe set version (a new module ``probes_vN`` registered in
``_PROBE_SETS``).

Shapes in version 1, one conversation each (``conversation_id`` in brackets): a plain tool loop
[``probe-basic``], empty content everywhere [``probe-empty-content``], an empty tool-call list
[``probe-empty-tool-call-list``], parallel tool calls answered out of order, with and without names
and ids [``probe-parallel-tool-calls``], nested and non-ASCII arguments
[``probe-nested-arguments``], arguments that are not valid JSON or not an object
[``probe-invalid-arguments``], multi-line content with CRLF, tabs and fake role headers
[``probe-multiline``], several system messages [``probe-system-messages``], several agents with
reasoning [``probe-multi-agent``], retrieved documents [``probe-retrievals``], a very long tool
output [``probe-long-tool-output``], markup and prompt-injection payloads [``probe-injection``],
non-text parts [``probe-opaque-parts``] and a conversation without messages [``probe-empty``].
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache

from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.formatting._probes_v1 import PROBES_V1

__all__ = ["PROBE_SET_VERSION", "probe_set"]

PROBE_SET_VERSION = 1
"""The probe set fingerprints are computed over unless another version is asked for."""


_PROBE_SETS: dict[int, tuple[Callable[[], AgentTrace], ...]] = {
    1: PROBES_V1,
}


@cache
def probe_set(version: int = PROBE_SET_VERSION) -> tuple[AgentTrace, ...]:
    """The probe traces of ``version``, in their fixed order.

    Raises:
        ConfigError: ``version`` is not a probe set this agent-eval knows.

    """
    if version not in _PROBE_SETS:
        raise ConfigError(f"unknown probe set version {version}; known: {sorted(_PROBE_SETS)}")
    return tuple(build() for build in _PROBE_SETS[version])
