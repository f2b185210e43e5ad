"""The report in headless Chromium: it renders the expected rows; untrusted payloads run nothing.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it). The test skips only when
Chromium is missing outside CI; with ``CI`` set it must run. A control page carrying the same
payloads unescaped proves the harness does see script execution when there is some.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from collections.abc import Callable, Sequence
from html.parser import HTMLParser
from pathlib import Path

import pytest

from agent_eval.cli.app import app
from agent_eval.report.renderings import write_renderings
from agent_eval.result import MetricResult

from .conftest import IMG_ONERROR, SCRIPT_TITLE, SVG_ONLOAD

CHROMIUM_FLAGS = (
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
    "--virtual-time-budget=2000",
)


def _chromium() -> str:
    found = shutil.which("chromium") or (
        "/usr/bin/chromium" if Path("/usr/bin/chromium").exists() else None
    )
    if found is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is not installed, and CI must run this test (.ci/run installs it)"
            )
        pytest.skip("chromium not installed (apt-get install chromium); CI runs this test")
    return found


def _dump_dom(chromium: str, page: Path, profile: Path) -> str:
    done = subprocess.run(
        [chromium, *CHROMIUM_FLAGS, f"--user-data-dir={profile}", "--dump-dom", page.as_uri()],
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return done.stdout


class _Dom(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.title = ""
        self._in_title = False
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))
        self._in_title = tag == "title"

    def handle_endtag(self, tag: str) -> None:
        self._in_title = False

    def handle_data(self, data: str) -> None:
        if self._in_title:
            self.title += data


def _parse(html: str) -> _Dom:
    dom = _Dom()
    dom.feed(html)
    return dom


def _attr(dom: _Dom, tag: str, name: str) -> list[str | None]:
    return [a.get(name) for t, a in dom.tags if t == tag and name in a]


def _payload_rows(make: Callable[..., MetricResult]) -> Sequence[MetricResult]:
    return [
        make("c-ok", "1"),
        make(
            "c-evil",
            "0",
            reason=SCRIPT_TITLE,
            user_goal=IMG_ONERROR,
            end_state=SVG_ONLOAD,
            error_message=None,
        ),
        make("c-err", None),
    ]


def test_control_page_shows_the_harness_detects_execution(tmp_path: Path) -> None:
    chromium = _chromium()
    page = tmp_path / "control.html"
    page.write_text(
        f"<!DOCTYPE html><html><head><title>control</title></head>"
        f"<body><p>{IMG_ONERROR}</p>{SVG_ONLOAD}{SCRIPT_TITLE}</body></html>"
    )
    dom = _parse(_dump_dom(chromium, page, tmp_path / "profile"))
    assert dom.title == "pwned-by-script"
    assert _attr(dom, "body", "data-pwned-img") == ["1"]
    assert _attr(dom, "body", "data-pwned-svg") == ["1"]


def test_report_renders_rows_and_executes_nothing(
    tmp_path: Path,
    make_result: Callable[..., MetricResult],
    write_run: Callable[[str, Sequence[MetricResult]], Path],
) -> None:
    chromium = _chromium()
    run = write_run("run", _payload_rows(make_result))
    write_renderings(run, {("c-evil", "transcript@1"): f"USER: {SCRIPT_TITLE}\n{IMG_ONERROR}"})
    out = tmp_path / "report.html"
    from typer.testing import CliRunner

    result = CliRunner().invoke(app, ["report", str(run), "--html", str(out)])
    assert result.exit_code == 0, result.output
    dom = _parse(_dump_dom(chromium, out, tmp_path / "profile"))
    assert dom.title == "agent-eval report"  # no payload rewrote it
    assert _attr(dom, "body", "data-pwned-img") == []
    assert _attr(dom, "body", "data-pwned-svg") == []
    assert _attr(dom, "tr", "data-conversation-id") == ["c-err", "c-evil", "c-ok"]
    assert [t for t, _ in dom.tags if t in {"script", "svg", "iframe", "object"}] == []
    assert not [a for _, a in dom.tags if any(k.startswith("on") for k in a)]
    assert all((s or "").startswith("data:") for s in _attr(dom, "img", "src"))
    assert not [h for h in _attr(dom, "link", "href") + _attr(dom, "a", "href")]
    text = out.read_text()
    assert "&lt;script&gt;document.title=&#39;pwned-by-script&#39;&lt;/script&gt;" in text
