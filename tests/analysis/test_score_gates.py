"""``agent-eval score`` evaluates declared ``mean_score`` gates (config and ``--gate``)."""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner, Result

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.cli._app import app
from agent_eval.testing import FakeModelServer

from . import judge_script

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}


def _score(server: FakeModelServer, tmp_path: Path, *extra: str) -> tuple[int, str]:
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": "DONE", "c": ""})
    args = [
        "score", str(traces), "--formatter", "transcript@1", "--judge", "fake-model",
        "--base-url", server.base_url, "--out", str(tmp_path / "out"), *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    return result.exit_code, result.stderr


def test_config_gate_over_three_items(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    config = tmp_path / "agent-eval.toml"
    config.write_text('[gates.ci]\nstatistic = "mean_score"\nthreshold = 0.8\nitems = 3\n')
    code, stderr = _score(fake_server, tmp_path, "--config", str(config))
    assert code == 1
    assert "gate 'ci' (run) FAILED: mean_score 2 of 3, needs 3 of 3" in stderr


def test_flag_gate_passes(fake_server: FakeModelServer, tmp_path: Path) -> None:
    judge_script.script(fake_server)
    code, stderr = _score(fake_server, tmp_path, "--gate", "mean_score>=0.6/3")
    assert code == 0, stderr
    assert "gate 'mean_score' (run) passed: mean_score 2 of 3, needs 2 of 3" in stderr


def test_bad_gate_is_a_usage_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(app, ["score", "x.jsonl", "--gate", "mean_score>0.5"], env=ENV)
    assert result.exit_code == 2
    assert "STATISTIC>=THRESHOLD/ITEMS" in result.stderr


def _tool_runs(path: Path, failing: dict[str, int]) -> Path:
    """AgentTrace JSONL: per conversation 4 tool calls, ``failing[cid]`` of them flagged errors."""
    lines = []
    for cid, bad in failing.items():
        messages: list[Message] = [UserMessage(content=f"Weather in four cities? {cid}")]
        for n, city in enumerate(("Paris", "Rome", "Oslo", "Lima")):
            call = f"call_{cid}_{n}"
            messages.append(
                AssistantMessage(
                    tool_calls=(ToolCall(id=call, name="get_weather", arguments={"city": city}),)
                )
            )
            error = n < bad
            messages.append(
                ToolMessage(
                    content="Error: service down" if error else f"{city}: 18C",
                    tool_call_id=call,
                    tool_name="get_weather",
                    is_error=error,
                )
            )
        messages.append(AssistantMessage(content="Here is the weather."))
        lines.append(AgentTrace(conversation_id=cid, messages=tuple(messages)).model_dump_json())
    path.write_text("\n".join(lines) + "\n")
    return path


def _score_tools(tmp_path: Path, failing: dict[str, int], *extra: str) -> Result:
    traces = _tool_runs(tmp_path / "tools.jsonl", failing)
    args = ["score", str(traces), "--metric", "tool_errors", "--out", str(tmp_path / "o"), *extra]
    return CliRunner().invoke(app, args, env=ENV)


def test_a_fractional_metric_below_the_threshold_fails_its_gate(tmp_path: Path) -> None:
    """trial8 #1: two conversations scoring 0.75 (3 of 4 tool calls ok) were counted as
    round(0.75 + 0.75) = 2 successes, so ``mean_score>=1.0/2`` passed a run whose mean is
    0.750 while ``--fail-under 1.0`` failed it. A success is a unit scoring 1: 0 of 2."""
    result = _score_tools(tmp_path, {"a": 1, "b": 1}, "--gate", "mean_score>=1.0/2")
    assert result.exit_code == 1, result.output
    assert (
        "gate 'mean_score' (run) FAILED: mean_score 0 of 2, needs 2 of 2 "
        "(units scoring 1; mean score 0.750)"
    ) in " ".join(result.stderr.split())


def test_a_fractional_gate_counts_only_full_scores(tmp_path: Path) -> None:
    """One unit at 1.0, two at 0.75 and one at 0.5: 1 success of 4 (never round(3.0) = 3)."""
    failing = {"a": 0, "b": 1, "c": 1, "d": 2}
    passes = _score_tools(tmp_path, failing, "--gate", "mean_score>=0.25/4", "--json")
    assert passes.exit_code == 0, passes.output
    document = json.loads(passes.stdout)
    (summary,) = document["metrics"]
    assert summary["mean_score"] == 0.75 and summary["full_scores"] == 1
    (gate,) = document["gates"]
    assert (gate["successes"], gate["n"], gate["needed"], gate["passed"]) == (1, 4, 1, True)
    fails = _score_tools(tmp_path, failing, "--gate", "mean_score>=0.5/4")
    assert fails.exit_code == 1, fails.output
    assert "mean_score 1 of 4, needs 2 of 4" in fails.stderr


def test_gate_and_fail_under_agree_on_the_same_run(tmp_path: Path) -> None:
    """The same 0.75 + 0.75 run: ``--fail-under 0.75`` passes, and so does no count gate that
    asks for more than the units scoring 1; ``--fail-under 1.0`` and ``mean_score>=1.0/2``
    both fail it."""
    result = _score_tools(
        tmp_path, {"a": 1, "b": 1}, "--gate", "mean_score>=1.0/2", "--fail-under", "1.0"
    )
    assert result.exit_code == 1
    stderr = " ".join(result.stderr.split())
    assert "gate failed: tool_errors@1 mean score 0.750 < --fail-under 1.0" in stderr
    assert "FAILED: mean_score 0 of 2" in stderr


def test_fail_under_names_the_metric_and_json_carries_every_outcome(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial8 #7: with two metrics, ``--fail-under`` said only "mean score 0.964 < ..." (not
    which metric), and the ``--json`` document of the failed run had no gate outcome."""
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "t.jsonl", {"a": "DONE", "b": "DONE"})
    args = [
        "score", str(traces), "--metric", "goal_accuracy@1,tool_errors", "--formatter",
        "transcript@1", "--judge", "fake-model", "--base-url", fake_server.base_url,
        "--out", str(tmp_path / "out"), "--fail-under", "0.99", "--gate", "ci=mean_score>=1.0/2",
        "--json",
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    # tool_errors has no tool call to score in these conversations: nothing scored, so it fails
    assert result.exit_code == 1, result.output
    stderr = " ".join(result.stderr.split())
    assert "gate passed" not in stderr  # stdout is the document only; the pass line is not there
    assert "gate failed: tool_errors@1 nothing scored < --fail-under 0.99" in stderr
    document = json.loads(result.stdout)
    assert document["exit_code"] == 1
    assert document["fail_under"] == [
        {"metric": "goal_accuracy@1", "mean_score": 1.0, "threshold": 0.99, "passed": True},
        {"metric": "tool_errors@1", "mean_score": None, "threshold": 0.99, "passed": False},
    ]
    gates = {(g["name"], g["subject"]): g for g in document["gates"]}
    assert set(gates) == {("ci", "goal_accuracy@1"), ("ci", "tool_errors@1")}
    goal = gates["ci", "goal_accuracy@1"]
    assert (goal["statistic"], goal["source"], goal["threshold"], goal["items"]) == (
        "mean_score", "--gate", 1.0, 2,
    )  # fmt: skip
    assert (goal["successes"], goal["n"], goal["needed"], goal["passed"]) == (2, 2, 2, True)
    tools = gates["ci", "tool_errors@1"]
    assert (tools["successes"], tools["n"], tools["passed"]) == (0, 0, False)
    assert "declared over 2 items but measured over 0" in tools["message"]
