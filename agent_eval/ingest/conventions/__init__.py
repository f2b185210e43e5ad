"""Semantic-convention mappers: one module per convention family.

Each module names the semantic-conventions version it follows and keeps its attribute keys as
named constants. Mappers are plugins: subclass :class:`Convention` and register it in the
``agent_eval.conventions`` entry-point group. :func:`strip_inline_data` replaces every inline
payload (an attachment's bytes) in a JSON-like value with a marker.
"""

from agent_eval.ingest.conventions._attachments import strip_inline_data
from agent_eval.ingest.conventions._base import Convention, conventions

__all__ = ["Convention", "conventions", "strip_inline_data"]
