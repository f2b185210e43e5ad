"""The HTML report: content, escaping of untrusted trace content, CSP, views."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

from syrupy.assertion import SnapshotAssertion

from agent_eval.report.html import content_security_policy, render_html
from agent_eval.report.model import build_report
from agent_eval.result import MetricResult

from .conftest import IMG_ONERROR, SCRIPT_TITLE, SVG_ONLOAD

MakeResult = Callable[..., MetricResult]


class _Tags(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.tags: list[tuple[str, dict[str, str | None]]] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.append((tag, dict(attrs)))


def _tags(html: str) -> list[tuple[str, dict[str, str | None]]]:
    parser = _Tags()
    parser.feed(html)
    return parser.tags


def test_untrusted_content_is_escaped_everywhere(make_result: MakeResult) -> None:
    evil = make_result(
        f"conv{SCRIPT_TITLE}",
        "1",
        reason=SCRIPT_TITLE,
        user_goal=IMG_ONERROR,
        end_state=SVG_ONLOAD,
        formatter="transcript@1",
    )
    data = build_report(
        [evil], renderings={(evil.conversation_id, "transcript@1"): SCRIPT_TITLE + IMG_ONERROR}
    )
    html = render_html(data)
    tags = _tags(html)
    assert not [t for t, _ in tags if t in {"script", "svg", "iframe", "object", "embed"}]
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)]
    assert [a.get("src", "") for t, a in tags if t == "img"] == []  # no plots for one variant
    assert "&lt;script&gt;document.title=&#39;pwned-by-script&#39;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;document.body.setAttribute(" in html


def test_strict_csp_meta_tag_hashes_the_only_style(make_result: MakeResult) -> None:
    html = render_html(build_report([make_result("c1", "1")]))
    (meta,) = [a for t, a in _tags(html) if t == "meta" and a.get("http-equiv")]
    csp = meta["content"] or ""
    assert "default-src 'none'" in csp and "script-src 'none'" in csp
    assert "img-src data:" in csp
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    assert css is not None
    assert csp == content_security_policy(css.group(1))
    assert "http://" not in html and "https://" not in html  # nothing to fetch


def test_rows_provenance_and_renderings(make_result: MakeResult) -> None:
    rows = [make_result("c1", "1"), make_result("c2", "0"), make_result("c3", None)]
    data = build_report(rows, renderings={("c1", "transcript@1"): "USER: hello & bye"})
    html = render_html(data)
    tags = _tags(html)
    ids = [a["data-conversation-id"] for t, a in tags if t == "tr" and "data-conversation-id" in a]
    assert ids == ["c1", "c2", "c3"]
    assert "USER: hello &amp; bye" in html
    assert "No rendering stored" in html  # c2, c3
    assert "transcript@1#ffffffffffff" in html and "gpt-4o-mini" in html
    assert "aaaaaaaaaaaaaaaa" in html  # prompt hash
    assert html.count("<details>") == 3
    assert data.summary.status_counts == {"ok": 2, "error": 1}
    assert data.comparison is None and data.stability == {} and data.calibration == {}


def test_comparison_stability_and_calibration_views_with_plots(make_result: MakeResult) -> None:
    rows = [make_result(f"c{i}", v) for i, v in enumerate("1100")]
    rows += [make_result(f"c{i}", v, formatter="json@1") for i, v in enumerate("1000")]
    rows += [make_result(f"c{i}", v, formatter="json@1", repeat=1) for i, v in enumerate("1010")]
    labels = {"c0": 1, "c1": 1, "c2": 0, "c3": 0}
    data = build_report(rows, labels=labels, pricing=lambda m, i, o: i / 1e6)
    assert data.comparison is not None
    (pair,) = data.comparison.pairs
    assert (pair.flips_a_pass_b_fail, pair.flips_a_fail_b_pass) == (1, 0)
    assert list(data.stability) == ["json@1"]
    assert data.stability["json@1"].n_flipping == 1
    assert data.calibration["transcript@1"].n_agree == 4
    html = render_html(data)
    plots = [a["alt"] for t, a in _tags(html) if t == "img"]
    assert plots == [
        "Flips per formatter pair",
        "Cost per variant",
        "Conversations by verdict-1 count over repeats",
        "Confusion matrix",
        "Confusion matrix",
    ]
    srcs = [a["src"] or "" for t, a in _tags(html) if t == "img"]
    assert all(s.startswith("data:image/png;base64,") for s in srcs)


def test_compare_two_runs_names_variants_by_run(make_result: MakeResult) -> None:
    rows = [make_result("c1", "1"), make_result("c1", "0", run_id="run-2")]
    data = build_report(rows)
    assert data.comparison is not None
    assert [v.variant for v in data.comparison.variants] == [
        "transcript@1 · run-1",
        "transcript@1 · run-2",
    ]


def test_html_snapshot(make_result: MakeResult, snapshot: SnapshotAssertion) -> None:
    rows = [
        make_result("c1", "1", reason="booked <b>as asked</b>"),
        make_result("c2", None),
        make_result(
            "c3", None, status="skipped", error_type="context_overflow", error_message="too long"
        ),
    ]
    data = build_report(rows, renderings={("c1", "transcript@1"): "[1] USER\nbook & pay"})
    assert render_html(data) == snapshot


def test_html_never_prints_negative_zero(make_result: Callable[..., MetricResult]) -> None:
    rows = [make_result(c, "1") for c in "abcde"]
    labels = {"a": 1, "b": 0, "c": 0, "d": 1, "e": 1}  # kappa 0, CI low end about -1.6e-8
    text = render_html(build_report(rows, labels=labels))
    assert "[0.000, 0.000]" in text and "-0.000" not in text
