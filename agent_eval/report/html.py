"""Render :class:`~agent_eval.report.model.ReportData` to ONE self-contained HTML file.

Trace content is untrusted. The page is rendered by jinja2 with autoescape on, so every value
from results and renderings is HTML-escaped; the only unescaped inserts are our own stylesheet
and the plots' ``data:`` PNG URIs. A strict Content-Security-Policy meta tag backs this up:
nothing may load from anywhere (``default-src 'none'``), no script may run, images only from
``data:`` URIs, and the one ``<style>`` block is allowed by its sha256 hash. The file makes no
network request.
"""

from __future__ import annotations

import base64
import hashlib
from importlib.resources import files
from pathlib import Path

from jinja2 import Environment, PackageLoader, StrictUndefined
from markupsafe import Markup

from agent_eval.errors import OutputError
from agent_eval.report.model import ReportData
from agent_eval.report.plots import confusion_plot, cost_plot, flips_plot, stability_plot
from agent_eval.report.terminal import fixed, usd

__all__ = ["content_security_policy", "render_html", "write_html"]

_ENV = Environment(
    loader=PackageLoader("agent_eval.report", "templates"),
    autoescape=True,
    undefined=StrictUndefined,
    keep_trailing_newline=True,
)
_ENV.filters["fixed"] = fixed
_ENV.filters["usd"] = usd


def _css() -> str:
    return files("agent_eval.report").joinpath("templates/report.css").read_text("utf-8")


def content_security_policy(css: str) -> str:
    """The page's CSP: no sources at all, except ``data:`` images and the hashed stylesheet."""
    digest = base64.b64encode(hashlib.sha256(css.encode("utf-8")).digest()).decode("ascii")
    return (
        "default-src 'none'; script-src 'none'; object-src 'none'; base-uri 'none'; "
        f"form-action 'none'; img-src data:; style-src 'sha256-{digest}'"
    )


def _plots(data: ReportData) -> dict[str, str]:
    plots: dict[str, str] = {}
    if data.comparison is not None:
        plots["cost"] = cost_plot(data.comparison.variants)
        if data.comparison.pairs:
            plots["flips"] = flips_plot(data.comparison.pairs)
    for variant, st in data.stability.items():
        plots[f"stability:{variant}"] = stability_plot(st)
    for variant, cal in data.calibration.items():
        if cal.n:
            plots[f"confusion:{variant}"] = confusion_plot(cal.confusion)
    return plots


def render_html(data: ReportData) -> str:
    """The report as one HTML document (str)."""
    css = _css()
    plots = _plots(data)
    return _ENV.get_template("report.html.j2").render(
        data=data,
        css=Markup(css),  # our own stylesheet: trusted, and hashed into the CSP
        csp=content_security_policy(css),
        plots=plots,  # data URIs: base64 needs no escaping, autoescape still applies
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
