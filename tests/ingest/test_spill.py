"""Spilling idle traces to disk keeps memory bounded and the output unchanged.

(The output is compared with the pre-spill golden output on every fixture in
``test_ingest_golden.py``; these tests check the mechanism itself.)
"""

from __future__ import annotations

import tempfile
from collections.abc import Iterable
from pathlib import Path

import pytest

from agent_eval.ingest import _assemble as assemble
from agent_eval.ingest import ingest
from agent_eval.ingest._spill import SpillStore, StreamLimits

from .stream_traffic import write_traffic


@pytest.fixture
def traffic(tmp_path: Path) -> list[Path]:
    return write_traffic(tmp_path)


def _spill_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("agent-eval-spill-*")}


@pytest.fixture
def own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The spill directory goes under this test's own TMPDIR (others run in parallel)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_spilled_run_gives_the_in_memory_run(
    traffic: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = [t.model_dump_json() for t in ingest(traffic)]
    parts: list[str] = []
    original = SpillStore.add_parts

    def counting(self: SpillStore, batch: Iterable[tuple[str, list[str], object]]) -> None:
        batch = list(batch)
        parts.extend(trace_id for trace_id, _, _ in batch)
        original(self, batch)

    monkeypatch.setattr(SpillStore, "add_parts", counting)
    monkeypatch.setattr(assemble, "STREAM_LIMITS", StreamLimits(max_spans_in_memory=2, spill_to=0))
    run = ingest(traffic)
    assert [t.model_dump_json() for t in run] == expected
    assert run.report.balanced
    assert len(set(parts)) > 30  # most traces went to disk
    assert len(parts) > len(set(parts))  # traces spilled in parts, read back whole


def test_memory_holds_at_most_the_budget(traffic: list[Path]) -> None:
    from agent_eval.ingest._accounting import FileReport, IngestReport
    from agent_eval.ingest._spans import LogRecord, SpanRecord
    from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer

    report = IngestReport()
    file = FileReport(path=str(traffic[0]))
    report.files.append(file)
    assembler = assemble.Assembler(report, StreamLimits(max_spans_in_memory=8, spill_to=0.5))
    most = 0
    for item in OtlpJsonContainer().read(str(traffic[0])):
        if isinstance(item, SpanRecord):
            file.spans_read += 1
            assembler.add_span(item, file)
            most = max(most, assembler._in_memory)
        elif isinstance(item, LogRecord):
            file.logs_read += 1
            assembler.add_log(item, file)
    assert most <= 8
    assert len(list(assembler.finish())) == 16
    assert report.balanced


def test_the_spill_directory_is_removed_when_done_or_abandoned(
    traffic: list[Path], monkeypatch: pytest.MonkeyPatch, own_tmpdir: Path
) -> None:
    before = _spill_dirs()
    assert before == set()
    monkeypatch.setattr(assemble, "STREAM_LIMITS", StreamLimits.tightest())
    assert len(ingest(traffic).collect()) == 16
    assert _spill_dirs() == before
    run = iter(ingest(traffic))
    next(run)
    assert len(_spill_dirs() - before) == 1  # in use while conversations are still coming
    run.close()  # type: ignore[attr-defined]
    assert _spill_dirs() == before


def test_a_spilled_part_reads_back_equal_with_shared_messages_shared() -> None:
    """The compact pickled form rebuilds every field (and keeps shared objects shared)."""
    from dataclasses import fields

    from agent_eval._trace import (
        AssistantMessage,
        RetrievedDocument,
        SystemMessage,
        ToolCall,
        UserMessage,
    )
    from agent_eval.ingest._extraction import SpanExtraction, ToolExecution
    from agent_eval.ingest._spans import SourceLocation

    system = SystemMessage(content="be brief")
    user = UserMessage(content="rebook me")
    call = AssistantMessage(
        tool_calls=(ToolCall(id="c1", name="lookup", arguments={"a": [1, 2.5, None]}),),
        agent_name="support",
    )
    values = {
        "convention": "genai",
        "kind": "llm",
        "input_messages": (system, user),
        "output_messages": (call,),
        "tool": ToolExecution(name="lookup", call_id="c1", raw_arguments="{bad", result="ok"),
        "agent_name": "support",
        "conversation_id": "conv-1",
        "model": "gpt-4o",
        "input_tokens": 12,
        "output_tokens": 3,
        "retrieval_query": "paris",
        "documents": (RetrievedDocument(content="doc", id="d1", score=0.5),),
        "ignored_reason": "why",
        "notes": ("a note",),
        "completion": "Do you ship to Mars?",
        "turn": ("Is the sky green?", "Empty Response"),
        "retrieved_nothing": True,
        "text_hint": "what the spans are",
    }
    assert set(values) == {f.name for f in fields(SpanExtraction)}  # every field non-default
    first = SpanExtraction(**values)  # type: ignore[arg-type]
    second = SpanExtraction(convention="genai", kind="llm", input_messages=(system, user, call))
    part: tuple[list[tuple[SpanExtraction, SourceLocation]], dict[str, object]] = (
        [(first, SourceLocation("a.jsonl", 3)), (second, SourceLocation("a.jsonl"))],
        {},
    )
    store = SpillStore()
    try:
        store.add_parts([("t1", ["s1", "s2"], part)])
        store.put_joined("t1", part)
        for back in (store.parts("t1")[0], store.joined("t1")):
            assert back == part
            (one, _), (two, _) = back[0]
            assert one.input_messages[0] is two.input_messages[0]  # stored once per row
            assert one.output_messages[0] is two.input_messages[2]
            assert one.input_messages[1].model_fields_set == {"content"}
        assert store.has_span("t1", "s2") and not store.has_span("t1", "s3")
    finally:
        store.close()
