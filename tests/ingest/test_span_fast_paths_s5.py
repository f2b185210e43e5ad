"""Session-5 per-span fast paths build exactly what the general code builds (issue 15, s5-span)."""

from __future__ import annotations

from dataclasses import fields, replace
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.errors import InvalidSpanError
from agent_eval.ingest._accounting import FileReport
from agent_eval.ingest._span_entry import (
    _ANY_TRANSPORT_PREFIX,
    TRANSPORT_NAME_PREFIXES,
    TRANSPORT_PREFIXES,
    SpanEntry,
    read_span,
    transport_reason,
)
from agent_eval.ingest._spans import SourceLocation, SpanRecord
from agent_eval.ingest.containers import _otlp_records
from agent_eval.ingest.containers._otlp_records import decode_span
from agent_eval.ingest.containers._otlp_values import BadValue, decode_id
from agent_eval.ingest.conventions import _genai as genai
from agent_eval.ingest.conventions import _history_cache as history_cache
from agent_eval.ingest.conventions._genai import GenAIConvention
from agent_eval.ingest.conventions._openllmetry import (
    _INDEXED_PREFIXES,
    OpenLLMetryConvention,
    _is_indexed,
)

KEYS = st.lists(
    st.sampled_from(
        [
            "gen_ai.operation.name",
            "gen_ai.prompt.0.role",
            "gen_ai.prompt.x",
            "gen_ai.completion.1.content",
            "llm.request.functions.0.name",
            "llm.request.functionsX",
            "traceloop.span.kind",
            "traceloop.association.properties.session_id",
            "http.request.method",
            "url.full",
            "rpc.system",
            "grpc.status",
            "db.system",
            "asgi.event.type",
            "gen_ai",
            "other",
            "",
        ]
    )
    | st.text(max_size=30),
    max_size=8,
)


def _span(**kw: Any) -> SpanRecord:
    return SpanRecord(trace_id="a" * 32, span_id="b" * 16, **kw)


def _reference_transport_reason(span: SpanRecord) -> str | None:
    """transport_reason as it was written before the C-level key scans."""
    for reason, names in TRANSPORT_NAME_PREFIXES.items():
        if span.name.startswith(names):
            return reason
    if not any(key.startswith(_ANY_TRANSPORT_PREFIX) for key in span.attributes):
        return None
    for reason, prefixes in TRANSPORT_PREFIXES.items():
        if any(key.startswith(prefixes) for key in span.attributes):
            return reason
    return None


@settings(max_examples=300, deadline=None)
@given(keys=KEYS, name=st.sampled_from(["POST", "a2a.server.x", "chat", ""]))
def test_key_scans_agree_with_the_generator_forms(keys: list[str], name: str) -> None:
    span = _span(name=name, attributes=dict.fromkeys(keys, "v"))
    assert transport_reason(span) == _reference_transport_reason(span)
    assert GenAIConvention().detect(span) == any(k.startswith("gen_ai.") for k in keys)
    attrs = span.attributes
    expected = (
        "traceloop.span.kind" in attrs
        or "traceloop.association.properties.session_id" in attrs
        or any(_is_indexed(k) for k in keys)
    )
    assert OpenLLMetryConvention().detect(span) == expected
    assert _INDEXED_PREFIXES  # the prefixes the one-pass check looks for


def _reference_str(value: Any) -> str | None:
    return None if value in (None, "") else str(value)


@settings(max_examples=300, deadline=None)
@given(st.one_of(st.none(), st.text(max_size=5), st.integers(), st.floats(), st.booleans()))
def test_str_fast_path_equals_the_general_form(value: Any) -> None:
    assert genai._str(value) == _reference_str(value)


class _Text(str):
    pass


def test_str_of_a_str_subclass_is_a_plain_str() -> None:
    assert genai._str(_Text("x")) == "x"
    assert type(genai._str(_Text("x"))) is str
    assert genai._str(_Text("")) is None


@pytest.mark.parametrize(
    ("attributes", "expected"),
    [
        ({}, None),
        ({"gen_ai.usage.input_tokens": 7}, 7),
        ({"gen_ai.usage.prompt_tokens": 5}, 5),  # the pre-v1.27 name
        ({"gen_ai.usage.input_tokens": 7, "gen_ai.usage.prompt_tokens": 5}, 7),
        # present but null: the old name is not consulted (dict.get's default semantics)
        ({"gen_ai.usage.input_tokens": None, "gen_ai.usage.prompt_tokens": 5}, None),
        ({"gen_ai.usage.input_tokens": "12"}, 12),
        ({"gen_ai.usage.input_tokens": 3.0}, 3),
    ],
)
def test_tokens_fast_path(attributes: dict[str, Any], expected: int | None) -> None:
    span = _span(attributes=attributes)
    assert genai._tokens(span, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens") == (
        expected
    )


@pytest.mark.parametrize("bad", [True, b"1", "many", [1]])
def test_tokens_still_refuse_what_is_not_a_count(bad: Any) -> None:
    span = _span(attributes={"gen_ai.usage.input_tokens": bad})
    with pytest.raises(InvalidSpanError, match=r"gen_ai\.usage\.input_tokens"):
        genai._tokens(span, "gen_ai.usage.input_tokens", "gen_ai.usage.prompt_tokens")


def test_empty_genai_extraction_is_the_one_replace_built() -> None:
    span = _span(attributes={"gen_ai.operation.name": "invoke_agent", "gen_ai.agent.name": "a"})
    extraction = GenAIConvention().extract(span)
    assert extraction.ignored_reason == "no_genai_content"
    assert extraction == replace(extraction, ignored_reason="no_genai_content")
    assert extraction.kind == "agent" and extraction.agent_name == "a"


def test_read_span_builds_the_entry_the_keyword_constructor_builds() -> None:
    names = [f.name for f in fields(SpanEntry)]
    assert names[:15] == [
        "trace_id",
        "span_id",
        "parent_id",
        "name",
        "start",
        "end",
        "seq",
        "file",
        "extraction",
        "shadowed",
        "errors",
        "reason",
        "detail",
        "logs",
        "source",
    ]  # read_span passes these positionally
    file = FileReport(path="f.jsonl")
    span = SpanRecord(
        trace_id="a" * 32,
        span_id="b" * 16,
        parent_span_id="c" * 16,
        name="POST",
        start_time_unix_nano=1,
        end_time_unix_nano=2,
        attributes={"http.request.method": "POST"},
        source=SourceLocation("f.jsonl", 3),
    )
    entry = read_span(span, file, [], 9)
    assert entry == SpanEntry(
        trace_id="a" * 32,
        span_id="b" * 16,
        parent_id="c" * 16,
        name="POST",
        start=1,
        end=2,
        seq=9,
        file=file,
        reason="http_span",
        source=SourceLocation("f.jsonl", 3),
    )


def _otlp_span(trace_id: Any, span_id: Any = "1" * 16, parent: Any = None) -> dict[str, Any]:
    out = {"traceId": trace_id, "spanId": span_id, "name": "s", "kind": 1}
    if parent is not None:
        out["parentSpanId"] = parent
    return out


def _decoded(trace_id: Any, parent: Any = None) -> tuple[str, str | None] | str:
    try:
        record = decode_span(_otlp_span(trace_id, parent=parent), {}, ("", ""), None)
    except BadValue as exc:
        return exc.reason
    return record.trace_id, record.parent_span_id


def _expected(trace_id: Any, parent: Any = None) -> tuple[str, str | None] | str:
    try:
        hex_trace = decode_id(trace_id, 16, "trace_id") or ""
        decode_id("1" * 16, 8, "span_id")
        hex_parent = (
            None
            if parent is None or parent == ""
            else decode_id(parent, 8, "parent_span_id", optional=True)
        )
    except BadValue as exc:
        return exc.reason
    return hex_trace, hex_parent


ID_VALUES = st.one_of(
    st.sampled_from(
        [
            "A" * 32,
            "ab" * 16,
            "0" * 32,
            "0" * 16,
            "Ab" * 8,
            "cd" * 8,
            "q" * 32,
            "q" * 16,
            "AAAAAAAAAAAAAAAAAAAAAA==",  # base64 of 16 bytes
            "AAAAAAAAAAE=",  # base64 of 8 bytes
            "",
        ]
    ),
    st.text(alphabet="0123456789abcdefABCDEF", min_size=15, max_size=33),
    st.integers(),
)


@settings(max_examples=400, deadline=None)
@given(st.lists(st.tuples(ID_VALUES, st.one_of(st.none(), ID_VALUES)), min_size=1, max_size=12))
def test_remembered_ids_decode_as_decode_id_does(pairs: list[tuple[Any, Any]]) -> None:
    """Every span sees the same ids and errors as without the caches, in any order."""
    for trace_id, parent in pairs * 2:  # each id again, now from the caches
        assert _decoded(trace_id, parent) == _expected(trace_id, parent)


def test_a_remembered_parent_id_is_never_taken_for_a_trace_id() -> None:
    parent = "ab" * 8
    assert _decoded("cd" * 16, parent) == ("cd" * 16, parent)
    assert _decoded(parent) == "invalid_trace_id"  # 16 hex digits are no trace id


def test_id_caches_stay_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_otlp_records, "_TRACE_IDS", {})
    monkeypatch.setattr(_otlp_records, "_PARENT_IDS", {})
    monkeypatch.setattr(_otlp_records, "_IDS_MAX", 8)
    for n in range(50):
        assert _decoded(f"{n + 1:032X}", f"{n + 1:016X}") == (f"{n + 1:032x}", f"{n + 1:016x}")
        assert len(_otlp_records._TRACE_IDS) <= 8
        assert len(_otlp_records._PARENT_IDS) <= 8


def test_history_scope_nests_and_restores_the_outer_scope() -> None:
    scope = history_cache._scope
    assert scope.get() is None
    with history_cache.history_scope("outer"):
        assert scope.get() == "outer"
        with history_cache.history_scope("inner"):
            assert scope.get() == "inner"
        assert scope.get() == "outer"
        with pytest.raises(RuntimeError), history_cache.history_scope("failing"):
            raise RuntimeError
        assert scope.get() == "outer"
    assert scope.get() is None
