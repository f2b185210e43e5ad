"""Malformed input ends in a typed error or a per-item skip with the right values (issue 12).

One test per class found by fuzzing: deep nesting, integers over 4,300 digits, non-numeric
usage fields, out-of-range times, lone surrogates, parent cycles, one bad file among good ones,
and the safety nets (``internal_error``) at file and record boundaries.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest

from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall
from agent_eval.errors import DecodeError, InputError
from agent_eval.ingest import ingest
from agent_eval.ingest._safe_text import MAX_NESTING, brief, clean, loads
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer
from agent_eval.ingest.containers._readable_span import ReadableSpanContainer
from agent_eval.ingest.containers._tau2_bench import Tau2BenchContainer
from agent_eval.ingest.containers._trace_jsonl import TraceJsonlContainer
from agent_eval.testing._otlp import export_request, span

from .test_assemble import Run, llm, say, user

FIXTURES = Path(__file__).resolve().parents[2] / "fixtures" / "otel"
T = "5b8aa5a2d2c872e8321cf37308d69df2"
CHAT = {"gen_ai.operation.name": "chat", "gen_ai.system": "openai"}


def otlp_line(span_id: str, attributes: dict[str, Any]) -> bytes:
    request = export_request(
        [span(trace_id=T, span_id=span_id, name="chat", attributes=attributes)]
    )
    return orjson.dumps(request) + b"\n"


def nested_any_value(depth: int) -> dict[str, Any]:
    value: dict[str, Any] = {"stringValue": "x"}
    for _ in range(depth):
        value = {"arrayValue": {"values": [value]}}
    return value


# --- safe decoding at the edge ---------------------------------------------------------------


def test_loads_bounds_nesting_and_replaces_lone_surrogates() -> None:
    with pytest.raises(orjson.JSONDecodeError, match="deeper than"):
        loads(b"[" * (MAX_NESTING + 1) + b"]" * (MAX_NESTING + 1))
    with pytest.raises(orjson.JSONDecodeError):  # orjson's own limit: still a JSONDecodeError
        loads(b"[" * 5000 + b"]" * 5000)
    assert loads(b'{"a": "\\ud83d ok", "\\udc00": 1}') == {"a": "\ufffd ok", "\ufffd": 1}
    with pytest.raises(orjson.JSONDecodeError):  # other invalid UTF-8 stays an error
        loads(b'{"a": "\xff"}')


def test_the_bracket_count_shortcut_keeps_the_nesting_bound_exact() -> None:
    # a document with at most MAX_NESTING brackets skips the walk; one with more is walked
    at_limit = "[" * MAX_NESTING + "]" * MAX_NESTING
    assert loads(at_limit) == loads(at_limit.encode())
    wide = "[" + ", ".join(["[1]"] * 500) + "]"  # 501 brackets, 2 levels: walked, fine
    assert len(loads(wide)) == 500
    in_strings = '["' + "[" * 300 + '"]'  # brackets in strings only overestimate
    assert loads(in_strings) == ["[" * 300]
    for deep in ("[" * 101 + "]" * 101, '{"a":' * 101 + "1" + "}" * 101):
        with pytest.raises(orjson.JSONDecodeError, match="deeper than"):
            loads(deep)


def test_brief_never_recurses_or_converts_huge_integers() -> None:
    deep: list[Any] = []
    for _ in range(10_000):
        deep = [deep]
    assert brief(deep) == "[" * 77 + "..."
    assert brief(10**5000) == "<integer of about 5000 digits>"
    assert brief({"k": ["]", 1]}) == "{'k': [']', 1]}"


def test_clean_replaces_in_keys_and_values_and_bounds_depth() -> None:
    assert clean({"\ud83d": ["a\udc00"]}) == {"\ufffd": ["a\ufffd"]}
    with pytest.raises(ValueError, match="deeper than 3"):
        clean([[[["x"]]]], max_depth=3)


# --- deep nesting ----------------------------------------------------------------------------


def test_deep_json_line_is_one_skipped_line_the_rest_used(tmp_path: Path) -> None:
    good = otlp_line("1111111111111111", {**CHAT, "gen_ai.prompt": "hi"})
    deep = b'{"resourceSpans": ' + b"[" * 2000 + b"]" * 2000 + b"}\n"
    path = tmp_path / "c.otlp.jsonl"
    path.write_bytes(good + deep)
    items = list(OtlpJsonContainer().read(str(path)))
    assert [type(i) for i in items] == [SpanRecord, Skipped]
    assert isinstance(items[1], Skipped)
    assert (items[1].reason, items[1].source and items[1].source.line) == ("invalid_json", 2)


def test_deep_attribute_value_skips_the_span_naming_it(tmp_path: Path) -> None:
    request = export_request([span(trace_id=T, span_id="2222222222222222", name="chat")])
    attrs = request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"]
    attrs.append({"key": "deep", "value": nested_any_value(17)})  # 51 JSON levels: decodes
    path = tmp_path / "d.otlp.json"
    path.write_bytes(orjson.dumps(request))
    (item,) = OtlpJsonContainer().read(str(path))
    assert isinstance(item, Skipped)
    assert item.reason == "invalid_attribute"
    assert "attribute 'deep'" in item.detail and "deeper than 16" in item.detail
    assert (item.trace_id, item.span_id) == (T, "2222222222222222")


@pytest.mark.parametrize(
    ("fmt", "document"),
    [
        ("tempo", b'{"batches": ' + b"[" * 900 + b"]" * 900 + b"}"),
        ("phoenix", b'{"context": ' + b"[" * 900 + b"]" * 900 + b"}"),
        ("jaeger", b'{"data": ' + b"[" * 900 + b"]" * 900 + b"}"),
        ("openai-messages", b'{"messages": ' + b"[" * 900 + b"]" * 900 + b"}"),
        ("openai-cassette", b"interactions: " + b"[" * 900 + b"]" * 900 + b"\n"),
    ],
)
def test_deep_documents_are_typed_decode_errors(tmp_path: Path, fmt: str, document: bytes) -> None:
    path = tmp_path / "deep.json"
    path.write_bytes(document)
    with pytest.raises(DecodeError) as caught:
        ingest([str(path)], format=fmt).collect()
    assert str(path) in str(caught.value)


def test_a_trace_ingest_wrote_reads_back_whatever_its_nesting(tmp_path: Path) -> None:
    # regression: ingest wrote traces nested about 250 deep that it could not read back
    arguments: Any = "x"
    for _ in range(150):
        arguments = [arguments]
    trace = AgentTrace(
        conversation_id="c1",
        messages=[
            AssistantMessage(
                content="", tool_calls=[ToolCall(id="1", name="f", arguments=arguments)]
            )
        ],
    )
    path = tmp_path / "t.jsonl"
    path.write_text(trace.model_dump_json() + "\n", encoding="utf-8")
    assert list(TraceJsonlContainer().read(str(path))) == [trace]


# --- numbers ---------------------------------------------------------------------------------


def test_integers_over_4300_digits_cost_at_most_their_item(tmp_path: Path) -> None:
    huge = "9" * 5000
    path = tmp_path / "int.otlp.jsonl"
    path.write_bytes(otlp_line("3333333333333333", {**CHAT}).replace(b'"chat"', b'"chat"', 1))
    request = export_request([span(trace_id=T, span_id="3333333333333333", name="chat")])
    request["resourceSpans"][0]["scopeSpans"][0]["spans"][0]["attributes"] = [
        {"key": "n", "value": {"intValue": huge}}
    ]
    path.write_bytes(orjson.dumps(request))
    (item,) = OtlpJsonContainer().read(str(path))
    assert isinstance(item, Skipped) and item.reason == "invalid_attribute"
    assert "is not a 64-bit integer" in item.detail and "5000 digits" not in item.detail
    messages = tmp_path / "m.json"  # read as infinite (issue 32): an unused field costs nothing
    messages.write_text('{"messages": [{"role": "user", "content": "hi", "n": ' + huge + "}]}")
    (trace,) = ingest([str(messages)], format="openai-messages").collect()
    assert [m.content for m in trace.messages] == ["hi"]


def test_tau2_usage_that_is_not_a_count_is_not_counted(tmp_path: Path) -> None:
    def assistant(usage: dict[str, Any]) -> dict[str, Any]:
        return {"role": "assistant", "content": "ok", "usage": usage}

    simulation = {
        "id": "s1",
        "task_id": "7",
        "reward_info": {"reward": 1.0},
        "messages": [
            {"role": "user", "content": "book it"},
            assistant({"prompt_tokens": 10, "completion_tokens": 2}),
            assistant({"prompt_tokens": "n/a", "completion_tokens": 3}),
            assistant({"prompt_tokens": 5, "completion_tokens": -1}),
        ],
    }
    document = {
        "info": {"agent_info": {"llm": "m"}},
        "tasks": [{"id": "7", "user_scenario": {"instructions": "Book"}}],
        "simulations": [simulation],
    }
    path = tmp_path / "results.json"
    text = json.dumps(document).replace('"n/a"', "Infinity", 1)  # tau2's JSON may hold it
    path.write_text(text)
    (trace,) = Tau2BenchContainer().read(str(path))
    assert isinstance(trace, AgentTrace)
    (usage,) = trace.usage
    assert (usage.input_tokens, usage.output_tokens, usage.calls) == (15, 5, 3)


def test_an_end_time_of_1e308_is_no_time(tmp_path: Path) -> None:
    dump = {
        "name": "chat",
        "kind": 2,
        "spanContext": {"traceId": T, "spanId": "4444444444444444"},
        "startTime": [1_700_000_000, 5],
        "endTime": 1e308,
        "attributes": {},
    }
    path = tmp_path / "spans.json"
    path.write_text(json.dumps([dump, dump | {"endTime": [1e308, 0]}]))
    first, second = ReadableSpanContainer().read(str(path))
    assert isinstance(first, SpanRecord) and isinstance(second, SpanRecord)
    start = 1_700_000_000_000_000_005
    assert (first.start_time_unix_nano, first.end_time_unix_nano) == (start, start)
    assert second.end_time_unix_nano == start


# --- lone surrogates -------------------------------------------------------------------------


def test_a_lone_surrogate_is_replaced_counted_and_the_file_kept(tmp_path: Path) -> None:
    # regression: "\ud83d" (a truncated emoji) rejected the whole OTLP/JSON file
    source = (FIXTURES / "openinference-openai.otlp.json").read_text(encoding="utf-8")
    assert "What is the weather" in source or "weather" in source
    text = source.replace('"stringValue": "openai"', '"stringValue": "openai \\ud83d"', 1)
    path = tmp_path / "s.otlp.json"
    path.write_text(text, encoding="utf-8")
    run = ingest([str(path)])
    traces = run.collect()
    expected = ingest([str(FIXTURES / "openinference-openai.otlp.json")]).collect()
    assert len(traces) == len(expected) > 0
    assert run.report.text_replaced == 1 and run.report.files[0].text_replaced == 1
    for trace in traces:
        trace.model_dump_json().encode("utf-8")  # writable as UTF-8


def test_a_lone_surrogate_in_a_chat_log_is_replaced(tmp_path: Path) -> None:
    path = tmp_path / "m.json"
    path.write_text('{"messages": [{"role": "user", "content": "hi \\ud83d"}]}')
    run = ingest([str(path)], format="openai-messages")
    (trace,) = run.collect()
    assert trace.messages[0].content == "hi \ufffd"
    assert run.report.text_replaced == 1


# --- parent cycles ---------------------------------------------------------------------------


def test_two_llm_spans_parented_on_each_other_keep_the_conversation() -> None:
    # regression: A->B, B->A dropped both as duplicate_of_child_llm_span
    a = llm(1, [user("q")], [say("a")], start=1, parent=2)
    b = llm(2, [user("q"), say("a"), user("q2")], [say("a2")], start=2, parent=1)
    run = Run().spans(a, b)
    [trace] = run.finish()
    assert [m.content for m in trace.messages] == ["q", "a", "q2", "a2"]
    assert "duplicate_of_child_llm_span" not in run.report.spans_ignored
    assert run.report.spans_used == 2
    assert any("parent cycle" in n for n in trace.notes)


# --- one bad item never costs the others -----------------------------------------------------


def test_one_undecodable_file_among_good_ones_costs_only_itself(tmp_path: Path) -> None:
    good = FIXTURES / "openinference-openai.otlp.json"
    (tmp_path / "a.otlp.json").write_bytes(good.read_bytes())
    (tmp_path / "b.otlp.json").write_bytes(b'{"resourceSpans": ' + b"[" * 3000 + b"]" * 3000 + b"}")
    run = ingest([str(tmp_path)])
    traces = run.collect()
    assert len(traces) == len(ingest([str(good)]).collect()) > 0
    bad = run.report.files[1]
    assert bad.error is not None and "b.otlp.json" in bad.error
    assert "depth limit exceeded" in bad.error  # orjson's words for nesting over 1,024
    assert run.report.internal_errors == 0


def test_an_unexpected_exception_in_a_file_is_a_counted_internal_error(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, caplog: pytest.LogCaptureFixture
) -> None:
    original = OtlpJsonContainer.read

    def read(self: OtlpJsonContainer, path: str) -> Any:
        if "broken" in path:
            raise KeyError("a bug")
        return original(self, path)

    monkeypatch.setattr(OtlpJsonContainer, "read", read)
    good = FIXTURES / "openinference-openai.otlp.json"
    (tmp_path / "a.otlp.json").write_bytes(good.read_bytes())
    (tmp_path / "broken.otlp.json").write_bytes(good.read_bytes())
    caplog.set_level("DEBUG", logger="agent_eval.ingest._pipeline")
    run = ingest([str(tmp_path)])
    assert len(run.collect()) == len(ingest([str(good)]).collect())
    assert run.report.internal_errors == 1
    error = run.report.files[1].error
    assert error is not None and error.startswith(
        f"{tmp_path / 'broken.otlp.json'}: internal_error"
    )
    assert "KeyError" in error and "Traceback" in caplog.text


def test_an_unexpected_exception_on_one_span_costs_that_span(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    from agent_eval.ingest._assemble import Assembler

    original = Assembler.add_span

    def add_span(self: Assembler, span: SpanRecord, file: Any) -> None:
        if span.span_id == "1e2feb89414c343c":
            raise RuntimeError("a bug")
        original(self, span, file)

    monkeypatch.setattr(Assembler, "add_span", add_span)
    run = ingest([str(FIXTURES / "openinference-openai.otlp.json")])
    run.collect()
    assert run.report.internal_errors == 1
    assert run.report.spans_ignored["internal_error"] == 1
    assert run.report.balanced
    (skip,) = [s for s in run.report.skipped if s.reason == "internal_error"]
    assert skip.span_id == "1e2feb89414c343c" and "RuntimeError: a bug" in skip.detail


def test_every_input_failing_still_raises_a_typed_error(tmp_path: Path) -> None:
    path = tmp_path / "x.otlp.json"
    path.write_bytes(b'{"resourceSpans": [')
    with pytest.raises(InputError):
        ingest([str(path)]).collect()
