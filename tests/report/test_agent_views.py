"""The report's agent views, computed: trajectories, tool failures, shapes, names, history."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path

from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage
from agent_eval.cli._app import app
from agent_eval.ingest import ingest
from agent_eval.report._agent_views import display_name, shape_views, tool_failures
from agent_eval.report._history import history_points, history_runs, input_fingerprint
from agent_eval.report._model import build_report
from agent_eval.report._trajectory import trajectory

from . import agent_run

ROOT = Path(__file__).resolve().parents[2]
ID_LESS = ROOT / "fixtures" / "otel" / "openai-v2-events.otlp.jsonl"
MakeResult = Callable[..., MetricResult]


def _flight(tmp_path: Path) -> AgentTrace:
    (trace,) = ingest([agent_run.write(tmp_path / "run.otlp.json")])
    return trace


def test_trajectory_of_a_handoff_and_a_failed_tool(tmp_path: Path) -> None:
    tr = trajectory(_flight(tmp_path))
    assert (tr.turns, tr.llm_calls, tr.tool_calls, tr.tool_errors, tr.handoffs) == (2, 5, 3, 1, 1)
    assert tr.agents == ["triage", "booking"] and tr.timed
    assert tr.duration_ms == 61_500.0
    rows = [(s.turn, s.kind, s.label, s.duration_ms) for s in tr.steps]
    assert rows[0] == (1, "turn", "Move my flight LH401 to 13 May.", 2000.0)
    assert rows[8] == (2, "turn", "Try 14 May then.", 1500.0)
    (failed,) = [s for s in tr.steps if s.error]
    assert (failed.kind, failed.label, failed.duration_ms, failed.depth) == (
        "tool", agent_run.FAILED_TOOL, 250.0, 2,
    )  # fmt: skip
    assert failed.error == f"{agent_run.ERROR_TYPE}: {agent_run.ERROR_MESSAGE}"
    assert failed.start_ms == 910.0
    # on its turn's axis (0..2000 ms -> 0..100%): starts at 910 ms, lasts 250 ms
    assert (failed.x, failed.width) == (46, 12)
    (handoff,) = [s for s in tr.steps if s.handoff_from]
    assert (handoff.kind, handoff.agent, handoff.handoff_from) == ("llm", "booking", "triage")


def test_trajectory_without_span_times_follows_the_messages() -> None:
    trace = AgentTrace(
        conversation_id="log",
        messages=(
            UserMessage(content="refund A-1"),
            AssistantMessage(agent_name="a", tool_calls=(ToolCall(id="1", name="refund"),)),
            ToolMessage(content="Error: no such order", tool_call_id="1", is_error=True),
            AssistantMessage(agent_name="b", content="Sorry."),
        ),
    )
    tr = trajectory(trace)
    assert not tr.timed and tr.duration_ms is None
    assert [(s.kind, s.label, s.error) for s in tr.steps] == [
        ("turn", "refund A-1", None),
        ("llm", "reply", None),
        ("tool", "refund", "Error: no such order"),
        ("llm", "reply", None),
    ]
    assert (tr.tool_calls, tr.tool_errors, tr.handoffs) == (1, 1, 1)
    tools, types = tool_failures({"log": trace})
    assert [(t.tool, t.calls, t.failures, t.error_types) for t in tools] == [
        ("refund", 1, 1, {"flagged result": 1})
    ]
    assert [(e.error_type, e.count) for e in types] == [("flagged result", 1)]


def test_tool_failures_count_calls_and_failures_per_tool(tmp_path: Path) -> None:
    tools, types = tool_failures({"flight-change": _flight(tmp_path)})
    assert [(t.tool, t.calls, t.failures, t.error_types, t.conversation_ids) for t in tools] == [
        ("change_flight", 2, 1, {"ValueError": 1}, ["flight-change"]),
        ("transfer_to_booking", 1, 0, {}, []),
    ]
    assert tools[0].failure_rate == 0.5
    assert [(e.error_type, e.count, e.where) for e in types] == [
        ("ValueError", 1, {"change_flight": 1})
    ]


def test_shapes_bin_scores_by_conversation_shape(make_result: MakeResult) -> None:
    traces = {
        f"c{i}": AgentTrace(
            conversation_id=f"c{i}",
            messages=tuple(UserMessage(content="hi") for _ in range(i)),
        )
        for i in range(1, 9)
    }
    rows = [("v", make_result(f"c{i}", "1" if i < 5 else "0")) for i in range(1, 9)]
    rows.append(("v", make_result("c9", "1")))  # no stored conversation: left out
    (view,) = shape_views(rows, traces)
    assert view.n == 8
    turns = view.shapes["turns"]
    assert sum(b.n for b in turns) == 8 and len(turns) <= 5  # 8 values: quintile bins
    assert [b.label for b in turns] == ["1", "2–3", "4", "5–6", "7–8"]
    assert [b.mean_score for b in turns] == [1.0, 1.0, 1.0, 0.0, 0.0]
    assert [b.failing for b in turns] == [0, 0, 0, 2, 2]
    assert [b.label for b in view.shapes["tool calls"]] == ["0"]


def test_readable_names_for_id_less_conversations() -> None:
    traces = [t for t in ingest([ID_LESS]) if t.conversation_id in t.trace_ids]
    assert len(traces) >= 3
    for t in traces:
        name = display_name(t.conversation_id, t)
        first = next(m.content for m in t.messages if m.role == "user")
        assert name.endswith(f" · {t.conversation_id[:8]}")
        assert name.startswith(" ".join(first.split())[:40])
    named = AgentTrace(conversation_id="c1", messages=(UserMessage(content="hello"),))
    assert display_name("c1", named) == "c1"  # a conversation id is kept as it is


def test_conversations_are_listed_by_start_time(make_result: MakeResult) -> None:
    traces = {t.conversation_id: t for t in ingest([ID_LESS])}
    data = build_report([make_result(cid, "1") for cid in traces], traces=traces)
    starts = [min(s.start_ns for s in traces[c.conversation_id].spans) for c in data.conversations]
    assert starts == sorted(starts) and len(starts) == len(traces)
    named = {c.conversation_id: c.name for c in data.conversations}
    assert named["otel-v2/refund"] == "otel-v2/refund"
    assert sum(cid != name for cid, name in named.items()) == len(traces) - 1
    assert data.names == {cid: n for cid, n in named.items() if cid != n}
    baseline = build_report([make_result(cid, "1") for cid in traces], traces=traces,
                            agent_views=False)  # fmt: skip
    assert baseline.conversations[0].trajectory is None and not baseline.tools


def _score(inputs: Path, out: Path) -> None:
    result = CliRunner().invoke(
        app, ["score", str(inputs), "--metric", "tool_errors", "--out", str(out)]
    )
    assert result.exit_code == 0, result.output


def test_history_matches_runs_of_the_same_inputs(tmp_path: Path) -> None:
    inputs, other = tmp_path / "inputs", tmp_path / "other"
    inputs.mkdir()
    other.mkdir()
    agent_run.write(inputs / "run.otlp.json")
    shutil.copy(ID_LESS, other)
    runs = tmp_path / "runs"
    for name in ("a", "b", "c"):
        _score(inputs, runs / name)
    _score(other, runs / "different-inputs")
    from agent_eval.run._store import load_results

    current = load_results(runs / "c")
    found = history_runs(runs / "c", current)
    assert sorted(h.path for h in found) == [str(runs / "a"), str(runs / "b")]
    assert {h.matched for h in found} == {"input fingerprint"}
    given = history_runs(runs / "c", current, [runs / "different-inputs"])
    assert len(given) == 3 and given[0].matched == "given"
    points = history_points(current, found)["tool_errors@1"]
    assert [p.current for p in points] == [False, False, True]
    assert all(p.n == 1 and p.mean_score == 2 / 3 for p in points)
    assert input_fingerprint({"inputs": [{"sha256": "b"}, {"sha256": "a"}]}) == (
        input_fingerprint({"inputs": [{"sha256": "a"}, {"sha256": "b"}]})
    )
    assert input_fingerprint({}) is None
