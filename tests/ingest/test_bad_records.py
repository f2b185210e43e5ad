"""One bad record costs only itself, in every container and decoder (issue 32, item 7).

A bad first line of a JSON Lines file (cut off, garbled, valid JSON of another shape) costs that
line, as the same line anywhere else does, with ``--format auto`` and with the container forced;
an integer longer than Python converts, or an unquoted number beyond the double range, costs
the item holding it (never an ``internal_error``, never the file); a binary OTLP attribute
nested past the protobuf decoder's limit costs its span; a cassette interaction whose parts are
not mappings is a counted skip.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import orjson
import pytest
from opentelemetry.proto.collector.trace.v1.trace_service_pb2 import ExportTraceServiceRequest

from agent_eval._trace import AgentTrace
from agent_eval.errors import DecodeError
from agent_eval.ingest import IngestReport, ingest
from agent_eval.ingest._safe_text import MAX_INT_DIGITS, loads, parse_int
from agent_eval.ingest._spans import SpanRecord
from agent_eval.ingest.containers._base import Skipped
from agent_eval.ingest.containers._json_stream import JsonStream
from agent_eval.ingest.containers._openai_cassette import OpenAICassetteContainer
from agent_eval.ingest.containers._otlp_json import OtlpJsonContainer
from agent_eval.ingest.containers._otlp_proto import OtlpProtoContainer
from agent_eval.testing._otlp import export_request, span

ROOT = Path(__file__).resolve().parents[2]
T = "5b8aa5a2d2c872e8321cf37308d69df2"
BAD_LINES = (b'{"name": "cut of', b"garbage, not JSON", b"[1, 2]")
"""A line cut off, a line that is not JSON, a line of valid JSON of another shape."""


def read(path: Path, fmt: str) -> tuple[list[AgentTrace], IngestReport]:
    run = ingest([str(path)], format=fmt)
    traces = list(run)
    return traces, run.report


def conversations(traces: list[AgentTrace]) -> list[tuple[str, list[Any]]]:
    return [(t.conversation_id, [m.model_dump() for m in t.messages]) for t in traces]


def skipped(report: IngestReport) -> int:
    return sum(
        sum(counts.values())
        for counts in (report.spans_ignored, report.logs_ignored, report.records_ignored)
    )


def trace_lines(tmp_path: Path) -> bytes:
    traces = ingest(sorted((ROOT / "fixtures" / "otel").glob("*.otlp.json"))[:3]).collect()
    return b"".join(t.model_dump_json().encode() + b"\n" for t in traces)


def message_lines(_: Path) -> bytes:
    lines = [
        {"conversation_id": f"c{i}", "messages": [{"role": "user", "content": f"q{i}"}]}
        for i in range(3)
    ]
    return b"".join(orjson.dumps(line) + b"\n" for line in lines)


def phoenix_lines(_: Path) -> bytes:
    def one(span_id: str) -> dict[str, Any]:
        message = {"message": {"role": "user", "content": "Weather in Paris?"}}
        answer = {"message": {"role": "assistant", "content": "Sunny."}}
        return {
            "name": "ChatCompletion",
            "context": {"trace_id": T, "span_id": span_id},
            "span_kind": "LLM",
            "start_time": "2025-01-01T00:00:00+00:00",
            "end_time": "2025-01-01T00:00:01+00:00",
            "status_code": "OK",
            "attributes": {
                "llm": {"input_messages": [message], "output_messages": [answer]},
                "openinference": {"span": {"kind": "LLM"}},
            },
        }

    return b"".join(orjson.dumps(one(s)) + b"\n" for s in ("1" * 16, "2" * 16))


JSON_LINES = {
    "otlp-json": lambda _: (ROOT / "fixtures/otel/openai-v2-events.otlp.jsonl").read_bytes(),
    "otel-js": lambda _: (ROOT / "fixtures/js/console-spans.jsonl").read_bytes(),
    "agent-trace-jsonl": trace_lines,
    "openai-messages": message_lines,
    "phoenix": phoenix_lines,
}


@pytest.mark.parametrize("fmt", ["auto", "forced"])
@pytest.mark.parametrize("bad", BAD_LINES, ids=["cut", "garbage", "other-shape"])
@pytest.mark.parametrize("container", sorted(JSON_LINES))
def test_a_bad_first_line_costs_only_itself(
    tmp_path: Path, container: str, bad: bytes, fmt: str
) -> None:
    good = JSON_LINES[container](tmp_path)
    clean = tmp_path / "clean.jsonl"
    clean.write_bytes(good)
    expected, clean_report = read(clean, container)
    assert expected and skipped(clean_report) == 0
    for position in ("first", "second"):
        lines = good.splitlines(keepends=True)
        lines.insert(0 if position == "first" else 1, bad + b"\n")
        path = tmp_path / f"{position}.jsonl"
        path.write_bytes(b"".join(lines))
        traces, report = read(path, container if fmt == "forced" else "auto")
        assert report.files[0].container == container, position
        assert report.files[0].error is None and report.internal_errors == 0
        assert conversations(traces) == conversations(expected), position
        # a chat log opening with an array is a list of records: one skip per item
        array_first = container == "openai-messages" and bad == b"[1, 2]" and position == "first"
        per_line = 2 if array_first else 1
        assert skipped(report) == per_line and report.balanced, position
        line = 1 if position == "first" else 2
        assert {n.source.line for n in report.skipped if n.source} == {line}


def test_a_python_console_file_whose_first_value_is_bad_keeps_the_rest(tmp_path: Path) -> None:
    good = (ROOT / "fixtures/overlap/two-exporters.console.json").read_bytes()
    path = tmp_path / "console.json"
    path.write_bytes(b'{\n    "name": "cut off\n' + good)
    traces, report = read(path, "otel-python-console")
    clean = ROOT / "fixtures/overlap/two-exporters.console.json"
    expected, clean_report = read(clean, "otel-python-console")
    assert conversations(traces) == conversations(expected)
    assert report.files[0].error is None and report.records_ignored == {"invalid_json": 1}
    assert skipped(report) == skipped(clean_report) + 1


def test_a_file_of_bad_lines_only_is_still_rejected_whole(tmp_path: Path) -> None:
    path = tmp_path / "bad.jsonl"
    path.write_bytes(b'{"cut\ngarbage\n{"also": \n')
    for container in JSON_LINES:
        with pytest.raises(DecodeError) as caught:
            read(path, container)
        assert caught.value.path == str(path) and caught.value.line == 1, container


def test_a_pretty_printed_request_cut_short_is_not_taken_for_json_lines(tmp_path: Path) -> None:
    request = json.dumps(export_request([span(trace_id=T, span_id="1" * 16)]), indent=2)
    path = tmp_path / "cut.otlp.json"
    path.write_text(request[: len(request) // 2])
    with pytest.raises(DecodeError, match="ends early") as caught:
        list(OtlpJsonContainer().read(str(path)))
    assert caught.value.line is not None and caught.value.line > 1


# --- numbers --------------------------------------------------------------------------------


def test_parse_int_reads_integers_too_long_to_convert_as_infinite() -> None:
    assert parse_int("9" * MAX_INT_DIGITS) == int("9" * MAX_INT_DIGITS)
    assert parse_int("-" + "9" * MAX_INT_DIGITS) == -int("9" * MAX_INT_DIGITS)
    assert parse_int("9" * (MAX_INT_DIGITS + 1)) == float("inf")
    assert parse_int("-" + "1" * (MAX_INT_DIGITS + 1)) == float("-inf")
    # past the double range, orjson's fast path refuses: read as orjson reads numbers
    assert loads(b"[" + b"1" * 400 + b", -1e400, 18446744073709551616, 7]") == [
        float("inf"),
        float("-inf"),
        float(2**64),
        7,
    ]
    with pytest.raises(orjson.JSONDecodeError):  # literals stay invalid, as in orjson
        loads(b"[" + b"1" * 400 + b", NaN]")


@pytest.mark.parametrize("digits", [MAX_INT_DIGITS + 1, 5000])
def test_a_too_long_integer_in_a_streamed_record_is_no_internal_error(
    tmp_path: Path, digits: int
) -> None:
    path = tmp_path / "chat.jsonl"
    huge = "9" * digits
    path.write_text(
        '{"messages": [{"role": "user", "content": "a"}]}\n'
        f'{{"messages": [{{"role": "user", "content": "b"}}], "metadata": {{"n": {huge}}}}}\n'
        '{"messages": [{"role": "user", "content": "c"}]}\n'
    )
    traces, report = read(path, "auto")
    assert [t.messages[0].content for t in traces] == ["a", "b", "c"]
    assert report.internal_errors == 0 and skipped(report) == 0
    with path.open("rb") as stream:
        values = list(JsonStream(stream, str(path)).records())
    assert values[1] == (
        2,
        {
            **json.loads(path.read_text().splitlines()[1].replace(huge, "0")),
            "metadata": {"n": float("inf")},
        },
    )


def test_json_lines_of_message_lists_keep_every_line(tmp_path: Path) -> None:
    path = tmp_path / "lists.jsonl"  # regression: only the first line used to be read
    path.write_text(
        '[{"role": "user", "content": "a"}]\n{"cut\n[{"role": "user", "content": "c"}]\n'
    )
    traces, report = read(path, "auto")
    assert [(t.conversation_id, t.messages[0].content) for t in traces] == [
        ("lists/1", "a"),
        ("lists/3", "c"),
    ]
    assert report.records_ignored == {"invalid_json": 1} and report.balanced


@pytest.mark.parametrize("digits", [310, 400, 5000])
def test_an_unquoted_huge_number_costs_its_span_not_the_file(tmp_path: Path, digits: int) -> None:
    good = span(trace_id=T, span_id="1" * 16, name="chat", attributes={"n": 1})
    bad = span(trace_id=T, span_id="2" * 16, name="chat", attributes={"n": 1})
    text = orjson.dumps(export_request([good, bad])).decode()
    at = text.rindex('"intValue":"1"')
    text = text[:at] + '"intValue":' + "9" * digits + text[at + len('"intValue":"1"') :]
    path = tmp_path / "big.otlp.json"
    path.write_text(text)
    items = list(OtlpJsonContainer().read(str(path)))
    assert [type(i).__name__ for i in items] == ["SpanRecord", "Skipped"]
    note = items[1]
    assert isinstance(note, Skipped) and note.reason == "invalid_attribute"
    assert note.span_id == "2" * 16 and "is not a 64-bit integer" in note.detail


def test_a_truncated_hint_only_for_a_file_that_ends_early(tmp_path: Path) -> None:
    path = tmp_path / "bad.otlp.json"
    path.write_text('{"resourceSpans": [], "x": tru}\n')
    with pytest.raises(DecodeError) as caught:
        list(OtlpJsonContainer().read(str(path)))
    assert "truncated" not in caught.value.reason and caught.value.line == 1


CASSETTE = """interactions:
- request:
    body: '{"model": "gpt-4o", "messages": [{"role": "user", "content": "hi"}]}'
    method: POST
    uri: https://api.openai.com/v1/chat/completions
  response:
    body:
      string: '{"choices": [{"message": {"role": "assistant", "content": "hello"}}]}'
    status: {code: 200, message: OK}
BAD
version: 1
"""


def test_a_too_long_yaml_integer_is_no_internal_error(tmp_path: Path) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASSETTE.replace("BAD", "- " + "9" * 5000).replace("version", "x: 1\nversion"))
    traces, report = read(path, "auto")
    assert [m.content for m in traces[0].messages] == ["hi", "hello"]
    assert report.internal_errors == 0 and report.records_ignored == {"invalid_interaction": 1}


@pytest.mark.parametrize(
    "bad",
    ["- request: 7", "- response: [1]", "- request: {uri: x}\n  response: {status: ok}", "- 3"],
)
def test_a_cassette_interaction_that_is_not_a_mapping_is_a_counted_skip(
    tmp_path: Path, bad: str
) -> None:
    path = tmp_path / "c.yaml"
    path.write_text(CASSETTE.replace("BAD", bad))
    items = list(OpenAICassetteContainer().read(str(path)))
    notes = [i for i in items if isinstance(i, Skipped)]
    assert [n.reason for n in notes] == ["invalid_interaction"]
    assert "interaction 2 cannot be read" in notes[0].detail
    traces, report = read(path, "openai-cassette")
    assert len(traces) == 1 and report.internal_errors == 0 and report.balanced


# --- binary OTLP ----------------------------------------------------------------------------


def deep_request(depth: int) -> bytes:
    request = ExportTraceServiceRequest()
    scope = request.resource_spans.add().scope_spans.add()
    scope.scope.name = "test"
    for number in (1, 2, 3):
        one = scope.spans.add()
        one.trace_id = bytes.fromhex(T)
        one.span_id = bytes([number]) * 8
        one.name = "chat"
        attribute = one.attributes.add()
        attribute.key = "deep"
        value = attribute.value
        for _ in range(depth if number == 2 else 0):
            value = value.array_value.values.add()
        value.string_value = "x"
    return request.SerializeToString()


@pytest.mark.parametrize("depth", [17, 32, 48, 60, 200])
def test_a_deep_binary_attribute_costs_one_span(tmp_path: Path, depth: int) -> None:
    path = tmp_path / "deep.pb"
    path.write_bytes(deep_request(depth))
    items = list(OtlpProtoContainer().read(str(path)))
    spans = [i.span_id for i in items if isinstance(i, SpanRecord)]
    notes = [i for i in items if isinstance(i, Skipped)]
    assert spans == ["01" * 8, "03" * 8]
    assert [(n.span_id, n.trace_id, n.spans) for n in notes] == [("02" * 8, T, 1)]
    assert notes[0].reason in ("invalid_attribute", "invalid_span")
    _, report = read(path, "auto")
    assert report.balanced and report.internal_errors == 0


def test_a_corrupt_binary_span_costs_only_itself(tmp_path: Path) -> None:
    data = deep_request(0)
    cut = data.index(b"\x02" * 8) + 8  # inside the second span, after its ids
    damaged = data[:cut] + b"\x0f" + data[cut + 1 :]  # wire type 7 does not exist
    path = tmp_path / "bad.pb"
    path.write_bytes(damaged)
    items = list(OtlpProtoContainer().read(str(path)))
    assert [i.span_id for i in items if isinstance(i, SpanRecord)] == ["01" * 8, "03" * 8]
    (note,) = [i for i in items if isinstance(i, Skipped)]
    assert note.reason == "invalid_span" and note.span_id == "02" * 8


def test_a_time_of_hundreds_of_digits_is_unknown_not_an_error(tmp_path: Path) -> None:
    from agent_eval.ingest.containers._time import to_unix_nano

    assert to_unix_nano(int("1" * 400)) == 0  # OverflowError in math.isfinite before
    assert to_unix_nano(float("nan")) == to_unix_nano(float("inf")) == 0
    assert to_unix_nano(1_700_000_000) == 1_700_000_000 * 10**9
    good = (ROOT / "fixtures/overlap/two-exporters.console.json").read_text()
    path = tmp_path / "console.json"  # the streaming reader keeps a 400-digit int an int
    path.write_text(good.replace('"2026-12-01T12:48:33.246565Z"', "1" * 400, 1))
    traces, report = read(path, "otel-python-console")
    expected, _ = read(ROOT / "fixtures/overlap/two-exporters.console.json", "otel-python-console")
    assert report.internal_errors == 0 and report.files[0].error is None
    assert conversations(traces) == conversations(expected)
