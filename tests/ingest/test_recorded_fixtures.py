"""Fixtures recorded by real tools beyond the OTel Python exporters, message for message.

One agent recorded twice must give one conversation (issue 19, item 10).

``fixtures/overlap/`` was recorded by ``fixtures/generate.py`` (``expected.json`` "overlaps"):

- Strands to one file, and opentelemetry-instrumentation-openai-v2 on the same openai client to
  another (child ``chat`` spans in the same traces, no ``session.id``; openai-v2 2.4b0 records
  Strands' list-of-parts user content as empty ``parts``);
- one bare openai client instrumented by openinference (``session.id``) and by openai-v2, each
  to its own file (openai-v2's root span over openinference's, a trace per call);
- Strands on one provider with two exporters: OTLP and the SDK's ``ConsoleSpanExporter``.

Also here (issue 19, item 12): the vcrpy cassette with gzip bodies (``fixtures/cassettes``), the
Langfuse SDK's own OTLP export (``fixtures/langfuse``), both expected.json "recordings", and the
OTel JS SDK ConsoleSpanExporter's output (``fixtures/js``).

Before the fix the first pair yielded no conversation at all (the empty user turns of the child
spans won, and the guard dropped it), and a copy of an events file doubled every message.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage, Message, ToolMessage
from agent_eval.cli._app import app
from agent_eval.ingest._pipeline import ingest
from agent_eval.run._store import load_results

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures"
EXPECTED: dict[str, Any] = json.loads((FIXTURES / "expected.json").read_text())
OVERLAPS: list[dict[str, Any]] = EXPECTED["overlaps"]
BY_LIBRARY = {o["library"]: o for o in OVERLAPS}


def normalized(message: Message) -> dict[str, Any]:
    """A message in the shape expected.json uses."""
    out: dict[str, Any] = {"role": message.role, "content": message.content}
    if isinstance(message, AssistantMessage):
        calls = message.tool_calls or ()
        out["tool_calls"] = [{"id": c.id, "name": c.name, "arguments": c.arguments} for c in calls]
        out["agent_name"] = message.agent_name
    if isinstance(message, ToolMessage):
        out["tool_call_id"] = message.tool_call_id
        out["tool_name"] = message.tool_name
    return out


def only(paths: list[Path]) -> tuple[AgentTrace, Any]:
    run = ingest(paths)
    (trace,) = run.collect()
    return trace, run.report


@pytest.mark.parametrize("overlap", OVERLAPS, ids=lambda o: o["library"])
def test_both_files_ingest_to_exactly_the_scripted_conversation(overlap: dict[str, Any]) -> None:
    trace, report = only([FIXTURES / f for f in overlap["files"]])
    assert trace.conversation_id == overlap["conversation_id"]
    assert [normalized(m) for m in trace.messages] == overlap["messages"]
    assert [(u.model, u.calls) for u in trace.usage] == [("fake-model", 4)]
    assert report.balanced
    assert not report.skipped
    assert report.conversations == 1


def test_framework_over_client_instrumentation_reads_the_richer_framework_span() -> None:
    overlap = BY_LIBRARY["overlap-strands-openai-v2"]
    strands, client = (FIXTURES / f for f in overlap["files"])
    trace, report = only([strands, client])
    assert report.spans_ignored["duplicate_of_parent_llm_span"] == 4  # openai-v2's chat spans
    assert trace.source.files == (str(strands),)
    assert trace.notes == (
        f"4 LLM call(s) were recorded twice, by spans in two files (a span in {strands} over one "
        f"in {client}: two instrumentations of one call); each was read once, from the inner "
        f"span unless the outer one recorded more message content (4 from {strands})",
    )
    # the client file alone recorded no user text: skipped with its reason, never scored
    run = ingest(client)
    assert run.collect() == []
    assert {s.reason for s in run.report.skipped} == {"no_message_content"}


def test_two_client_instrumentations_read_the_inner_span_and_note_the_overlap() -> None:
    overlap = BY_LIBRARY["overlap-openinference-openai-v2"]
    inner, outer = (FIXTURES / f for f in overlap["files"])
    trace, report = only([inner, outer])
    assert report.spans_ignored["duplicate_of_child_llm_span"] == 4  # openai-v2's outer spans
    assert len(trace.trace_ids) == 4  # one trace per call, grouped by openinference's session.id
    assert any("4 LLM call(s) were recorded twice" in n for n in trace.notes)
    # each file alone is the same conversation: by session.id, or folded bare calls
    alone = [only([p])[0] for p in (inner, outer)]
    assert [[normalized(m) for m in t.messages] for t in alone] == [overlap["messages"]] * 2


def test_two_exporters_of_one_provider_read_each_span_once() -> None:
    overlap = BY_LIBRARY["overlap-two-exporters"]
    otlp, console = (FIXTURES / f for f in overlap["files"])
    trace, report = only([otlp, console])
    spans = report.files[1].spans_read
    assert report.spans_ignored["duplicate_span"] == spans == report.files[0].spans_read
    assert trace.notes == (
        f"{spans} span(s) were read from more than one file ({otlp}, {console}: the same trace "
        "and span ids, one export given twice); each was used once",
    )
    assert {p.source.container for p in (trace,)} == {"otlp-json"}
    (console_only, _) = only([console])
    assert console_only.source.container == "otel-python-console"
    assert [normalized(m) for m in console_only.messages] == overlap["messages"]


def test_the_same_file_twice_on_the_command_line_is_read_once() -> None:
    overlap = BY_LIBRARY["overlap-strands-openai-v2"]
    path = FIXTURES / overlap["files"][0]
    trace, report = only([path, path, str(path)])
    assert [f.path for f in report.files] == [str(path)]
    assert [normalized(m) for m in trace.messages] == overlap["messages"]


@pytest.mark.parametrize(
    "name", ["traceloop-events.otlp.jsonl", "openai-v2-latest-event.otlp.jsonl"]
)
def test_a_copy_of_an_events_file_adds_no_message(tmp_path: Path, name: str) -> None:
    """Regression: the copy's log records were joined to the spans again, doubling messages."""
    original = FIXTURES / "otel" / name
    copy = tmp_path / name
    shutil.copy(original, copy)
    (alone, _) = only([original])
    trace, report = only([original, copy])
    assert trace.messages == alone.messages
    assert report.logs_ignored["duplicate_log"] == report.files[1].logs_read > 0
    assert report.logs_used == report.files[0].logs_read
    assert report.balanced
    assert any("were read from more than one file" in n for n in trace.notes)


def test_vcrpy_cassette_with_gzip_bodies_ingests_to_the_scripted_conversation() -> None:
    """Recorded with the real vcrpy against the fake server, which gzip-encodes as OpenAI does."""
    (cassette,) = [
        r
        for r in json.loads((FIXTURES / "expected.json").read_text())["recordings"]
        if r["library"] == "openai-vcr-gzip"
    ]
    path = FIXTURES / cassette["file"]
    raw = path.read_text()
    assert raw.count("!!binary") == raw.count("  response:") == 4
    assert "H4sI" in raw  # base64 of the gzip magic bytes 1f 8b 08
    assert "sk-fixtures" not in raw  # vcrpy filtered the authorization header
    trace, report = only([path])
    assert trace.conversation_id == cassette["conversation_id"]
    assert [normalized(m) for m in trace.messages] == cassette["messages"]
    assert [(u.model, u.calls) for u in trace.usage] == [("fake-model", 4)]
    assert trace.source.container == "openai-cassette"
    assert not report.skipped


def test_langfuse_sdk_export_ingests_to_the_scripted_conversation() -> None:
    """The Langfuse SDK's own OTLP export (langfuse.observation.*), captured at a local endpoint:
    generations of its ``langfuse.openai`` client under an ``agent`` observation."""
    (recorded,) = [
        r
        for r in json.loads((FIXTURES / "expected.json").read_text())["recordings"]
        if r["library"] == "langfuse-sdk"
    ]
    trace, report = only([FIXTURES / recorded["file"]])
    assert trace.conversation_id == recorded["conversation_id"] == "langfuse-sdk/trip"
    assert [normalized(m) for m in trace.messages] == recorded["messages"]
    assert list(trace.trace_ids) == recorded["trace_ids"]
    usage = [(u.model, u.calls) for u in trace.usage]
    assert usage == [("fake-model", 4)]
    assert trace.usage[0].input_tokens > 0 and trace.usage[0].output_tokens > 0
    assert trace.source.container == "otlp-proto"
    assert trace.source.conventions == ("langfuse-sdk",)
    assert report.spans_used == report.files[0].spans_read == 5  # 4 generations + the agent
    assert not report.skipped


def test_js_console_span_exporter_output_ingests_to_the_scripted_conversation() -> None:
    """``fixtures/js/console-spans.jsonl``: the objects the OTel JS SDK 2.x ConsoleSpanExporter
    printed, as JSON (``record-readable-spans.mjs``); the spans' content is the scripted trip."""
    script = next(c for c in EXPECTED["conversations"] if c["library"] == "strands-latest")
    trace, report = only([FIXTURES / "js" / "console-spans.jsonl"])
    assert trace.conversation_id == "otel-js/trip"
    assert [normalized(m) for m in trace.messages] == script["messages"]
    assert trace.source.container == "otel-js"
    assert len(trace.trace_ids) == 2  # one trace per user turn
    assert report.spans_used == report.files[0].spans_read == 9
    assert not report.skipped
    assert trace.notes == ()


def test_a_directory_walk_passes_over_the_node_script_beside_it() -> None:
    """Regression: ``.mjs``/``.cjs`` files were offered to the containers ("not recognised")."""
    from agent_eval.ingest._paths import expand_paths

    found = [Path(i.path).name for i in expand_paths([FIXTURES / "js"])]
    assert found == ["console-spans.jsonl"]


HANDOFFS: list[dict[str, Any]] = EXPECTED["handoffs"]


@pytest.mark.parametrize("handoff", HANDOFFS, ids=lambda h: h["library"])
def test_a_handoff_is_the_call_the_model_made_with_its_one_result(
    handoff: dict[str, Any], tmp_path: Path
) -> None:
    """trial7 #2: the OpenAI Agents SDK's ``handoff to booking_agent`` TOOL span (openinference,
    no ``tool.name``) became a phantom nameless call with a second result, and the booking
    agent's instructions landed before the transfer's result. The conversation is what the
    models were sent: the transfer call, its one result, then the next agent's instructions."""
    trace, report = only([FIXTURES / handoff["file"]])
    assert trace.conversation_id == handoff["conversation_id"]
    assert [normalized(m) for m in trace.messages] == handoff["messages"]
    assert report.spans_ignored["agent_handoff"] == 1
    assert report.balanced and not report.skipped
    assert trace.agent_names == ("triage_agent", "booking_agent")
    # the tool metrics count the two calls the models made, and nothing else
    references = tmp_path / "tool-references.jsonl"
    references.write_text(json.dumps({"conversation_id": trace.conversation_id,
                                      "tool_calls": handoff["tool_calls"]}) + "\n")  # fmt: skip
    out = tmp_path / "run"
    args = [
        "score", str(FIXTURES / handoff["file"]), "--metric", "tool_errors,tool_call_accuracy",
        "--tool-references", str(references), "--out", str(out),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    rows = {r.metric: r for r in load_results(out)}
    errors, accuracy = rows["tool_errors@1"], rows["tool_call_accuracy@1"]
    assert errors.reason == "0 of 2 tool call(s) returned an error"
    assert [a.text for a in errors.atoms or ()] == [
        "transfer_to_booking_agent({})",
        'book_flight({"city":"Oslo"})',
    ]
    assert (accuracy.status, accuracy.score) == ("ok", 1.0)


STACKS: list[dict[str, Any]] = EXPECTED["stacks"]
"""Issue 32's stacks (``fixtures/stacks``, ``fixtures/stacks.py``): AutoGen AgentChat, LiteLLM's
OTel callback (both shapes), a LangGraph supervisor, an Agents SDK handoff over chat
completions, a Haystack agent."""
WITH_TEXT = [s for s in STACKS if not s.get("skipped")]


@pytest.mark.parametrize("stack", WITH_TEXT, ids=lambda s: s["library"])
def test_each_stack_ingests_to_exactly_its_conversation(stack: dict[str, Any]) -> None:
    """Messages, tool calls with ids and arguments, tool results with their call ids, and the
    agent on every assistant message; one conversation from the whole file, nothing skipped.

    Before issue 32: AutoGen's role-``function`` tool results were empty tool messages (one lost)
    and its turns two conversations; LiteLLM's tool calls and call ids vanished; the LangGraph
    supervisor's messages were all labelled ``agent``; the handoff's ``{}`` was ``null``.
    """
    trace, report = only([FIXTURES / stack["file"]])
    assert trace.conversation_id == stack["conversation_id"]
    assert [normalized(m) for m in trace.messages] == stack["messages"]
    assert report.balanced and not report.skipped and report.conversations == 1
    tool_messages = [m for m in trace.messages if isinstance(m, ToolMessage)]
    assert all(m.content and m.tool_call_id for m in tool_messages)


def test_the_supervisor_and_its_agent_each_label_their_own_messages() -> None:
    (stack,) = [s for s in STACKS if s["library"] == "langgraph-supervisor"]
    trace, _ = only([FIXTURES / stack["file"]])
    speakers = [m.agent_name for m in trace.messages if isinstance(m, AssistantMessage)]
    assert set(speakers) == {"supervisor", "weather_agent"}
    assert trace.agent_names == ("supervisor", "weather_agent")
    backs = [m for m in trace.messages if isinstance(m, AssistantMessage) and m.tool_calls
             and m.tool_calls[0].name == "transfer_back_to_supervisor"]  # fmt: skip
    assert len(backs) == 2 and {m.agent_name for m in backs} == {"weather_agent"}


@pytest.mark.parametrize("library", ["openai-agents-chat-handoff", "langgraph-supervisor"])
def test_tool_call_accuracy_reads_empty_handoff_arguments(library: str, tmp_path: Path) -> None:
    """The transfer's ``{}`` is ``{}``: chat-completions and Responses recordings agree (1.0)."""
    (stack,) = [s for s in STACKS if s["library"] == library]
    references = tmp_path / "tool-references.jsonl"
    references.write_text(json.dumps({"conversation_id": stack["conversation_id"],
                                      "tool_calls": stack["tool_calls"]}) + "\n")  # fmt: skip
    out = tmp_path / "run"
    args = ["score", str(FIXTURES / stack["file"]), "--metric", "tool_call_accuracy",
            "--tool-references", str(references), "--out", str(out)]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    (row,) = load_results(out)
    assert (row.status, row.score) == ("ok", 1.0)


def test_autogen_own_tracing_is_skipped_with_what_it_is_and_what_to_add() -> None:
    (stack,) = [s for s in STACKS if s["library"] == "autogen-tracing"]
    run = ingest([FIXTURES / stack["file"]])
    assert run.collect() == []
    (skipped,) = run.report.skipped
    assert skipped.reason == stack["skipped"] == "no_message_content"
    assert "AutoGen's own tracing" in skipped.detail
    assert "openinference-instrumentation-autogen-agentchat" in skipped.detail
    assert "CAPTURE_MESSAGE_CONTENT" not in skipped.detail
