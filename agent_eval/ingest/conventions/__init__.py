"""Semantic-convention mappers: one module per convention family.

Each module names the semantic-conventions version it follows and keeps its attribute keys as
named constants. Mappers are registered in the ``agent_eval.conventions`` entry-point group.
"""

from agent_eval.ingest.conventions._base import Convention, conventions

__all__ = ["Convention", "conventions"]
