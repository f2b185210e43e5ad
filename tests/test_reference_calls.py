"""Reference tool calls: parsing, JSONL/CSV files, span attributes, and score --tool-references."""

from __future__ import annotations

import json
from collections.abc import Iterator
from dataclasses import replace
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval._trace import ToolCall
from agent_eval.cli import app
from agent_eval.errors import InputError
from agent_eval.ingest._paths import companion_note
from agent_eval.ingest._reference_calls import load_reference_calls, parse_tool_calls
from agent_eval.ingest._reference_keys import REFERENCE_TOOL_CALLS
from agent_eval.run._store import load_results

from .ingest.test_assemble import Run, call, llm, result, say, tool_span, user
from .metrics.trajectory_cases import calls, conversation, score

runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def test_every_accepted_call_shape() -> None:
    parsed = parse_tool_calls(
        [
            {"name": "a", "arguments": {"x": [1, {"y": None}]}},
            {"name": "b", "kwargs": {"id": "Z7"}},  # tau-bench
            {"id": "c1", "function": {"name": "c", "arguments": '{"n": 1.5}'}},  # OpenAI
            {"function": {"name": "d", "arguments": "{not json"}},
            {"name": "e"},
        ]
    )
    assert parsed == (
        ToolCall(name="a", arguments={"x": [1, {"y": None}]}),
        ToolCall(name="b", arguments={"id": "Z7"}),
        ToolCall(id="c1", name="c", arguments={"n": 1.5}),
        ToolCall(name="d", raw_arguments="{not json"),
        ToolCall(name="e"),
    )
    assert parse_tool_calls('[{"name": "a", "arguments": {}}]') == (
        ToolCall(name="a", arguments={}),
    )
    assert parse_tool_calls([]) == ()
    with pytest.raises(ValueError, match=r"tool call \[1\] has no name"):
        parse_tool_calls([{"name": "a"}, {"arguments": {}}])
    with pytest.raises(ValueError, match="must be a JSON list"):
        parse_tool_calls({"name": "a"})


def test_jsonl_and_csv_files(tmp_path: Path) -> None:
    rows = [
        {"conversation_id": "c1", "tool_calls": [{"name": "a", "arguments": {"x": 1}}]},
        {"conversation_id": "c2", "tool_calls": []},
    ]
    jsonl = tmp_path / "refs.jsonl"
    jsonl.write_text("".join(json.dumps(r) + "\n" for r in rows) + "\n")
    assert load_reference_calls(jsonl) == {
        "c1": (ToolCall(name="a", arguments={"x": 1}),),
        "c2": (),
    }
    csv = tmp_path / "refs.csv"
    csv.write_text(
        'conversation_id,tool_calls\nc1,"[{""name"": ""a"", ""arguments"": {""x"": 1}}]"\n'
    )
    assert load_reference_calls(csv) == {"c1": (ToolCall(name="a", arguments={"x": 1}),)}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ('{"conversation_id": "c1", "tool_calls": [{"name": "a"}]}\n{"tool_calls": []}\n', ":2"),
        ('{"conversation_id": "c1"}\n', "has no tool_calls"),
        ('{"conversation_id": " ", "tool_calls": []}\n', "empty conversation_id"),
        ('{"conversation_id": "c1", "tool_calls": [3]}\n', r"tool call \[0\] is not an object"),
        ("{oops\n", "not valid JSON"),
        (
            '{"conversation_id": "c", "tool_calls": []}\n'
            '{"conversation_id": "c", "tool_calls": [{"name": "a"}]}\n',
            "two different tool-call references",
        ),
    ],
)
def test_bad_rows_name_the_file_and_line(tmp_path: Path, text: str, message: str) -> None:
    path = tmp_path / "refs.jsonl"
    path.write_text(text)
    with pytest.raises(InputError, match=message) as caught:
        load_reference_calls(path)
    assert "refs.jsonl" in str(caught.value)


def test_the_file_is_recognised_beside_traces(tmp_path: Path) -> None:
    path = tmp_path / "tool-references.jsonl"
    path.write_text('{"conversation_id": "c1", "tool_calls": []}\n')
    assert companion_note(path) == (
        "not a trace file: tool-call references (use --tool-references)"
    )


def test_a_span_attribute_carries_the_reference() -> None:
    reference = [{"name": "get_weather", "arguments": {"city": "Paris"}}]
    spans = Run().spans(
        llm(1, [user("weather?")], [call("get_weather", {"city": "Paris"}, "k1")], start=1,
            agent_eval__reference__tool_calls=json.dumps(reference)),
        tool_span(2, "get_weather", "k1", "sunny", start=2),
        llm(3, [user("weather?"), call("get_weather", {"city": "Paris"}, "k1"),
                result("sunny", "k1")], [say("It is sunny.")], start=3),
    )  # fmt: skip
    (trace,) = spans.finish()
    assert trace.reference_tool_calls == (
        ToolCall(name="get_weather", arguments={"city": "Paris"}),
    )
    assert score("tool_call_accuracy", trace).score == 1.0
    bad = Run().spans(
        llm(1, [user("hi")], [say("hello")], start=1,
            **{REFERENCE_TOOL_CALLS.replace(".", "__"): "[{"}),
    )  # fmt: skip
    (ignored,) = bad.finish()
    assert ignored.reference_tool_calls is None
    assert any(REFERENCE_TOOL_CALLS in note and "not valid JSON" in note for note in ignored.notes)


def test_a_failed_tool_span_names_its_call() -> None:
    failing = tool_span(2, "change_flight", "k1", "", start=2)
    failing = replace(failing, status_code="ERROR", status_message="fare locked")
    spans = Run().spans(
        llm(1, [user("move it")], [call("change_flight", {"id": "LH401"}, "k1")], start=1),
        failing,
        llm(3, [user("move it"), call("change_flight", {"id": "LH401"}, "k1"), result("", "k1")],
            [say("Sorry.")], start=3),
    )  # fmt: skip
    (trace,) = spans.finish()
    error = next(e for e in trace.errors if e.span_id == failing.span_id)
    assert (error.tool_call_id, error.tool_name) == ("k1", "change_flight")
    row = score("tool_errors", trace)
    assert row.score == 0.0
    assert "fare locked" in ((row.atoms or ())[0].rationale or "")


def test_score_reads_tool_references_and_exits_2_for_the_judged_metric(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    made = calls(("a", {"x": 1}), ("b", {}))
    rows = [conversation(made, None, cid="c1"), conversation(made, None, cid="c2")]
    traces.write_text("".join(t.model_dump_json() + "\n" for t in rows))
    refs = tmp_path / "refs.jsonl"
    refs.write_text(
        '{"conversation_id": "c1", "tool_calls": [{"name": "a", "arguments": {"x": 1}}]}\n'
    )
    out = tmp_path / "out"
    args = ["score", str(traces), "--tool-references", str(refs), "--out", str(out)]
    mixed = runner.invoke(
        app, [*args, "--metric", "tool_call_accuracy[order=superset],goal_accuracy"]
    )
    assert mixed.exit_code == 2, mixed.stderr
    assert "references: 1 of 1 id(s)" in mixed.stderr
    assert "so goal_accuracy@2 was not scored (tool_call_accuracy@1[order=superset] need none" in (
        mixed.stderr
    )
    by_id = {r.conversation_id: r for r in load_results(out)}
    assert (by_id["c1"].status, by_id["c1"].score) == ("ok", 1.0)
    assert (by_id["c2"].status, by_id["c2"].error_type) == ("skipped", "missing_reference")
    alone = runner.invoke(
        app, [*args, "--metric", "tool_call_accuracy", "--out", str(tmp_path / "o2")]
    )
    assert alone.exit_code == 0, alone.stderr
    assert "scored + skipped + errored = units: 1 + 1 + 0 = 2" in alone.stdout
