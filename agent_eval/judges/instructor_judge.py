"""Deprecated alias: ``agent_eval.judges.instructor_judge`` is private now.

Import its public names from the public face:
``agent_eval.judges``.
This module forwards every name of its private home with a :class:`DeprecationWarning` that
names the import to use, for one release, and is removed in agent-eval 0.2
(docs/architecture.md, deprecation policy). The home:
``agent_eval.judges._instructor_judge``.
"""

# privatize: deprecated alias (written by privatize.py, kept outside the project: edit the script)

from __future__ import annotations

import importlib
import warnings
from typing import Any

_FACES: dict[str, str] = {
    "InstructorJudge": "agent_eval.judges",
}
"""Each public name and the public module to import it from."""

_HOMES: tuple[str, ...] = ("agent_eval.judges._instructor_judge",)
"""The private modules that define the names."""


def __getattr__(name: str) -> Any:
    """Forward ``name`` to its new home, warning with the import to use instead."""
    if name.startswith("__"):
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    face = _FACES.get(name)
    home = face or next((h for h in _HOMES if hasattr(importlib.import_module(h), name)), None)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    use = f"from {face} import {name}" if face else f"{home}.{name} (private, may change)"
    warnings.warn(
        f"{__name__} is deprecated and will be removed in agent-eval 0.2; use: {use}",
        DeprecationWarning,
        stacklevel=2,
    )
    return getattr(importlib.import_module(home), name)
