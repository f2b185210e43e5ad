"""Formatting: versioned, fingerprinted, frozen ``AgentTrace -> str`` renderers.

- :mod:`~agent_eval.formatting.base`: the :class:`Formatter` ABC and parameter models.
- :mod:`~agent_eval.formatting.identity`: ``name@version[param=value,...]`` parsing/printing.
- :mod:`~agent_eval.formatting.registry`: the ``agent_eval.formatters`` entry-point registry
  and :func:`get_formatter`.
"""

from agent_eval.formatting.base import Formatter, FormatterParams, NoParams
from agent_eval.formatting.identity import FormatterSpec, format_identity, parse_identity
from agent_eval.formatting.registry import (
    ENTRY_POINT_GROUP,
    formatter_class,
    formatters,
    get_formatter,
    register,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "Formatter",
    "FormatterParams",
    "FormatterSpec",
    "NoParams",
    "format_identity",
    "formatter_class",
    "formatters",
    "get_formatter",
    "parse_identity",
    "register",
]
