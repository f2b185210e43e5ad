"""How a run works: from AgentTraces and a metric to stored results.

One module per concept, in the order a run uses them:

- :mod:`~agent_eval.run._session`: the run session, the one owner of a scoring run (every entry
  point goes through it), and :mod:`~agent_eval.run._artifacts`: the run directory's files.
- :mod:`~agent_eval.run._plan`: what a run will send (units, calls, tokens, cost) before it sends it.
- :mod:`~agent_eval.run._outcomes`: a unit's sample, its skips, and the fields of its result row.
- :mod:`~agent_eval.run._engine`: concurrent scoring; every unit ends as exactly one result.
- :mod:`~agent_eval.run._judge_stack`: the judge wrapped with its cache and rate limits.
- :mod:`~agent_eval.run._cache`: the judge-call cache (SQLite, keyed by the canonical request).
- :mod:`~agent_eval.run._ratelimit`: requests- and tokens-per-minute limits.
- :mod:`~agent_eval.run._store`: the results store (SQLite and JSON Lines, in step).
- :mod:`~agent_eval.run._runs`: run ids, resuming and retrying a stored run.
- :mod:`~agent_eval.run._summary`: the counts and usage a run reports.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.run._session import RunSession, SessionHooks
    from agent_eval.run._spend import RunSpend

__all__ = ["RunSession", "RunSpend", "SessionHooks"]

_LAZY = {
    "RunSession": "agent_eval.run._session",
    "SessionHooks": "agent_eval.run._session",
    "RunSpend": "agent_eval.run._spend",
}
"""The public face, imported on first use (``import agent_eval.run._event_loop`` stays light)."""


def __getattr__(name: str) -> Any:
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_eval.run' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
