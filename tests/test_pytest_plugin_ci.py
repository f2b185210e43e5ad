"""The pytest plugin in CI, run by ``pytester`` as a separate pytest project against the fake
server over real HTTP: a configuration error is one line and stops the session (exit 4), a judge
that cannot be reached is a test error (or skipped), and every result names its test."""

from __future__ import annotations

import socket
from pathlib import Path

import pytest

from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer

from .run.goal_script import script_goal_judge
from .test_pytest_plugin import AGENT

pytest_plugins = ("pytester",)

TESTS = """
import pytest
from agent import run_agent


def test_first(agent_spans):
    run_agent("c-bad", "refund order A-1042", "Sorry, I cannot help with refunds.")
    agent_spans.assert_score(min_score=1.0)


@pytest.mark.agent_eval(min_score=1.0)
def test_marked(agent_spans):
    run_agent("m-ok", "move my flight", "Moved. ZEBRA-DONE")


def test_plain():
    pass
"""
FLAGS = ("-p", "no:cacheprovider", "-p", "no:asyncio")


def closed_port_url() -> str:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"  # nothing listens there any more


@pytest.fixture
def project(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> pytest.Pytester:
    pytester.makepyfile(agent=AGENT, test_agent=TESTS)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_JUDGE", "AGENT_EVAL_BASE_URL"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("OPENAI_API_KEY", "test-key")
    return pytester


def judge_ini(project: pytest.Pytester, base_url: str, extra: str = "") -> None:
    project.makeini(
        f"[pytest]\nagent_eval_judge = fake-model\nagent_eval_base_url = {base_url}\n{extra}"
    )


def assert_one_line_usage_error(result: pytest.RunResult, expected: str) -> None:
    """Exit 4, no test run, the message once, and no internal error chained to it."""
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + "\n" + result.stderr.str()
    lines = [line for line in text.splitlines() if expected in line]
    assert len(lines) == 1, text
    assert "no running event loop" not in text and "Traceback" not in text
    assert "passed" not in text and "failed" not in text


def test_no_judge_stops_the_session_before_any_test_with_one_line(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess(*FLAGS)
    assert_one_line_usage_error(
        result, "ERROR: agent-eval: no judge configured; pass --agent-eval-judge"
    )


def test_no_judge_found_while_a_test_scores_stops_the_session_with_one_line(
    project: pytest.Pytester,
) -> None:
    result = project.runpytest_inprocess(*FLAGS, "-k", "first or plain")  # no marker selected
    assert result.ret == pytest.ExitCode.USAGE_ERROR
    text = result.stdout.str() + "\n" + result.stderr.str()
    [line] = [x for x in text.splitlines() if "no judge configured" in x]
    assert "agent-eval: no judge configured; pass --agent-eval-judge MODEL" in line
    assert "no running event loop" not in text and "Traceback" not in text
    assert "test_plain" not in text and "passed" not in text  # the session stopped
    assert len(text.splitlines()) < 15, text


def test_an_unknown_metric_in_a_marker_is_one_line_naming_the_closest(
    project: pytest.Pytester, fake_server: FakeModelServer
) -> None:
    judge_ini(project, fake_server.base_url)
    project.makepyfile(
        test_typo="""
import pytest

@pytest.mark.agent_eval(metric="goal_acuracy")
def test_typo(agent_spans):
    pass
"""
    )
    result = project.runpytest_inprocess(*FLAGS)
    assert_one_line_usage_error(result, "ERROR: agent-eval: unknown metric 'goal_acuracy'")
    assert "did you mean 'goal_accuracy'" in result.stderr.str()
    assert fake_server.requests == []


def test_an_unknown_marker_keyword_is_one_line_naming_the_test(
    project: pytest.Pytester, fake_server: FakeModelServer
) -> None:
    judge_ini(project, fake_server.base_url)
    project.makepyfile(
        test_kw="""
import pytest

@pytest.mark.agent_eval(min_scor=0.5)
def test_kw(agent_spans):
    pass
"""
    )
    result = project.runpytest_inprocess(*FLAGS)
    assert_one_line_usage_error(
        result, "test_kw.py::test_kw: @pytest.mark.agent_eval takes the keywords"
    )
    assert "['min_scor']" in result.stderr.str()


def test_an_unknown_formatter_option_is_one_line(
    project: pytest.Pytester, fake_server: FakeModelServer
) -> None:
    judge_ini(project, fake_server.base_url)
    result = project.runpytest_inprocess(*FLAGS, "--agent-eval-formatter", "transcrpt@1")
    assert_one_line_usage_error(result, "ERROR: agent-eval: unknown formatter 'transcrpt@1'")


def test_an_unreachable_judge_is_a_test_error_not_a_failure(project: pytest.Pytester) -> None:
    judge_ini(project, closed_port_url())
    result = project.runpytest_inprocess(*FLAGS, "-rE")
    result.assert_outcomes(passed=1, errors=2)
    out = result.stdout.str()
    assert "ERROR at call of test_first" in out and "ERROR at call of test_marked" in out
    [line] = [x for x in out.splitlines() if x.startswith("agent-eval (test_agent.py::test_first)")]
    assert "the judge could not be reached for 1 of 1 conversation(s)" in line
    assert "so the agent was not judged" in line
    assert "Traceback" not in out and "FAILED" not in out


@pytest.mark.parametrize("how", ["option", "ini"])
def test_an_unreachable_judge_skips_the_test_when_asked(project: pytest.Pytester, how: str) -> None:
    extra = "agent_eval_skip_unreachable = true\n" if how == "ini" else ""
    judge_ini(project, closed_port_url(), extra)
    args = ["--agent-eval-skip-unreachable"] if how == "option" else []
    result = project.runpytest_inprocess(*FLAGS, "-rs", *args)
    result.assert_outcomes(passed=1, skipped=2)
    assert "the judge could not be reached" in result.stdout.str()


def test_a_failing_gate_beside_an_unreachable_judge_still_fails(
    project: pytest.Pytester, fake_server: FakeModelServer
) -> None:
    """Only the judge's outage is not the agent's fault: a reached verdict below it fails."""
    script_goal_judge(fake_server)
    judge_ini(project, fake_server.base_url)
    result = project.runpytest_inprocess(*FLAGS)
    result.assert_outcomes(passed=2, failed=1)


def test_every_result_names_its_test(
    project: pytest.Pytester, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    judge_ini(project, fake_server.base_url)
    out = tmp_path / "runs"
    result = project.runpytest_inprocess(*FLAGS, f"--agent-eval-out={out}")
    result.assert_outcomes(passed=2, failed=1)
    text = result.stdout.str()
    assert "agent-eval (test_agent.py::test_first): goal_accuracy@2 on conversation 'c-bad'" in text
    for test, conversation in (("test_first", "c-bad"), ("test_marked", "m-ok")):
        directory = out / f"test_agent.py_{test}"
        [row] = load_results(directory)
        assert row.conversation_id == conversation
        assert row.run_id.startswith("pytest-") and row.run_id.endswith(f"-test_agent.py_{test}")
        with ResultStore(directory) as store:
            [run] = store.runs()
        assert run.record["pytest"] == {"test": f"test_agent.py::{test}"}, run.record
