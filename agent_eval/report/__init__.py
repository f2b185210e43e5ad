"""Reports: the self-contained HTML report of a run, its plots and stored renderings."""

from agent_eval.report.html import content_security_policy, render_html, write_html
from agent_eval.report.model import ConversationRow, ReportData, RunSummary, build_report
from agent_eval.report.renderings import (
    RENDERINGS_NAME,
    read_renderings,
    render_all,
    tokens_by_formatter,
    write_renderings,
)

__all__ = [
    "RENDERINGS_NAME",
    "ConversationRow",
    "ReportData",
    "RunSummary",
    "build_report",
    "content_security_policy",
    "read_renderings",
    "render_all",
    "render_html",
    "tokens_by_formatter",
    "write_html",
    "write_renderings",
]
