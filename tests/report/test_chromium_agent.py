"""The report's agent views in a real headless Chromium (issue 31 part 5).

A run of the judge-free ``tool_errors`` metric over the recorded agent run of
:mod:`agent_run` (a handoff, a failed ``change_flight``) and a fixture of conversations without
an id, scored twice beside each other so the report has a history: the views exist, their
numbers are those of the conversations (counted here from the ingested traces, not written
in), expand/collapse all works by mouse and keyboard, and the timeline of the conversation
with the tool error shows the failed step with its duration and error.
"""

from __future__ import annotations

import os
import shutil
from collections import Counter
from collections.abc import Iterator
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage
from agent_eval.cli._app import app
from agent_eval.ingest import ingest
from agent_eval.report._model import anchor
from agent_eval.testing._chromium import Chromium, find_chromium

from . import agent_run

ROOT = Path(__file__).resolve().parents[2]
ID_LESS = ROOT / "fixtures" / "otel" / "openai-v2-events.otlp.jsonl"


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


def _cli(*args: str) -> None:
    result = CliRunner().invoke(app, list(args))
    assert result.exit_code == 0, result.output


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, list[AgentTrace]]:
    tmp = tmp_path_factory.mktemp("agent-report")
    inputs = tmp / "inputs"
    inputs.mkdir()
    agent_run.write(inputs / "flight.otlp.json")
    shutil.copy(ID_LESS, inputs)
    for name in ("earlier", "latest"):
        _cli("score", str(inputs), "--metric", "tool_errors", "--out", str(tmp / "runs" / name))
    out = tmp / "report.html"
    _cli("report", str(tmp / "runs" / "latest"), "-o", str(out))
    return out, list(ingest([inputs]))


def _rows(browser: Chromium, selector: str) -> list[list[str]]:
    rows: list[list[str]] = browser.evaluate(
        f"[...document.querySelectorAll({selector!r})].map(r => "
        "[...r.cells].map(c => c.textContent.trim()))"
    )
    return rows


def test_tool_failures_and_error_types_match_the_conversations(
    browser: Chromium, report: tuple[Path, list[AgentTrace]]
) -> None:
    out, traces = report
    browser.open(out.as_uri())
    assert browser.console_errors() == []
    calls = Counter(
        c.name for t in traces for m in t.messages if isinstance(m, AssistantMessage)
        for c in m.tool_calls or ()
    )  # fmt: skip
    shown = {row[0]: row for row in _rows(browser, "table.tools tbody tr")}
    assert set(shown) == set(calls)
    assert {tool: int(row[1]) for tool, row in shown.items()} == dict(calls)
    failed = {tool: int(row[2]) for tool, row in shown.items() if row[2] != "0"}
    assert failed == {agent_run.FAILED_TOOL: 1}
    assert shown[agent_run.FAILED_TOOL][3].startswith(f"{1 / calls[agent_run.FAILED_TOOL]:.2f}")
    assert shown[agent_run.FAILED_TOOL][4] == f"{agent_run.ERROR_TYPE} 1"
    assert shown[agent_run.FAILED_TOOL][5] == agent_run.CONVERSATION
    assert _rows(browser, "table.error-types tbody tr") == [
        [agent_run.ERROR_TYPE, "1", f"{agent_run.FAILED_TOOL} (1)", agent_run.CONVERSATION]
    ]
    # the conversation link of the failure opens its section
    browser.click(f"table.tools a[href='#{anchor(agent_run.CONVERSATION)}']")
    assert browser.evaluate(
        f"document.querySelector('#{anchor(agent_run.CONVERSATION)} > details').open"
    )


def test_shape_and_history_views(browser: Chromium, report: tuple[Path, list[AgentTrace]]) -> None:
    out, traces = report
    browser.open(out.as_uri())
    rows = _rows(browser, "table.shape tbody tr[data-shape='turns']")
    turns = Counter(sum(m.role == "user" for m in t.messages) for t in traces)
    assert {int(r[-4]): int(r[-3]) for r in rows} == dict(turns)  # value -> rows
    failed = _rows(browser, "table.shape tbody tr[data-shape='failed tool calls']")
    assert {r[-4]: r[-3] for r in failed} == {"0": str(len(traces) - 1), "1": "1"}
    history = _rows(browser, "table.history tbody tr")
    assert len(history) == 2 and "this report" in history[1][0]
    assert [r[2] for r in history] == [str(len(traces))] * 2  # ok rows in each run


def test_expand_and_collapse_all_by_mouse_and_keyboard(
    browser: Chromium, report: tuple[Path, list[AgentTrace]]
) -> None:
    out, traces = report
    browser.open(out.as_uri())
    opened = (
        "[...document.querySelectorAll('section.conversation > details')]"
        ".filter(d => d.open).length"
    )
    assert browser.evaluate("document.getElementById('conversation-controls').hidden") is False
    assert browser.evaluate(opened) == 0  # more than 5 conversations: all start collapsed
    browser.click("#conversation-controls [data-toggle=expand]")
    assert browser.evaluate(opened) == len(traces)
    browser.click("#conversation-controls [data-toggle=collapse]")
    assert browser.evaluate(opened) == 0
    browser.evaluate(
        "document.querySelector('#conversation-controls [data-toggle=expand]').focus()"
    )
    for kind in ("keyDown", "keyUp"):
        browser.send("Input.dispatchKeyEvent", {"type": kind, "key": "Enter", "code": "Enter",
                     "windowsVirtualKeyCode": 13, "text": "\r"})  # fmt: skip
    assert browser.evaluate(opened) == len(traces)


def test_timeline_of_the_conversation_with_a_tool_error(
    browser: Chromium, report: tuple[Path, list[AgentTrace]]
) -> None:
    out, _ = report
    target = anchor(agent_run.CONVERSATION)
    browser.open(f"{out.as_uri()}#{target}")
    table = f"#{target} table.timeline"
    assert browser.evaluate(f"document.querySelector('{table}').getBoundingClientRect().height") > 0
    turns = _rows(browser, f"{table} tr.turn")
    assert [r[0].split(":", 1)[0] for r in turns] == [
        "Turn 1 at +0 ms, 2.00 s",
        "Turn 2 at +1.0 min, 1.50 s",
    ]
    (failed,) = _rows(browser, f"{table} tr.failed")
    assert failed[0].startswith(f"tool {agent_run.FAILED_TOOL}")
    assert f"failed: {agent_run.ERROR_TYPE}: {agent_run.ERROR_MESSAGE}" in failed[0]
    assert failed[1:4] == ["booking", "+910 ms", "250 ms"]
    fill = browser.evaluate(
        f"getComputedStyle(document.querySelector('{table} tr.failed td:last-child i'))"
        ".backgroundColor"
    )
    assert fill == "rgb(183, 28, 28)"  # the error colour, not the tool colour
    kinds = browser.evaluate(
        f"[...document.querySelectorAll('{table} tbody tr:not(.turn)')]"
        ".map(r => r.className.split(' ')[0].slice(2))"
    )
    assert Counter(kinds) == {"llm": 5, "tool": 3, "agent": 3}
    facts = browser.evaluate(f"document.querySelector('#{target} .trajectory-facts').textContent")
    assert "2 turn(s) · 5 LLM call(s) · 3 tool call(s) · 1 failed" in facts
    assert "agents triage, booking · 1 handoff(s)" in facts
    assert "handoff from triage" in browser.evaluate(
        f"document.querySelector('{table}').textContent"
    )


def test_id_less_conversations_have_readable_names_in_start_order(
    browser: Chromium, report: tuple[Path, list[AgentTrace]]
) -> None:
    out, traces = report
    browser.open(out.as_uri())
    shown = browser.evaluate(
        "[...document.querySelectorAll('section.conversation')].map(s => "
        "[s.dataset.conversationId, s.querySelector('summary .cid').textContent])"
    )
    by_id = {t.conversation_id: t for t in traces}
    starts = [min(s.start_ns for s in by_id[cid].spans) for cid, _ in shown]
    assert starts == sorted(starts) and len(shown) == len(traces)
    id_less = [(cid, name) for cid, name in shown if cid in by_id[cid].trace_ids]
    assert len(id_less) >= 3
    for cid, name in id_less:
        first = next(m.content for m in by_id[cid].messages if m.role == "user")
        assert name.endswith(f" · {cid[:8]}") and name.startswith(first.split()[0])
    # the results table links by the same names
    links = browser.evaluate(
        "[...document.querySelectorAll('#results-table a.cid')].map(a => a.textContent)"
    )
    assert {name for _, name in id_less} <= set(links)
