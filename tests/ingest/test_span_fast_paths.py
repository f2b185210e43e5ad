"""The per-span fast paths build exactly what the plain code builds (issue 15, s4-decode)."""

from __future__ import annotations

from dataclasses import FrozenInstanceError, astuple, fields

import pytest

from agent_eval.ingest._accounting import FileReport
from agent_eval.ingest._span_entry import read_span, span_errors
from agent_eval.ingest._spans import SourceLocation, SpanEvent, SpanRecord, new_span_record
from agent_eval.ingest.conventions import _base as base
from agent_eval.ingest.conventions._base import span_markers
from agent_eval.ingest.conventions._genai import GenAIConvention


def _every_field_distinct() -> dict[str, object]:
    return {
        "trace_id": "a" * 32,
        "span_id": "b" * 16,
        "parent_span_id": "c" * 16,
        "name": "chat gpt-4o",
        "kind": "CLIENT",
        "start_time_unix_nano": 1,
        "end_time_unix_nano": 2,
        "attributes": {"gen_ai.operation.name": "chat"},
        "events": (SpanEvent("exception", 3, {"exception.type": "E"}),),
        "status_code": "ERROR",
        "status_message": "boom",
        "resource": {"service.name": "svc"},
        "scope_name": "scope",
        "scope_version": "1.0",
        "source": SourceLocation("f.jsonl", 7),
    }


def test_new_span_record_sets_every_field_in_declaration_order() -> None:
    values = _every_field_distinct()
    assert list(values) == [f.name for f in fields(SpanRecord)]
    fast = new_span_record(*values.values())  # type: ignore[arg-type]
    plain = SpanRecord(**values)  # type: ignore[arg-type]
    assert fast == plain
    assert astuple(fast) == astuple(plain)
    assert hash(fast.source) == hash(plain.source)
    with pytest.raises(FrozenInstanceError):
        fast.name = "other"  # type: ignore[misc]


def test_span_markers_are_the_same_from_the_key_cache() -> None:
    span = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        attributes={"gen_ai.usage.input_tokens": 1, "undotted": 2, "http.method": "GET"},
        events=(SpanEvent("gen_ai.user.message"),),
        scope_name="openai.v2",
    )
    expected = {"gen_ai", "undotted", "http", "openai.v2"}
    assert span_markers(span) == expected  # first sight: keys learnt
    assert span_markers(span) == expected  # from the cache


def test_span_markers_cache_stays_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(base, "_MARKERS", {})
    monkeypatch.setattr(base, "_MARKERS_MAX", 10)
    for i in range(50):
        span = SpanRecord(trace_id="a" * 32, span_id="b" * 16, attributes={f"k{i}.x": 1})
        assert span_markers(span) == {f"k{i}", ""}
        assert len(base._MARKERS) <= 11
    long_key = "x" * 1000 + ".y"
    span = SpanRecord(trace_id="a" * 32, span_id="b" * 16, attributes={long_key: 1})
    assert span_markers(span) == {"x" * 1000, ""}
    assert long_key not in base._MARKERS


def test_span_errors_fast_path_keeps_status_and_exception_errors() -> None:
    plain = SpanRecord(trace_id="a" * 32, span_id="b" * 16)
    assert span_errors(plain) == ()
    failed = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        status_code="ERROR",
        status_message="boom",
        attributes={"error.type": "Timeout"},
    )
    (error,) = span_errors(failed)
    assert (error.error_type, error.message) == ("Timeout", "boom")


def test_genai_span_without_events_reads_the_same_as_with_an_unrelated_event() -> None:
    """Skipping the event readers when a span has no events or logs changes nothing."""
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.input.messages": '[{"role": "user", "parts": [{"type": "text", "content": "hi"}]}]',
        "gen_ai.output.messages": '[{"role": "assistant", "parts": [{"type": "text", '
        '"content": "hello"}]}]',
    }
    bare = SpanRecord(trace_id="a" * 32, span_id="b" * 16, attributes=attributes)
    with_event = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        attributes=attributes,
        events=(SpanEvent("something.else"),),
    )
    genai = GenAIConvention()
    assert genai.extract(bare) == genai.extract(with_event)
    entry = read_span(bare, FileReport("f"), [genai], 0)
    assert entry.extraction is not None
    assert [m.content for m in entry.extraction.input_messages] == ["hi"]
    assert [m.content for m in entry.extraction.output_messages] == ["hello"]
    assert entry.shadowed == ()
    empty_tool = SpanRecord(
        trace_id="a" * 32,
        span_id="c" * 16,
        attributes={"gen_ai.operation.name": "execute_tool", "gen_ai.tool.name": "lookup"},
    )
    tool = genai.extract(empty_tool).tool
    assert tool is not None
    assert (tool.name, tool.arguments, tool.result) == ("lookup", None, None)
