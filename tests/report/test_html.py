"""The HTML report: content, escaping of untrusted trace content, CSP, views, plots."""

from __future__ import annotations

import re
from collections.abc import Callable
from html.parser import HTMLParser

from syrupy.assertion import SnapshotAssertion

from agent_eval._result import MetricResult
from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    SpanErrorInfo,
    SpanTiming,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.report._html import content_security_policy, render_html
from agent_eval.report._model import anchor, build_report, natural_key

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


def _plots(html: str) -> list[str]:
    """The aria-labels of the SVG plots, in page order."""
    return [a.get("aria-label") or "" for t, a in _tags(html) if t == "svg"]


def _evil_trace(cid: str) -> AgentTrace:
    return AgentTrace(
        conversation_id=cid,
        messages=(
            UserMessage(content=SCRIPT_TITLE),
            AssistantMessage(
                content=IMG_ONERROR,
                tool_calls=(ToolCall(id="t1", name=SVG_ONLOAD, arguments={"q": SCRIPT_TITLE}),),
            ),
            ToolMessage(content=SVG_ONLOAD, tool_call_id="t1"),
        ),
        retrievals=(
            Retrieval(after_message=1, documents=(RetrievedDocument(content=IMG_ONERROR),)),
        ),
        labels={SCRIPT_TITLE: 1},
        reference=IMG_ONERROR,
        spans=(
            SpanTiming(
                trace_id="a" * 32,
                span_id="b" * 16,
                kind="agent",
                name=SCRIPT_TITLE,
                agent_name=IMG_ONERROR,
                start_ns=1,
                end_ns=9,
            ),
            SpanTiming(
                trace_id="a" * 32,
                span_id="c" * 16,
                parent_span_id="b" * 16,
                kind="tool",
                name=SVG_ONLOAD,
                tool_name=SCRIPT_TITLE,
                start_ns=2,
                end_ns=5,
            ),
        ),
        errors=(
            SpanErrorInfo(
                trace_id="a" * 32,
                span_id="c" * 16,
                span_name=SVG_ONLOAD,
                error_type=IMG_ONERROR,
                message=SCRIPT_TITLE,
                tool_name=SCRIPT_TITLE,
            ),
        ),
    )


def test_untrusted_content_is_escaped_everywhere(make_result: MakeResult) -> None:
    cid = f"conv{SCRIPT_TITLE}"
    evil = make_result(
        cid,
        "1",
        reason=SCRIPT_TITLE,
        user_goal=IMG_ONERROR,
        end_state=SVG_ONLOAD,
        formatter=f"transcript@1[x={SVG_ONLOAD}]",
        judge_model=SCRIPT_TITLE,
    )
    broken = make_result(
        "c2", None, error_type=IMG_ONERROR, error_message=SCRIPT_TITLE, raw_reply=SVG_ONLOAD
    )
    data = build_report(
        [evil, broken, evil.model_copy(update={"run_id": SVG_ONLOAD})],
        renderings={(cid, evil.formatter): SCRIPT_TITLE + IMG_ONERROR},
        traces={cid: _evil_trace(cid)},
        labels={cid: 0},
    )
    html = render_html(data)
    tags = _tags(html)
    assert [t for t, _ in tags if t in {"script", "iframe", "object", "embed", "img"}] == ["script"]
    assert {a.get("class") for t, a in tags if t == "svg"} == {"plot", "bar"}  # only ours
    assert "failed: &lt;img src=x onerror" in html  # the timeline's failed step, escaped
    assert len(_plots(html)) >= 4
    assert not [a for _, a in tags if any(k.startswith("on") for k in a)]
    assert not [a for _, a in tags if "style" in a]  # the CSP forbids style attributes
    assert "&lt;script&gt;document.title=&#39;pwned-by-script&#39;&lt;/script&gt;" in html
    assert "&lt;img src=x onerror=&#34;document.body.setAttribute(" in html
    assert "<script>document.title" not in html and "<img src=x" not in html
    assert "<svg onload" not in html


def test_strict_csp_pins_the_one_style_and_the_one_script(make_result: MakeResult) -> None:
    html = render_html(build_report([make_result("c1", "1")]))
    (meta,) = [a for t, a in _tags(html) if t == "meta" and a.get("http-equiv")]
    csp = meta["content"] or ""
    assert "default-src 'none'" in csp and "img-src data:" in csp
    assert re.search(r"script-src 'sha256-[A-Za-z0-9+/]{43}='", csp)
    assert "unsafe" not in csp
    css = re.search(r"<style>(.*?)</style>", html, re.S)
    script = re.search(r"<script>(.*?)</script>", html, re.S)
    assert css is not None and script is not None
    assert html.count("<script") == 1 and html.count("<style") == 1
    assert csp == content_security_policy(css.group(1), script.group(1))
    assert "script-src 'none'" in content_security_policy(css.group(1))
    assert "http://" not in html.replace('xmlns="http://www.w3.org/2000/svg"', "")
    assert "https://" not in html  # nothing to fetch


def test_rows_are_naturally_sorted_and_every_id_links_to_its_conversation(
    make_result: MakeResult,
) -> None:
    rows = [make_result(f"c{i}", "1") for i in (16, 1, 13, 2)]
    html = render_html(build_report(rows))
    ids = [a["data-id"] for t, a in _tags(html) if t == "tr" and a.get("class") == "result"]
    assert ids == ["c1", "c2", "c13", "c16"]
    sections = [a["id"] for t, a in _tags(html) if t == "section"]
    assert sections == [anchor(c) for c in ids]
    links = {
        a["href"] for t, a in _tags(html) if t == "a" and (a.get("href") or "").startswith("#c-")
    }
    assert links == {f"#{anchor(c)}" for c in ids}
    assert natural_key("run-10") > natural_key("run-9")


def test_every_input_of_a_verdict_is_shown_beside_it(make_result: MakeResult) -> None:
    ok = make_result(
        "c1",
        "0",
        reason="no refund issued",
        user_goal="refund order A-1",
        end_state="agent gave up",
        reference="Get a refund for A-1",
    )
    bad = make_result(
        "c2",
        None,
        error_type="invalid_judge_output",
        error_message="verdict: not 0 or 1",
        raw_reply='{"verdict": "yes", "reason": "fine"}',
    )
    data = build_report([ok, bad], labels={"c1": 1, "c2": 0})
    html = render_html(data)
    for text in (
        "no refund issued",
        "refund order A-1",
        "agent gave up",
        "Get a refund for A-1",
        '{"verdict": "yes", "reason": "fine"}',  # raw reply (quotes are text inside <pre>)
        "disagrees with label 1",
    ):
        assert text in html, text
    (row,) = [r for r in data.rows if r.result.conversation_id == "c1"]
    assert (row.label, row.agreement) == (1, "disagree")
    assert [(e.error_type, e.count, e.conversation_ids) for e in data.errors] == [
        ("invalid_judge_output", 1, ["c2"])
    ]


def test_errors_are_grouped_by_type_with_counts(make_result: MakeResult) -> None:
    rows = [
        make_result("c1", None, error_type="judge_unavailable", error_message="HTTP 503"),
        make_result("c2", None, error_type="judge_unavailable", error_message="HTTP 500"),
        make_result("c2", None, error_type="judge_unavailable", repeat=1),
        make_result("c3", None, status="skipped", error_type="context_overflow"),
        make_result("c4", "1"),
    ]
    data = build_report(rows)
    assert [(e.status, e.error_type, e.count, e.conversation_ids) for e in data.errors] == [
        ("error", "judge_unavailable", 3, ["c1", "c2"]),
        ("skipped", "context_overflow", 1, ["c3"]),
    ]
    html = render_html(data)
    assert '<tr data-error-type="judge_unavailable">' in html
    assert "Errors (4)" in html


def test_structured_transcript_pairs_calls_with_results_and_places_retrievals(
    make_result: MakeResult,
) -> None:
    trace = AgentTrace(
        conversation_id="c1",
        messages=(
            UserMessage(content="Weather in Paris and Rome?"),
            AssistantMessage(
                tool_calls=(
                    ToolCall(id="a", name="get_weather", arguments={"city": "Paris"}),
                    ToolCall(id="b", name="get_weather", raw_arguments="{city: Rome"),
                ),
                agent_name="planner",
            ),
            ToolMessage(content="Rome: rain", tool_call_id="b"),
            ToolMessage(content='{"city": "Paris", "sky": "sun"}', tool_call_id="a"),
            AssistantMessage(content="x" * 5000),
        ),
        retrievals=(
            Retrieval(
                after_message=1, query="cities", documents=(RetrievedDocument(content="doc1"),)
            ),
        ),
    )
    html = render_html(build_report([make_result("c1", "1")], traces={"c1": trace}))
    assert html.count('class="msg role-') == 3  # the two tool messages sit under their calls
    assert html.count('class="msg retrieval"') == 1
    assert html.index("retrieval</span>") < html.index("tool call <code>get_weather")
    paris, rome = html.index('"city": "Paris"'), html.index("{city: Rome")
    paris_result = html.index('  "sky": "sun"\n}')  # JSON result, re-indented
    assert paris < paris_result < rome < html.index("Rome: rain")
    assert "arguments are not valid JSON" in html
    assert "agent planner" in html
    assert "(5000 characters)" in html  # folded
    assert html.count("x" * 5000) == 1


def test_huge_content_is_cut_with_a_note(make_result: MakeResult) -> None:
    trace = AgentTrace(conversation_id="c1", messages=(UserMessage(content="y" * 30_000),))
    html = render_html(
        build_report(
            [make_result("c1", "1")],
            traces={"c1": trace},
            renderings={("c1", "transcript@1"): "z" * 250_000},
        )
    )
    assert "10000 more characters not shown" in html
    assert "50000 more characters not shown" in html
    assert "y" * 20_001 not in html and "z" * 200_001 not in html


def test_plots_on_every_run_and_no_empty_axes(make_result: MakeResult) -> None:
    rows = [make_result(f"c{i}", v, attempts=2, latency_ms=800.0 * i) for i, v in enumerate("1101")]
    html = render_html(build_report(rows))
    assert _plots(html) == [
        "Scores (repeat 0, ok rows)",
        "Results by status (repeat 0)",
        "Judge tokens per conversation",
        "Judge latency per conversation",
    ]
    errors = [make_result(f"c{i}", None, input_tokens=0, output_tokens=0) for i in range(3)]
    html = render_html(build_report(errors))
    assert _plots(html) == ["Results by status (repeat 0)"]
    assert "No ok result: no score to plot." in html
    assert "-0.0" not in html


def test_cached_rows_are_marked_and_left_out_of_the_call_plots(make_result: MakeResult) -> None:
    rows = [
        make_result("c1", "1", attempts=0, input_tokens=0, output_tokens=0),
        make_result("c2", "1", attempts=1, latency_ms=500.0),
    ]
    data = build_report(rows)
    assert [r.cached for r in data.rows] == [True, False]
    assert data.summary.n_cached == 1
    html = render_html(data)
    assert html.count('<span class="badge cached"') == 2  # results table and verdict card
    assert "Judge tokens per conversation; 1 cached row(s) made no call" in _plots(html)


def test_comparison_stability_and_calibration_views_with_plots(make_result: MakeResult) -> None:
    rows = [make_result(f"c{i}", v) for i, v in enumerate("1100")]
    rows += [
        make_result(f"c{i}", v, formatter="json@1", reason=f"r0 {i}") for i, v in enumerate("1000")
    ]
    rows += [
        make_result(f"c{i}", v, formatter="json@1", repeat=k, reason=f"r{k} {i}")
        for k, verdicts in ((1, "1010"), (2, "1000"))
        for i, v in enumerate(verdicts)
    ]
    labels = {"c0": 1, "c1": 1, "c2": 0, "c3": 0}
    data = build_report(rows, labels=labels, pricing=lambda m, i, o: i / 1e6)
    assert data.comparison is not None
    (pair,) = data.comparison.pairs
    assert (pair.flips_a_pass_b_fail, pair.flips_a_fail_b_pass) == (1, 0)
    assert list(data.stability) == ["json@1"]
    view = data.stability["json@1"]
    assert view.stability.n_flipping == 1
    assert [r.reason if r else None for r in view.repeats["c2"]] == ["r0 2", "r1 2", "r2 2"]
    assert data.calibration["transcript@1"].n_agree == 4
    html = render_html(data)
    assert _plots(html) == [
        "Scores (repeat 0, ok rows)",
        "Results by status (repeat 0)",
        "Judge tokens per conversation",
        "Flipped verdicts per pair (A → B)",
        "Judge cost per variant",
        "Conversations by repeats with verdict 1",
        "Judge verdicts against labels",
        "Judge verdicts against labels",
    ]
    # both repeats' reasons side by side, the diverging one highlighted
    assert "r0 2" in html and "r1 2" in html
    assert html.count('class="rep diverges"') == 1
    assert f'href="#{anchor("c1")}"' in html  # flipped id is a link
    # the summary counts one thing per figure
    s = data.summary
    assert (s.n_results, s.n_rows, s.repeats, s.n_variants) == (8, 16, 3, 2)
    assert s.input_tokens == 16 * 1000


def test_every_colour_has_a_legend_entry(make_result: MakeResult) -> None:
    rows = [make_result("c1", "1"), make_result("c1", "0", repeat=1), make_result("c2", "1")]
    rows += [make_result("c2", "1", repeat=1)]
    html = render_html(build_report(rows))
    for svg in re.findall(r"<svg.*?</svg>", html, re.S):
        fills = set(re.findall(r'<rect [^>]*fill="(#[0-9a-f]{6})"', svg))
        legend = set(re.findall(r'<rect [^>]*width="11" height="11" fill="(#[0-9a-f]{6})"', svg))
        assert fills == legend, svg[:120]


def test_fractional_scores_are_binned(make_result: MakeResult) -> None:
    from agent_eval.report._plots import score_plot

    rows = [make_result("c1", "1"), make_result("c2", "0")]
    rows = [
        r.model_copy(update={"score": s, "verdict": None})
        for r, s in zip(rows, (0.25, 0.95), strict=True)
    ]
    svg = score_plot({"v": rows})
    assert svg is not None and "0.2–0.3: 1" in svg and "0.9–1.0: 1" in svg


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
    # a constant verdict: the zero-width "[0.000, 0.000]" is no interval (trial7 #16)
    assert "0.000 [interval undefined: the verdicts gave the same outcome (1) to all 5" in text
    assert "-0.000" not in text


def test_atoms_per_unit_failing_first_with_quotes_found_in_the_context(
    make_result: MakeResult,
) -> None:
    from agent_eval._result import Atom

    trace = AgentTrace(
        conversation_id="c1",
        messages=(
            UserMessage(content="When does the museum open?"),
            AssistantMessage(content="It opens at 9am and is free on Sundays."),
        ),
        retrievals=(
            Retrieval(
                after_message=1,
                documents=(
                    RetrievedDocument(id="d7", content="Hours: the museum opens at 9am daily."),
                ),
            ),
        ),
    )
    atoms = (
        Atom(text="It opens at 9am.", label="SUPPORTED", passed=True, evidence="opens at 9am",
             evidence_verified=True, rationale="the hours say so"),
        Atom(text="It is free on Sundays.", label="UNSUPPORTED", passed=False,
             evidence="free admission on Sundays", evidence_verified=False,
             rationale="no document mentions prices"),
    )  # fmt: skip
    claim = make_result(
        "c1", "1", metric="faithfulness@1", unit_id="turn:1", span_id="ab" * 8
    ).model_copy(update={"verdict": None, "score": 0.5, "atoms": atoms, "reason": None})
    goal = make_result("c1", "1")
    data = build_report([claim, goal], traces={"c1": trace})
    assert data.units and data.subjects == {"c1/turn:1": "c1", "c1": "c1"}
    assert [r.result.subject for r in data.rows] == ["c1", "c1/turn:1"]
    html = render_html(data)
    failed = html.index("UNSUPPORTED</span> It is free on Sundays.")
    passed = html.index("SUPPORTED</span> It opens at 9am.")
    assert failed < passed  # failing atoms first
    assert "1 of 2 atoms passed · score 0.50" in html
    assert (
        "in document d7 of the retrieval after message 1:</span> Hours: the museum "
        '<mark class="quote">opens at 9am</mark> daily.'
    ) in html
    assert '<mark class="quote unverified">free admission on Sundays</mark>' in html
    assert "the metric could not verify this quote in the context" in html
    assert "no document mentions prices" in html
    assert "Answer of turn 1" in html and "Whole conversation" in html
    assert f'<a class="cid" href="#{anchor("c1")}">c1/turn:1</a>' in html
    (row,) = [r for r in data.rows if r.result.unit_id == "turn:1"]
    assert row.agreement == "not scored"
    # two metrics: summarised apart, never averaged together (0.75 was the old, wrong figure)
    assert data.summary.ci_low is None and data.summary.mean_score is None
    assert data.summary.metric_means == {"faithfulness@1": 0.5, "goal_accuracy@1": 1.0}
