"""Stored renderings (``renderings.jsonl``): now in :mod:`agent_eval.run.artifacts`.

Kept so that imports of this module keep working; new code imports from there.
"""

from agent_eval.run.artifacts import (
    RENDERINGS_NAME,
    RenderingKey,
    append_rendering,
    read_renderings,
    render_all,
    tokens_by_formatter,
    write_rendering_items,
    write_renderings,
)

__all__ = [
    "RENDERINGS_NAME",
    "RenderingKey",
    "append_rendering",
    "read_renderings",
    "render_all",
    "tokens_by_formatter",
    "write_rendering_items",
    "write_renderings",
]
