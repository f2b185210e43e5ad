"""Reports: the self-contained HTML report of a run, its plots and stored renderings.

Public names are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.report._html import (
        content_security_policy,
        render_html,
        write_html,
    )
    from agent_eval.report._model import (
        ConversationRow,
        ReportData,
        RunInfo,
        RunSummary,
        build_report,
    )
    from agent_eval.run._artifacts import (
        CONVERSATIONS_NAME,
        RENDERINGS_NAME,
        read_conversations,
        read_renderings,
        render_all,
        tokens_by_formatter,
        write_conversations,
        write_renderings,
    )

__all__ = [
    "CONVERSATIONS_NAME",
    "RENDERINGS_NAME",
    "ConversationRow",
    "ReportData",
    "RunInfo",
    "RunSummary",
    "build_report",
    "content_security_policy",
    "read_conversations",
    "read_renderings",
    "render_all",
    "render_html",
    "tokens_by_formatter",
    "write_conversations",
    "write_html",
    "write_renderings",
]

_HOME = {
    "CONVERSATIONS_NAME": "agent_eval.run._artifacts",
    "read_conversations": "agent_eval.run._artifacts",
    "write_conversations": "agent_eval.run._artifacts",
    "ConversationRow": "agent_eval.report._model",
    "RENDERINGS_NAME": "agent_eval.run._artifacts",
    "ReportData": "agent_eval.report._model",
    "RunInfo": "agent_eval.report._model",
    "RunSummary": "agent_eval.report._model",
    "build_report": "agent_eval.report._model",
    "content_security_policy": "agent_eval.report._html",
    "read_renderings": "agent_eval.run._artifacts",
    "render_all": "agent_eval.run._artifacts",
    "render_html": "agent_eval.report._html",
    "tokens_by_formatter": "agent_eval.run._artifacts",
    "write_html": "agent_eval.report._html",
    "write_renderings": "agent_eval.run._artifacts",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
