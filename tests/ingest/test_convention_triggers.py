"""Convention triggers: detection gated on a span's markers finds exactly what asking every
convention finds, and a convention that declares no triggers is still asked on every span."""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import ClassVar

import pytest
from hypothesis import given
from hypothesis import strategies as st

from agent_eval.errors import InputError
from agent_eval.ingest._accounting import IngestReport
from agent_eval.ingest._assemble import Assembler
from agent_eval.ingest._extraction import SpanExtraction
from agent_eval.ingest._pipeline import detect_container, read_items
from agent_eval.ingest._spans import LogRecord, SpanEvent, SpanRecord
from agent_eval.ingest.conventions._base import Convention, conventions, markers_of, span_markers

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otel"
BUILT_IN = sorted((c for _, c in conventions), key=lambda c: c.name)


def spans_in(folder: Path) -> Iterator[SpanRecord]:
    """Every span the containers read from the files under ``folder`` (others are passed over)."""
    for path in sorted(p for p in folder.rglob("*") if p.suffix in (".json", ".jsonl")):
        try:
            items = list(read_items(detect_container(str(path)), str(path)))
        except InputError:
            continue
        yield from (item for item in items if isinstance(item, SpanRecord))


def ungated(span: SpanRecord) -> list[str]:
    """The names of the conventions that detect ``span``, asking every one of them."""
    ordered = sorted((c for _, c in conventions), key=lambda c: c.priority)
    return [c.name for c in ordered if c.detect(span)]


def gated(span: SpanRecord) -> list[str]:
    return [c.name for c in Assembler(IngestReport())._detecting(span)]


def test_every_built_in_convention_declares_triggers() -> None:
    assert all(c.triggers for c in BUILT_IN), [c.name for c in BUILT_IN if not c.triggers]


def test_gated_detection_matches_on_the_fixtures() -> None:
    spans = list(spans_in(FIXTURES))
    assert len(spans) > 50
    assert any(gated(span) for span in spans)
    for span in spans:
        assert gated(span) == ungated(span), span.span_id


def test_gated_detection_matches_on_shared_data(shared_data: Path) -> None:
    spans = list(spans_in(shared_data))
    assert spans
    for span in spans:
        assert gated(span) == ungated(span), span.span_id


KEYS = st.sampled_from(
    [
        "gen_ai.prompt.0.role", "gen_ai.prompt.x", "gen_ai.completion.3.content",
        "gen_ai.operation.name", "gen_ai", "llm.request.functions.0.name", "llm.model_name",
        "llm.input_messages.0.message.role", "llm.request.type", "openinference.span.kind",
        "retrieval.documents.0.document.content", "traceloop.span.kind",
        "traceloop.association.properties.session_id", "ai.operationId", "ai.prompt",
        "ai.prompt.messages", "ai.toolCall.name", "ai.response.text", "pydantic_ai.all_messages",
        "all_messages_events", "tool_arguments", "tool_response", "gcp.vertex.agent.llm_request",
        "gcp.project", "langsmith.span.kind", "langsmith", "http.request.method", "db.system",
    ]
)  # fmt: skip
EVENTS = st.sampled_from(["gen_ai.user.message", "gen_ai", "exception", "log"])
SCOPES = st.sampled_from(["", "pydantic-ai", "openinference.instrumentation.openai"])


@given(st.sets(KEYS, max_size=6), st.lists(EVENTS, max_size=2), SCOPES)
def test_a_convention_that_detects_a_span_is_triggered_by_it(
    keys: set[str], events: list[str], scope: str
) -> None:
    span = SpanRecord(
        trace_id="1" * 32,
        span_id="2" * 16,
        attributes=dict.fromkeys(keys, "x"),
        events=tuple(SpanEvent(name) for name in events),
        scope_name=scope,
    )
    for convention in BUILT_IN:
        if convention.detect(span):
            assert not span_markers(span).isdisjoint(convention.triggers), convention.name
    assert gated(span) == ungated(span)


class Counting(Convention):
    """A third-party convention: counts the spans it is asked about, detects none."""

    name: ClassVar[str] = "counting"
    semconv: ClassVar[str] = "test"

    def __init__(self) -> None:
        self.asked = 0

    def detect(self, span: SpanRecord) -> bool:
        self.asked += 1
        return False

    def extract(self, span: SpanRecord, logs: Sequence[LogRecord] = ()) -> SpanExtraction:
        raise AssertionError("never detected")


class Triggered(Counting):
    triggers: ClassVar[frozenset[str]] = markers_of("acme.")


class Malformed(Counting):
    triggers = 3  # type: ignore[assignment]


@pytest.mark.parametrize(
    ("convention", "asked"), [(Counting(), 2), (Triggered(), 1), (Malformed(), 2)]
)
def test_triggers_decide_which_spans_a_convention_is_asked_about(
    convention: Counting, asked: int
) -> None:
    conventions.register(convention.name, convention)
    try:
        assembler = Assembler(IngestReport())
        for attributes in ({"http.route": "/"}, {"acme.prompt": "hi"}):
            span = SpanRecord(trace_id="1" * 32, span_id="2" * 16, attributes=attributes)
            assembler._detecting(span)
    finally:
        conventions.unregister(convention.name)
    assert convention.asked == asked
