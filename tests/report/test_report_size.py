"""The report page stays bounded: identical renderings once, a page-wide budget (issue 15)."""

from __future__ import annotations

from collections.abc import Callable

from agent_eval._result import MetricResult
from agent_eval.report._html import body_text, render_html
from agent_eval.report._model import (
    RENDERING_FLOOR,
    RENDERING_LIMIT,
    build_report,
    rendering_limit,
)

MakeResult = Callable[..., MetricResult]


def test_rendering_limit_shares_the_budget() -> None:
    assert rendering_limit([10, 20], budget=100) == RENDERING_LIMIT  # everything fits
    assert rendering_limit([100] * 10, budget=500) == max(RENDERING_FLOOR, 50)
    assert rendering_limit([10_000] * 4, budget=8_000) == 2_000
    assert rendering_limit([RENDERING_LIMIT * 2], budget=RENDERING_LIMIT) == RENDERING_LIMIT


def test_identical_renderings_of_two_formatters_are_shown_once(make_result: MakeResult) -> None:
    rows = [make_result("c1", "1"), make_result("c1", "0", formatter="json@1")]
    same, other = "USER: hi\nAI: hello", "USER: hi (json)"
    data = build_report(rows, renderings={("c1", "transcript@1"): same, ("c1", "json@1"): same})
    (view,) = data.conversations
    assert [(r.formatter, r.text) for r in view.renderings] == [("transcript@1, json@1", same)]
    data = build_report(rows, renderings={("c1", "transcript@1"): same, ("c1", "json@1"): other})
    assert [r.text for r in data.conversations[0].renderings] == [same, other]


def test_a_page_past_the_budget_cuts_every_rendering_with_a_note(make_result: MakeResult) -> None:
    rows = [make_result(f"c{i}", "1") for i in range(4)]
    texts = {(f"c{i}", "transcript@1"): f"{i}" * 3_000 for i in range(4)}
    data = build_report(rows, renderings=texts, rendering_budget=4_000)
    assert data.rendering_limit == 1_000 and data.renderings_bounded
    for view in data.conversations:
        (shown,) = view.renderings
        assert len(shown.text) == 1_000 and shown.omitted == 2_000
    html = render_html(data)
    assert "2000 more characters not shown (the page keeps 1000 characters" in html
    assert "so that the page stays bounded" in html
    unbounded = build_report(rows, renderings=texts)
    assert not unbounded.renderings_bounded
    assert all(v.renderings[0].omitted == 0 for v in unbounded.conversations)


def test_body_text_escapes_markup_but_not_quotes() -> None:
    assert body_text('<b a="1">&\'</b>') == '&lt;b a="1"&gt;&amp;\'&lt;/b&gt;'
    assert body_text(body_text("<")) == "&lt;"  # safe markup is not escaped twice
