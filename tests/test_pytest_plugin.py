"""The pytest plugin, run by ``pytester`` (in process, and as a fresh process with xdist): the
``agent_spans`` fixture, ``assert_score``, the ``agent_eval`` marker, judge settings from the
ini file, options and environment, pytest-xdist, and the session's HTML report."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from agent_eval.testing import FakeModelServer

from .run.goal_script import script_goal_judge

pytest_plugins = ("pytester",)

AGENT = """
import json
from opentelemetry import trace


def text(role, content):
    return {"role": role, "parts": [{"type": "text", "content": content}]}


def run_agent(conversation_id, user, answer):
    tracer = trace.get_tracer("my-agent")
    with tracer.start_as_current_span(
        "invoke_agent helper",
        attributes={"gen_ai.operation.name": "invoke_agent",
                    "gen_ai.conversation.id": conversation_id},
    ):
        with tracer.start_as_current_span(
            "chat fake-model",
            attributes={
                "gen_ai.operation.name": "chat",
                "gen_ai.request.model": "fake-model",
                "gen_ai.conversation.id": conversation_id,
                "gen_ai.input.messages": json.dumps([text("user", user)]),
                "gen_ai.output.messages": json.dumps([text("assistant", answer)]),
            },
        ):
            pass
"""

TESTS = """
import pytest
from agent import run_agent


def test_goal_reached(agent_spans):
    run_agent("c-ok", "book a table", "Booked. ZEBRA-DONE")
    [result] = agent_spans.assert_score(min_score=1.0)
    assert result.verdict == "1" and result.conversation_id == "c-ok"


def test_goal_missed(agent_spans):
    run_agent("c-bad", "refund order A-1042", "Sorry, I cannot help with refunds.")
    agent_spans.assert_score(min_score=1.0)


@pytest.mark.agent_eval(min_score=1.0)
def test_marker_pass(agent_spans):
    run_agent("m-ok", "move my flight", "Moved. ZEBRA-DONE")


@pytest.mark.agent_eval(min_score=1.0)
def test_marker_fail(agent_spans):
    run_agent("m-bad", "cancel my order", "I did nothing.")


def test_each_test_sees_only_its_spans(agent_spans):
    assert agent_spans.traces() == []
    run_agent("own", "hi", "hello")
    assert [t.conversation_id for t in agent_spans.traces()] == ["own"]
"""


@pytest.fixture
def project(
    pytester: pytest.Pytester, fake_server: FakeModelServer, monkeypatch: pytest.MonkeyPatch
) -> pytest.Pytester:
    script_goal_judge(fake_server)
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_JUDGE", "AGENT_EVAL_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    return pytester


def test_assert_score_and_marker_pass_and_fail_with_the_verdict_reason_and_rendering(
    project: pytest.Pytester, fake_server: FakeModelServer
) -> None:
    project.makeini(
        f"""
        [pytest]
        agent_eval_judge = fake-model
        agent_eval_base_url = {fake_server.base_url}
        agent_eval_formatter = transcript@1
        """
    )
    result = project.runpytest_inprocess("-p", "no:cacheprovider", "-p", "no:asyncio")
    result.assert_outcomes(passed=3, failed=2)
    out = result.stdout.str()
    failure = out[out.index("test_goal_missed") :]
    assert (
        "agent-eval (test_agent.py::test_goal_missed): goal_accuracy@2 on conversation 'c-bad': "
        "status ok"
    ) in failure
    assert "verdict '0', score 0.0 < 1.0" in failure
    assert "reason: compared" in failure
    assert "end state: nothing done" in failure
    assert "what the judge saw:" in failure
    assert "| " in failure and "Sorry, I cannot help with refunds." in failure
    assert "formatter transcript@1" in failure
    assert "conversation 'm-bad'" in out and "I did nothing." in out


def test_settings_from_the_environment_and_xdist_with_one_html_report(
    project: pytest.Pytester,
    fake_server: FakeModelServer,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("AGENT_EVAL_JUDGE", "fake-model")
    monkeypatch.setenv("AGENT_EVAL_BASE_URL", fake_server.base_url)
    report = tmp_path / "agent-eval.html"
    result = project.runpytest_subprocess(
        "-p", "no:cacheprovider", "-p", "no:asyncio", "-n", "2", f"--agent-eval-report={report}"
    )
    result.assert_outcomes(passed=3, failed=2)
    assert re.search(r"created: 2/2 workers|\[gw[01]\]", result.stdout.str())
    html = report.read_text()
    for conversation in ("c-ok", "c-bad", "m-ok", "m-bad"):
        assert conversation in html
    assert "Sorry, I cannot help with refunds." in html  # the rendering
    assert not report.with_name(report.name + ".parts").exists()
    assert f"agent-eval: wrote {report}" in result.stdout.str()


def test_no_judge_is_a_clear_error(project: pytest.Pytester) -> None:
    result = project.runpytest_inprocess(
        "-p", "no:cacheprovider", "-p", "no:asyncio", "-k", "goal_reached"
    )
    assert (
        result.ret == pytest.ExitCode.USAGE_ERROR
    )  # stops the session (tests/test_pytest_plugin_ci.py)
    assert "no judge configured; pass --agent-eval-judge MODEL" in result.stdout.str()
