"""Formatting: versioned, fingerprinted, frozen ``AgentTrace -> str`` renderers.

One concept per module:

- :mod:`~agent_eval.formatting._base`: the :class:`Formatter` ABC and parameter models.
- :mod:`~agent_eval.formatting._identity`: ``name@version[param=value,...]`` parsing/printing.
- :mod:`~agent_eval.formatting._registry`: the ``agent_eval.formatters`` entry-point registry
  and :func:`get_formatter`.
- :mod:`~agent_eval.formatting._loading`: formatters from a directory, file or module path.
- :mod:`~agent_eval.formatting._probe_set`: the versioned probe traces.
- :mod:`~agent_eval.formatting._fingerprint`: sha256 over the probe set's renderings.
- :mod:`~agent_eval.formatting._lock`: the built-ins' ``formatters.lock`` and its check.
- :mod:`~agent_eval.formatting._hardening`: trace text shown as data (:func:`quote_lines`,
  :func:`one_line`, :func:`boundary_digest`), for formatters that harden their output.

Example::

    formatter = get_formatter("transcript@1[max_tool_chars=2000]")
    text = formatter.render(trace)
    identity = f"{formatter.identity}#{fingerprint(formatter)}"
"""

from agent_eval.formatting._base import Formatter, FormatterParams, NoParams
from agent_eval.formatting._fingerprint import FINGERPRINT_SCHEME, fingerprint, probe_renderings
from agent_eval.formatting._hardening import boundary_digest, one_line, quote_lines
from agent_eval.formatting._identity import FormatterSpec, format_identity, parse_identity
from agent_eval.formatting._loading import load_formatters
from agent_eval.formatting._lock import (
    LockReport,
    check_lock,
    default_lock_path,
    update_lock,
    verify_lock,
)
from agent_eval.formatting._probe_set import PROBE_SET_VERSION, probe_set
from agent_eval.formatting._registry import (
    ENTRY_POINT_GROUP,
    formatter_class,
    formatters,
    get_formatter,
    register,
)

__all__ = [
    "ENTRY_POINT_GROUP",
    "FINGERPRINT_SCHEME",
    "PROBE_SET_VERSION",
    "Formatter",
    "FormatterParams",
    "FormatterSpec",
    "LockReport",
    "NoParams",
    "boundary_digest",
    "check_lock",
    "default_lock_path",
    "fingerprint",
    "format_identity",
    "formatter_class",
    "formatters",
    "get_formatter",
    "load_formatters",
    "one_line",
    "parse_identity",
    "probe_renderings",
    "probe_set",
    "quote_lines",
    "register",
    "update_lock",
    "verify_lock",
]
