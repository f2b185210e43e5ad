"""Results written into other tools.

:func:`export_annotations` writes a run's results to Arize Phoenix as span annotations (the
``phoenix`` extra) and returns what it wrote and what it could not (:class:`ExportReport`).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.export._phoenix import ExportReport, export_annotations

__all__ = [
    "ExportReport",
    "export_annotations",
]

_HOME = {
    "ExportReport": "agent_eval.export._phoenix",
    "export_annotations": "agent_eval.export._phoenix",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
