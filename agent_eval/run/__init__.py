"""How a run works: from AgentTraces and a metric to stored results.

The public face: :class:`RunSession`, the one owner of a scoring run (every entry point goes
through it) with its callbacks (:class:`SessionHooks`) and what a run spent
(:class:`RunSpend`); :class:`Engine`, concurrent scoring of one metric (every unit ends as
exactly one result); :func:`read_conversations` and :func:`read_renderings`, two of the run
directory's files (docs/run-directory.md). The implementation is in private modules, one
concept each, in the order a run uses them: ``_session`` and ``_artifacts`` (the run
directory), ``_plan`` (what a run will send), ``_outcomes``, ``_engine``, ``_judge_stack``,
``_cache``, ``_ratelimit``, ``_store``, ``_runs`` (resume and retry), ``_summary``.
"""

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.run._artifacts import read_conversations, read_renderings
    from agent_eval.run._engine import Engine
    from agent_eval.run._session import RunSession, SessionHooks
    from agent_eval.run._spend import RunSpend

__all__ = [
    "Engine",
    "RunSession",
    "RunSpend",
    "SessionHooks",
    "read_conversations",
    "read_renderings",
]

_LAZY = {
    "Engine": "agent_eval.run._engine",
    "RunSession": "agent_eval.run._session",
    "SessionHooks": "agent_eval.run._session",
    "RunSpend": "agent_eval.run._spend",
    "read_conversations": "agent_eval.run._artifacts",
    "read_renderings": "agent_eval.run._artifacts",
}
"""The public face, imported on first use (``import agent_eval.run._event_loop`` stays light)."""


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    module = _LAZY.get(name)
    if module is None:
        raise AttributeError(f"module 'agent_eval.run' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(module), name)
