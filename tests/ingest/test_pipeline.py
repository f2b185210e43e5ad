"""The ingest pipeline: path expansion, container detection, pass-through, accounting, errors."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.errors import DecodeError, InputError, UnknownFormatError, UnknownPluginError
from agent_eval.ingest import Container, ContainerItem, containers, detect_container, ingest
from agent_eval.ingest._paths import expand_paths
from agent_eval.testing._otlp import export_request, log_record, span

TRACE_1 = "0af7651916cd43dd8448eb211c80319c"
TRACE_2 = "1bf7651916cd43dd8448eb211c80319d"


def chat_span(
    trace_id: str,
    span_id: str,
    history: list[tuple[str, str]],
    reply: str,
    *,
    conversation: str | None = None,
    start: int = 1,
    parent: str | None = None,
) -> dict[str, Any]:
    """A GenAI v1.37 chat span: the replayed history in, one assistant text out."""
    parts = [{"role": r, "parts": [{"type": "text", "content": c}]} for r, c in history]
    out = [{"role": "assistant", "parts": [{"type": "text", "content": reply}],
            "finish_reason": "stop"}]  # fmt: skip
    attrs = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": "gpt-test",
        "gen_ai.input.messages": json.dumps(parts),
        "gen_ai.output.messages": json.dumps(out),
    }
    if conversation:
        attrs["gen_ai.conversation.id"] = conversation
    return span(trace_id, span_id, "chat gpt-test", kind=3, start=start, attributes=attrs,
                parent_span_id=parent)  # fmt: skip


def write_json(path: Path, request: dict[str, Any]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(orjson.dumps(request))
    return path


def two_turns(tmp_path: Path) -> Path:
    spans = [
        chat_span(TRACE_1, "a000000000000001", [("user", "hi")], "hello", start=1),
        chat_span(TRACE_1, "a000000000000002",
                  [("user", "hi"), ("assistant", "hello"), ("user", "bye")], "ciao", start=2),
    ]  # fmt: skip
    return write_json(tmp_path / "conv.json", export_request(spans))


def test_ingest_a_file_yields_the_deduplicated_conversation(tmp_path: Path) -> None:
    run = ingest(two_turns(tmp_path))
    (trace,) = run
    assert [(type(m).__name__, m.content) for m in trace.messages] == [
        ("UserMessage", "hi"),
        ("AssistantMessage", "hello"),
        ("UserMessage", "bye"),
        ("AssistantMessage", "ciao"),
    ]
    assert trace.source.container == "otlp-json"
    report = run.report
    assert (report.spans_read, report.spans_used, report.conversations) == (2, 2, 1)
    assert report.files[0].container == "otlp-json" and report.files[0].conventions == {"genai"}
    assert report.balanced


def test_conversation_spread_over_files_and_traces_is_one_trace(tmp_path: Path) -> None:
    first = chat_span(TRACE_1, "a000000000000001", [("user", "hi")], "hello", conversation="c-1")
    second = chat_span(TRACE_2, "b000000000000001",
                       [("user", "hi"), ("assistant", "hello"), ("user", "more")], "sure",
                       conversation="c-1", start=5)  # fmt: skip
    write_json(tmp_path / "d" / "one.json", export_request([first]))
    write_json(tmp_path / "d" / "two.json", export_request([second]))
    (trace,) = ingest([tmp_path / "d"])
    assert trace.conversation_id == "c-1" and set(trace.trace_ids) == {TRACE_1, TRACE_2}
    assert [m.content for m in trace.messages] == ["hi", "hello", "more", "sure"]


def test_directories_recurse_sorted_and_skip_non_inputs(tmp_path: Path) -> None:
    for name in ("b/x.json", "a/y.json", "a/.hidden.json", ".git/z.json", "README.md",
                 "notes.txt", "LICENSE", "__pycache__/m.json", "c.jsonl"):  # fmt: skip
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text("{}")
    found = [Path(i.path).relative_to(tmp_path).as_posix() for i in expand_paths([tmp_path])]
    assert found == ["a/y.json", "b/x.json", "c.jsonl"]
    explicit = expand_paths([tmp_path / "README.md", str(tmp_path / "*" / "*.json")])
    assert [Path(i.path).name for i in explicit] == ["README.md", "y.json", "x.json"]
    missing = expand_paths([tmp_path / "nope.json", str(tmp_path / "*.nothing")])
    assert [i.error for i in missing] == [
        "no such file or directory",
        "no input file matches this pattern",
    ]


def test_unrecognised_file_is_a_per_file_error_and_the_rest_is_used(tmp_path: Path) -> None:
    good = two_turns(tmp_path)
    (tmp_path / "mystery.dat").write_bytes(b"\x00\x01\x02 not a trace")
    run = ingest([good, tmp_path / "mystery.dat", tmp_path / "missing.json"])
    assert len(list(run)) == 1
    errors = {Path(f.path).name: f.error for f in run.report.files}
    assert errors["conv.json"] is None
    assert "no container recognises" in (errors["mystery.dat"] or "")
    assert "--format NAME" in (errors["mystery.dat"] or "")
    assert "no such file" in (errors["missing.json"] or "")


def test_every_input_failing_raises_listing_the_containers(tmp_path: Path) -> None:
    for name in ("a.dat", "b.dat"):
        (tmp_path / name).write_bytes(b"plain text, not a trace")
    with pytest.raises(UnknownFormatError) as info:
        list(ingest([tmp_path / "a.dat", tmp_path / "b.dat"]))
    assert "a.dat" in str(info.value) and "b.dat" in str(info.value)
    assert "otlp-json" in str(info.value) and "agent-trace-jsonl" in str(info.value)
    (tmp_path / "trunc.json").write_bytes(b'{"resourceSpans": [{"scopeSpans": [')
    with pytest.raises(DecodeError, match=r"trunc\.json"):
        list(ingest(tmp_path / "trunc.json"))
    with pytest.raises(InputError, match="no such file"):
        list(ingest([tmp_path / "absent.json"]))


def test_forced_format(tmp_path: Path) -> None:
    path = tmp_path / "spans.data"
    request = export_request([chat_span(TRACE_1, "a" * 16, [("user", "q")], "a")])
    path.write_bytes(b"\n\n" + orjson.dumps(request, option=orjson.OPT_INDENT_2))
    assert len(list(ingest(path, format="otlp-json"))) == 1
    with pytest.raises(UnknownPluginError, match="otlp-json"):
        ingest(path, format="no-such-format")
    with pytest.raises(DecodeError):
        list(ingest(path, format="agent-trace-jsonl"))


def test_agent_trace_jsonl_round_trip_passes_through_with_accounting(tmp_path: Path) -> None:
    traces = list(ingest(two_turns(tmp_path)))
    out = tmp_path / "out" / "traces.jsonl"
    out.parent.mkdir()
    out.write_text("".join(t.model_dump_json() + "\n" for t in traces) + "{}\n")
    run = ingest(out)
    assert list(run) == traces
    assert run.report.files[0].container == "agent-trace-jsonl"
    assert run.report.conversations == 1 and run.report.files[0].conversations == 1
    assert dict(run.report.records_ignored) == {"invalid_agent_trace": 1}


def test_skipped_spans_and_lines_are_counted_and_balanced(tmp_path: Path) -> None:
    good = chat_span(TRACE_1, "a000000000000001", [("user", "hi")], "hello")
    bad = dict(good, spanId="nothex")
    http = span(TRACE_1, "a000000000000003", "GET /", kind=2, parent_span_id="a000000000000001")
    lines = [orjson.dumps(export_request([good, bad, http])), b"{truncated", b""]
    path = tmp_path / "otel.jsonl"
    path.write_bytes(b"\n".join(lines))
    run = ingest(path)
    assert len(list(run)) == 1
    report = run.report
    assert report.spans_read == 3 and report.spans_used == 1
    assert report.spans_ignored["invalid_span_id"] == 1
    assert dict(report.records_ignored) == {"invalid_json": 1}
    assert report.balanced
    assert {s.reason for s in report.skipped} == {"invalid_span_id", "invalid_json"}
    assert any(str(s.source) == f"{path}:2" for s in report.skipped)


def test_parent_cycles_and_orphans_do_not_crash_and_are_accounted(tmp_path: Path) -> None:
    spans = [
        chat_span(TRACE_1, "c000000000000001", [("user", "loop")], "x", parent="c000000000000002"),
        chat_span(TRACE_1, "c000000000000002", [("user", "loop")], "y", parent="c000000000000001",
                  start=2),
        chat_span(TRACE_1, "c000000000000003", [("user", "orphan")], "z",
                  parent="ffffffffffffffff", start=3),
        span(TRACE_1, "c000000000000004", "self", parent_span_id="c000000000000004"),
    ]  # fmt: skip
    run = ingest(write_json(tmp_path / "weird.json", export_request(spans)))
    traces = list(run)
    assert run.report.spans_read == 4 and run.report.balanced
    texts = [m.content for t in traces for m in t.messages]
    assert "orphan" in texts and "z" in texts


def test_log_records_join_their_spans(tmp_path: Path) -> None:
    chat_attrs = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"}
    ids = {"trace_id": TRACE_1, "span_id": "d000000000000001"}
    choice = {
        "index": 0,
        "finish_reason": "stop",
        "message": {"role": "assistant", "content": "yo"},
    }
    request = export_request(
        [span(TRACE_1, "d000000000000001", "chat m", kind=3, attributes=chat_attrs)],
        [
            log_record("gen_ai.user.message", {"content": "hey"}, time=5, **ids),
            log_record("gen_ai.choice", choice, time=6, **ids),
        ],
    )
    run = ingest(write_json(tmp_path / "events.json", request))
    (trace,) = run
    assert [(type(m), m.content) for m in trace.messages] == [
        (UserMessage, "hey"),
        (AssistantMessage, "yo"),
    ]
    assert (run.report.logs_read, run.report.logs_used) == (2, 2) and run.report.balanced


class _Everything(Container):
    name: ClassVar[str] = "test-everything"
    description: ClassVar[str] = "matches every file"
    priority: ClassVar[int] = 1

    def sniff(self, path: str, head: bytes) -> bool:
        return True

    def read(self, path: str) -> Iterator[ContainerItem]:
        yield AgentTrace(conversation_id=Path(path).name)


class _Broken(_Everything):
    name: ClassVar[str] = "test-broken"
    priority: ClassVar[int] = 0

    def sniff(self, path: str, head: bytes) -> bool:
        raise RuntimeError("sniff bug")


def test_detection_order_is_priority_then_name_and_sniff_bugs_are_ignored(tmp_path: Path) -> None:
    path = two_turns(tmp_path)
    assert detect_container(str(path)).name == "otlp-json"
    containers.register("test-everything", _Everything)
    containers.register("test-broken", _Broken)
    try:
        assert detect_container(str(path)).name == "test-everything"
        (trace,) = ingest(path)
        assert trace.conversation_id == "conv.json"
    finally:
        containers.unregister("test-everything")
        containers.unregister("test-broken")


def test_run_iterates_once(tmp_path: Path) -> None:
    run = ingest(two_turns(tmp_path))
    assert len(run.collect()) == 1
    with pytest.raises(RuntimeError, match="once"):
        list(run)


def test_ingest_runs_young_collections_only_and_restores_the_callers_thresholds() -> None:
    import gc

    from agent_eval.ingest import _pipeline as pipeline

    seen: list[tuple[int, int, int]] = []

    def producer(report: object) -> Iterator[AgentTrace]:
        seen.append(gc.get_threshold())
        yield from ingest(
            Path(__file__).parents[2] / "fixtures/otel/openai-v2-latest-span.otlp.json"
        )
        seen.append(gc.get_threshold())

    saved = gc.get_threshold()
    run = pipeline.IngestRun(producer)  # type: ignore[arg-type]
    for _ in run:
        assert gc.get_threshold() == saved  # the caller's code runs with its own thresholds
    assert seen == [pipeline.INGEST_GC_THRESHOLDS] * 2
    assert gc.get_threshold() == saved
