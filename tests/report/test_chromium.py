"""The report in a real headless Chromium: rows, sorting, filtering, search, paging, links, and
untrusted payloads that run nothing while the report's own hash-pinned script does.

Chromium is Debian's ``chromium`` package (``.ci/run`` installs it), driven over the DevTools
protocol (:mod:`agent_eval.testing._chromium`). The tests skip only when Chromium is missing
outside CI; with ``CI`` set they must run. Control pages carrying the same payloads unescaped
prove the harness does see script execution when there is some, and that the report's CSP
stops it even with the report's script on the page.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.cli._app import app
from agent_eval.report._html import content_security_policy
from agent_eval.report._model import anchor
from agent_eval.run._artifacts import write_conversations, write_renderings
from agent_eval.testing._chromium import Chromium, find_chromium

from .conftest import IMG_ONERROR, SCRIPT_TITLE, SVG_ONLOAD

PAYLOADS = f"<p>{IMG_ONERROR}</p>{SVG_ONLOAD}{SCRIPT_TITLE}"
PWNED = (
    "[document.title, document.body.getAttribute('data-pwned-img'), "
    "document.body.getAttribute('data-pwned-svg')]"
)


@pytest.fixture(scope="module")
def browser() -> Iterator[Chromium]:
    if find_chromium() is None:
        if os.environ.get("CI"):
            pytest.fail(
                "chromium is not installed, and CI must run this test (.ci/run installs it)"
            )
        pytest.skip("chromium not installed (apt-get install chromium); CI runs this test")
    with Chromium(width=1280, height=900) as chromium:
        yield chromium


def _report(run: Path, out: Path, *extra: str) -> Path:
    result = CliRunner().invoke(app, ["report", str(run), "--html", str(out), *extra])
    assert result.exit_code == 0, result.output
    return out


def _visible_ids(browser: Chromium) -> list[str]:
    ids: list[str] = browser.evaluate(
        "[...document.querySelectorAll('#results-table tbody tr')]"
        ".filter(r => !r.hidden).map(r => r.dataset.id)"
    )
    return ids


def _choose(browser: Chromium, name: str, value: str) -> None:
    browser.evaluate(
        f"(() => {{ const s = document.querySelector('#controls [name={name}]'); "
        f"s.value = {value!r}; s.dispatchEvent(new Event('change')); }})()"
    )


def _type(browser: Chromium, text: str) -> None:
    browser.evaluate(
        "(() => { const s = document.querySelector('#controls [name=q]'); "
        f"s.value = {text!r}; s.dispatchEvent(new Event('input')); }})()"
    )


def test_control_pages_show_the_harness_detects_execution_and_the_csp_stops_it(
    tmp_path: Path, browser: Chromium
) -> None:
    bare = tmp_path / "control.html"
    bare.write_text(
        f"<!DOCTYPE html><html><head><title>control</title></head><body>{PAYLOADS}</body></html>"
    )
    browser.open(bare.as_uri())
    assert browser.evaluate(PWNED) == ["pwned-by-script", "1", "1"]
    # the same payloads unescaped, under the report's CSP and beside a script it pins: only
    # the pinned script runs
    ours = "document.body.setAttribute('data-ours', '1');"
    csp = content_security_policy("", ours)
    pinned = tmp_path / "control-csp.html"
    pinned.write_text(
        f'<!DOCTYPE html><html><head><meta http-equiv="Content-Security-Policy" content="{csp}">'
        f"<title>control</title></head><body>{PAYLOADS}<script>{ours}</script></body></html>"
    )
    browser.open(pinned.as_uri())
    assert browser.evaluate(PWNED) == ["control", None, None]
    assert browser.evaluate("document.body.getAttribute('data-ours')") == "1"


def _evil_rows(make: Callable[..., MetricResult]) -> Sequence[MetricResult]:
    return [
        make("c-ok", "1"),
        make(
            "c-evil",
            "0",
            reason=SCRIPT_TITLE,
            user_goal=IMG_ONERROR,
            end_state=SVG_ONLOAD,
            reference=SCRIPT_TITLE,
        ),
        make("c-err", None, error_message=IMG_ONERROR, raw_reply=SCRIPT_TITLE),
    ]


def test_report_renders_rows_and_executes_no_injected_markup(
    tmp_path: Path,
    browser: Chromium,
    make_result: Callable[..., MetricResult],
    write_run: Callable[[str, Sequence[MetricResult]], Path],
) -> None:
    run = write_run("run", _evil_rows(make_result))
    write_renderings(run, {("c-evil", "transcript@1"): f"USER: {SCRIPT_TITLE}\n{IMG_ONERROR}"})
    trace = AgentTrace(
        conversation_id="c-evil",
        messages=(
            UserMessage(content=SCRIPT_TITLE),
            AssistantMessage(
                tool_calls=(ToolCall(id="t", name=IMG_ONERROR, arguments=SVG_ONLOAD),)
            ),
            ToolMessage(content=SVG_ONLOAD, tool_call_id="t"),
        ),
    )
    write_conversations(run, [trace])
    out = _report(run, tmp_path / "report.html")
    browser.open(out.as_uri())
    assert browser.evaluate(PWNED) == ["agent-eval report", None, None]
    assert browser.evaluate("document.body.dataset.script") == "ready"  # ours ran
    assert browser.console_errors() == []
    assert _visible_ids(browser) == ["c-err", "c-evil", "c-ok"]
    tags: dict[str, Any] = browser.evaluate(
        "({scripts: document.scripts.length, "
        "svgs: [...document.querySelectorAll('svg')].map(s => s.getAttribute('class')), "
        "handlers: [...document.querySelectorAll('*')].filter(e => [...e.attributes]"
        ".some(a => a.name.startsWith('on'))).length, "
        "remote: [...document.querySelectorAll('[src], link[href]')].length})"
    )
    assert tags["scripts"] == 1 and tags["handlers"] == 0 and tags["remote"] == 0
    assert set(tags["svgs"]) <= {"plot", "bar"}  # ours only: charts and bars
    text = browser.evaluate(f"document.getElementById('{anchor('c-evil')}').textContent")
    assert SCRIPT_TITLE in text and IMG_ONERROR in text  # shown as text, not run


def _many_rows(make: Callable[..., MetricResult]) -> list[MetricResult]:
    rows = []
    for i in range(1, 61):
        if i % 10 == 0:
            rows.append(make(f"conv-{i}", None, error_message=f"timeout {i}", attempts=3))
        else:
            rows.append(make(f"conv-{i}", "1" if i % 3 else "0", reason=f"reason {i}"))
    return rows


def test_sorting_filtering_search_paging_and_links(
    tmp_path: Path,
    browser: Chromium,
    make_result: Callable[..., MetricResult],
    write_run: Callable[[str, Sequence[MetricResult]], Path],
) -> None:
    run = write_run("run", _many_rows(make_result))
    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,label\n" + "".join(f"conv-{i},1\n" for i in range(1, 61)))
    out = _report(run, tmp_path / "report.html", "--labels", str(labels))
    browser.open(out.as_uri())
    assert browser.console_errors() == []
    # natural order, first page of 50
    first = _visible_ids(browser)
    assert first == [f"conv-{i}" for i in range(1, 51)]
    assert "page 1 of 2" in browser.evaluate("document.getElementById('results-info').textContent")
    browser.click("#controls [data-page=next]")
    assert _visible_ids(browser) == [f"conv-{i}" for i in range(51, 61)]
    # sort by id, twice: descending
    browser.click("th[data-key=id] button")
    browser.click("th[data-key=id] button")
    assert _visible_ids(browser)[:3] == ["conv-60", "conv-59", "conv-58"]
    assert browser.evaluate(
        "document.querySelector('th[data-key=id]').getAttribute('aria-sort')"
    ) == ("descending")
    # filters
    _choose(browser, "status", "error")
    assert _visible_ids(browser) == [f"conv-{i}" for i in (60, 50, 40, 30, 20, 10)]
    _choose(browser, "status", "")
    _choose(browser, "verdict", "0")
    assert len(_visible_ids(browser)) == 18
    _choose(browser, "agreement", "disagree")
    assert len(_visible_ids(browser)) == 18  # every label is 1
    _choose(browser, "verdict", "")
    _choose(browser, "agreement", "")
    # search, over the row's text
    _type(browser, "reason 57")
    assert _visible_ids(browser) == ["conv-57"]
    _type(browser, "57   REASON")  # every term, anywhere in the row, case-insensitive
    assert _visible_ids(browser) == ["conv-57"]
    _type(browser, "timeout")
    assert len(_visible_ids(browser)) == 6
    # the view lives in the query string: reloading it gives the same rows
    search = browser.evaluate("location.search")
    assert "q=timeout" in search and "sort=-id" in search
    browser.open(out.as_uri() + search)
    assert _visible_ids(browser) == [f"conv-{i}" for i in (60, 50, 40, 30, 20, 10)]
    # sort by tokens: missing values none; numeric, not string order
    browser.open(out.as_uri() + "?sort=-tokens&size=0")
    assert len(_visible_ids(browser)) == 60
    # page size from the menu
    _choose(browser, "size", "25")
    assert len(_visible_ids(browser)) == 25
    # a link from a row opens its conversation
    browser.open(out.as_uri())
    target = anchor("conv-7")
    assert browser.evaluate(f"document.querySelector('#{target} > details').open") is False
    browser.click(f"#results-table a[href='#{target}']")
    assert browser.evaluate("location.hash") == f"#{target}"
    assert browser.evaluate(f"document.querySelector('#{target} > details').open") is True
    # a malformed fragment or query breaks nothing
    browser.open(out.as_uri() + "?status=%3Cb%3E&sort=nonsense&page=-3#%E0%A4%A")
    assert browser.console_errors() == []
    assert len(_visible_ids(browser)) == 50  # unknown values ignored, first page
    # links from the error table too
    errors_links = browser.evaluate(
        "[...document.querySelectorAll('table.errors a')].map(a => a.getAttribute('href'))"
    )
    assert errors_links == [f"#{anchor(f'conv-{i}')}" for i in (10, 20, 30, 40, 50, 60)]


def test_page_without_script_still_shows_every_row(
    tmp_path: Path,
    make_result: Callable[..., MetricResult],
    write_run: Callable[[str, Sequence[MetricResult]], Path],
    browser: Chromium,
) -> None:
    run = write_run("run", _many_rows(make_result))
    out = _report(run, tmp_path / "report.html")
    html = out.read_text()
    stripped = tmp_path / "noscript.html"
    stripped.write_text(re.sub(r"<script>.*?</script>", "", html, flags=re.S))
    browser.open(stripped.as_uri())
    assert len(_visible_ids(browser)) == 60
    assert browser.evaluate("document.getElementById('controls').hidden") is True
