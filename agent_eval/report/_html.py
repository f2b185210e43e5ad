"""Render :class:`~agent_eval.report._model.ReportData` to ONE self-contained HTML file.

Trace content is untrusted. The page is rendered by jinja2 with autoescape on, so every value
from results, traces and renderings is HTML-escaped; the only unescaped inserts are our own
stylesheet and script and the SVG plots we draw (every text in them escaped). A strict
Content-Security-Policy meta tag backs this up: nothing may load from anywhere
(``default-src 'none'``), the one ``<style>`` block and the one ``<script>`` block are allowed by
their sha256 hashes (CSP Level 2 hash sources), so no other script can run even if markup got
in (inline event handlers are never allowed: there is no ``'unsafe-hashes'``), and images only
from ``data:`` URIs. The file makes no network request.

The script (``templates/report.js``) sorts, filters, searches and pages the results table and
opens the conversation a link points at; without it the page shows everything, unsorted.
"""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Sequence
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from agent_eval._costs import NO_JUDGE
from agent_eval._result import MetricResult
from agent_eval.errors import OutputError
from agent_eval.report import _plots as plots
from agent_eval.report._model import ConversationRow, ReportData, RunSummary, anchor, natural_key
from agent_eval.report._terminal import fixed, usd
from agent_eval.report._trajectory import AXIS
from agent_eval.report._transcript import (
    clip,
    folds,
    json_text,
    layout,
    locate,
    pretty_json,
)

__all__ = ["OPEN_ALL_UP_TO", "content_security_policy", "render_html", "write_html"]

OPEN_ALL_UP_TO = 5
"""Conversation sections start open when the report has at most this many conversations."""

_ENV = Environment(
    loader=PackageLoader("agent_eval.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    keep_trailing_newline=True,
)
_ENV.filters["fixed"] = fixed
_ENV.filters["usd"] = usd
_ENV.filters["anchor"] = anchor


def duration(ms: float | None) -> str:
    """Milliseconds as the timeline shows them: ``250 ms``, ``1.25 s``, ``2.5 min``."""
    if ms is None:
        return ""
    if ms < 1000:
        return f"{ms:.0f} ms"
    if ms < 60_000:
        return f"{ms / 1000:.2f} s"
    return f"{ms / 60_000:.1f} min"


_ENV.filters["ms"] = duration


def _no_judge(summary: RunSummary) -> bool:
    """Whether every row is of a judge-free metric (judge model ``none``, no judge token).

    Its judge cost then reads ``no judge``, as in the terminal's usage table ("judge total
    none (no judge called)"), never ``$0.0000``: no judge was called, so there is no cost.
    """
    return (
        bool(summary.identities)
        and all(i.judge_model == NO_JUDGE for i in summary.identities)
        and not summary.input_tokens + summary.output_tokens
    )


_ENV.globals.update(
    no_judge=_no_judge,
    clip=clip,
    folds=folds,
    json_text=json_text,
    layout=layout,
    locate=locate,
    pretty_json=pretty_json,
)


def body_text(value: object) -> Markup:
    """``value`` escaped for element content: ``&``, ``<`` and ``>`` only.

    Inside an element (not an attribute) quotes are plain text (HTML Living Standard, 13.1.3),
    so JSON and quoted text stay their own size instead of growing 5 bytes per quote. Use it
    for text between tags only, never inside an attribute value.
    """
    if isinstance(value, Markup):  # already safe markup: as it is
        return value
    text = str(value)
    return Markup(text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;"))


_ENV.filters["body"] = body_text


def _asset(name: str) -> str:
    return files("agent_eval.report").joinpath(f"templates/{name}").read_text("utf-8")


def _sha256(text: str) -> str:
    return base64.b64encode(hashlib.sha256(text.encode("utf-8")).digest()).decode("ascii")


def content_security_policy(css: str, script: str | None = None) -> str:
    """The page's CSP: no sources at all, except ``data:`` images and the hashed style/script.

    Args:
        css: The exact text of the page's ``<style>`` block.
        script: The exact text of its ``<script>`` block; ``None``: no script may run.

    """
    scripts = f"'sha256-{_sha256(script)}'" if script is not None else "'none'"
    return (
        f"default-src 'none'; script-src {scripts}; object-src 'none'; base-uri 'none'; "
        f"form-action 'none'; img-src data:; style-src 'sha256-{_sha256(css)}'"
    )


def _groups(rows: Sequence[ConversationRow]) -> dict[str, list[MetricResult]]:
    groups: dict[str, list[MetricResult]] = {}
    for row in rows:
        groups.setdefault(row.variant, []).append(row.result)
    return groups


def _plots(data: ReportData) -> dict[str, Markup]:
    groups = _groups(data.rows)
    drawn = {
        "scores": plots.score_plot(groups),
        "status": plots.status_plot(groups),
        "tokens": plots.tokens_plot(groups),
        "latency": plots.latency_plot(groups),
    }
    if data.comparison is not None:
        drawn["flips"] = plots.flips_plot(
            [
                (f"{p.variant_a} vs {p.variant_b}", p.flips_a_pass_b_fail, p.flips_a_fail_b_pass)
                for p in data.comparison.pairs
            ]
        )
        drawn["cost"] = plots.cost_plot(
            [
                (v.variant, v.cost_usd, v.input_tokens + v.output_tokens)
                for v in data.comparison.variants
            ]
        )
    for variant, view in data.stability.items():
        st = view.stability
        counts = [0] * (st.repeats + 1)
        for c in st.conversations:
            if c.n_pass + c.n_fail == st.repeats:
                counts[c.n_pass] += 1
        drawn[f"stability:{variant}"] = plots.stability_plot(counts)
    for variant, cal in data.calibration.items():
        drawn[f"confusion:{variant}"] = plots.confusion_plot(cal.confusion) if cal.n else None
    return {name: svg for name, svg in drawn.items() if svg is not None}


def _filters(data: ReportData) -> dict[str, list[str]]:
    """The results table's filter menus: the values present, naturally sorted."""

    def values(pick: str) -> list[str]:
        present = {
            str(
                row.agreement
                if pick == "agreement"
                else (row.result.verdict or "none")
                if pick == "verdict"
                else getattr(row.result, pick)
            )
            for row in data.rows
        }
        return sorted(present, key=natural_key)

    menus = {name: values(name) for name in ("status", "verdict", "metric", "formatter")}
    if data.labelled:
        menus["agreement"] = values("agreement")
    return menus


def _bar_rules() -> str:
    """The timeline's bar positions: ``.x0``-``.x99`` (left) and ``.w1``-``.w100`` (width), in %.

    Classes, not ``style`` attributes: the CSP allows only the hashed stylesheet, and a class
    is a few bytes a step where an inline SVG bar is over a hundred (2,000 conversations).
    """
    lefts = " ".join(f".x{i}{{left:{i}%}}" for i in range(AXIS))
    widths = " ".join(f".w{i}{{width:{i}%}}" for i in range(1, AXIS + 1))
    return f"\n{lefts}\n{widths}\n"


def render_html(data: ReportData) -> str:
    """The report as one HTML document (str)."""
    css = _asset("report.css") + _bar_rules()
    script = _asset("report.js")
    return _ENV.get_template("report.html.j2").render(
        data=data,
        css=Markup(css),  # our own stylesheet: trusted, and hashed into the CSP
        script=Markup(script),  # our own script: trusted, and hashed into the CSP
        csp=content_security_policy(css, script),
        plots=_plots(data),  # SVG we drew, every text in it escaped
        filters=_filters(data),
        open_all=len(data.conversations) <= OPEN_ALL_UP_TO,
    )


def write_html(data: ReportData, path: str | Path) -> Path:
    """Render and write the report to ``path`` (UTF-8).

    Raises:
        StoreError: The file cannot be written.

    """
    target = Path(path)
    try:
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_text(render_html(data), encoding="utf-8")
    except OSError as exc:
        raise OutputError(f"cannot write the report to {target}: {exc}") from exc
    return target
