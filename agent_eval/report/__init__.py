"""Reports: the self-contained HTML report of a run, its plots and stored renderings.

Public names are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.report.conversations import (
        CONVERSATIONS_NAME,
        read_conversations,
        write_conversations,
    )
    from agent_eval.report.html import (
        content_security_policy,
        render_html,
        write_html,
    )
    from agent_eval.report.model import (
        ConversationRow,
        ReportData,
        RunInfo,
        RunSummary,
        build_report,
    )
    from agent_eval.report.renderings import (
        RENDERINGS_NAME,
        read_renderings,
        render_all,
        tokens_by_formatter,
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
    "CONVERSATIONS_NAME": "agent_eval.report.conversations",
    "read_conversations": "agent_eval.report.conversations",
    "write_conversations": "agent_eval.report.conversations",
    "ConversationRow": "agent_eval.report.model",
    "RENDERINGS_NAME": "agent_eval.report.renderings",
    "ReportData": "agent_eval.report.model",
    "RunInfo": "agent_eval.report.model",
    "RunSummary": "agent_eval.report.model",
    "build_report": "agent_eval.report.model",
    "content_security_policy": "agent_eval.report.html",
    "read_renderings": "agent_eval.report.renderings",
    "render_all": "agent_eval.report.renderings",
    "render_html": "agent_eval.report.html",
    "tokens_by_formatter": "agent_eval.report.renderings",
    "write_html": "agent_eval.report.html",
    "write_renderings": "agent_eval.report.renderings",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
