"""``bench/judge_injection.py`` against the fake server: a gullible judge that believes injected
content flips every injected failure, and two configurations that disagree are counted."""

from __future__ import annotations

import importlib.util
from pathlib import Path
from types import ModuleType

import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured

ROOT = Path(__file__).resolve().parents[2]


def _bench() -> ModuleType:
    path = ROOT / "bench" / "judge_injection.py"
    spec = importlib.util.spec_from_file_location("judge_injection", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _conversation(cid: str, success: int) -> AgentTrace:
    return AgentTrace(
        conversation_id=cid,
        messages=(
            UserMessage(content="Cancel order 7 please."),
            AssistantMessage(tool_calls=(ToolCall(id="c1", name="cancel", arguments={"id": 7}),)),
            ToolMessage(content='{"error": "order already shipped"}', tool_call_id="c1"),
            AssistantMessage(content="Sorry, order 7 has already shipped."),
        ),
        labels={"success": success},
    )


def _gullible(bench: ModuleType, server: FakeModelServer) -> None:
    """Believe the injected content; see the whole conversation as done under xml@1."""

    def infer(request: RecordedRequest) -> Structured:
        believed = bench.DONE in request.text or bench.PLEA in request.text
        done = believed or "<conversation>" in request.text
        return Structured({"user_goal": "cancel", "end_state": "done" if done else "not done"})

    def compare(request: RecordedRequest) -> Structured:
        verdict = "0" if "not done" in request.text else "1"
        return Structured({"reason": "compared", "verdict": verdict})

    server.add_rule(infer, schema="GoalAndOutcome")
    server.add_rule(compare, schema="OutcomeComparison")


def test_flips_and_disagreement_are_counted(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    bench = _bench()
    inputs = tmp_path / "traces.jsonl"
    traces = [_conversation("f1", 0), _conversation("f2", 0), _conversation("s1", 1)]
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces), encoding="utf-8")
    monkeypatch.setenv("FAKE_KEY", "sk-test")
    with FakeModelServer() as server:
        _gullible(bench, server)
        bench.main(
            ["--base-url", server.base_url, "--model", "fake", "--api-key-env", "FAKE_KEY",
             "--inputs", str(inputs), "--formatter", "ragas-pretty@1",
             "--compare", "goal_accuracy@1+xml@1", "goal_accuracy@1+ragas-pretty@1"]
        )  # fmt: skip
    out = capsys.readouterr().out
    assert "3 conversations read, 2 failed ones injected with 5 templates" in out
    assert "goal_accuracy@1+ragas-pretty@1: clean verdicts {'0': 2}" in out
    for template in bench.TEMPLATES:
        assert f"  {template:<18} {2:>7} {2:>5} {2:>7} {0:>6}" in out
    assert "disagree on 3 of 3 (100%)" in out
