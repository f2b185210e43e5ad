"""The chunked JSON reader behind the chat-log containers: same values as json.loads."""

from __future__ import annotations

import io
import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval.errors import DecodeError
from agent_eval.ingest.containers import _json_stream
from agent_eval.ingest.containers._json_stream import BadValue, JsonStream
from agent_eval.ingest.containers._leading import MAX_LEADING_BAD

LEAVES = (
    st.none()
    | st.booleans()
    | st.integers()
    | st.text()
    | st.floats(allow_nan=False, allow_infinity=False)
)
VALUES = st.recursive(
    LEAVES,
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=4), inner, max_size=4)
    ),
    max_leaves=12,
)


@pytest.fixture(autouse=True)
def tiny_chunks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(_json_stream, "_CHUNK", 3)  # every value straddles chunk boundaries


def stream(data: str) -> JsonStream:
    return JsonStream(io.BytesIO(data.encode()), "f.json")


@settings(max_examples=150, deadline=None)
@given(st.lists(VALUES, max_size=6), st.sampled_from(["", " ", "\n  "]))
def test_array_elements_equal_json_loads(values: list[Any], space: str) -> None:
    text = json.dumps(values, indent=2 if space else None, ensure_ascii=False)
    assert [v for _, v in stream(text).array()] == json.loads(text)


@settings(max_examples=100, deadline=None)
@given(st.lists(VALUES, min_size=1, max_size=6))
def test_json_lines_values_and_line_numbers(values: list[Any]) -> None:
    text = "\n".join(json.dumps(v) for v in values) + "\n"
    got = list(stream(text).values())
    assert [v for _, v in got] == values
    assert [line for line, _ in got] == list(range(1, len(values) + 1))


def test_object_members_with_a_streamed_array() -> None:
    json_stream = stream('{"n": 12345.5e3, "items": [1, {"a": [2]}, 3], "last": -7}')
    seen = {}
    for key in json_stream.members():
        seen[key] = (
            list(v for _, v in json_stream.array()) if key == "items" else json_stream.value()
        )
    assert seen == {"n": 12345500.0, "items": [1, {"a": [2]}, 3], "last": -7}


@pytest.mark.parametrize(
    ("text", "line"),
    [('[{"a": 1},\n{"b": ', 2), ("[1,\n2\n3]", 3), ('{"a": 1 "b"}', 1), ("[\n\n", 3)],
)
def test_bad_json_names_file_and_line(text: str, line: int) -> None:
    json_stream = stream(text)
    with pytest.raises(DecodeError, match=rf"f\.json:{line}:"):
        if text.startswith("["):
            list(json_stream.array())
        else:
            list(json_stream.members())


def test_not_utf8_is_a_decode_error() -> None:
    with pytest.raises(DecodeError, match="not UTF-8"):
        list(JsonStream(io.BytesIO(b'["\xff\xfe"]'), "f.json").array())


def test_records_skip_a_bad_line_and_read_no_further_than_needed() -> None:
    good = json.dumps({"a": "x" * 40})
    lines = [good, '{"a": [1, 2', good, "not json at all", good] + [good] * 200
    data = io.BytesIO(("\n".join(lines) + "\n").encode())
    records = JsonStream(data, "f.jsonl").records()
    got = [next(records) for _ in range(5)]
    # the bad values did not make the stream read on to the end of the file
    assert data.tell() < len(data.getvalue()) // 10
    got += list(records)
    bad = [r for r in got if isinstance(r, BadValue)]
    assert [(b.error.line, b.lines) for b in bad] == [(2, "line 2"), (4, "line 4")]
    assert [r[0] for r in got if not isinstance(r, BadValue)] == [1, 3, *range(5, 206)]
    assert bad[0].skipped().source is not None and str(bad[0].skipped().source) == "f.jsonl:2"


def test_records_resume_at_the_next_value_of_pretty_printed_output() -> None:
    value = json.dumps({"name": "s", "context": {"span_id": "0x1"}}, indent=4)
    text = "\n".join([value, value[: len(value) // 2], "INFO a log line", value]) + "\n"
    got = list(stream(text).records())
    assert [type(r).__name__ for r in got] == ["tuple", "BadValue", "tuple"]
    first_bad = value.count("\n") + 2
    assert (
        got[1].lines
        == f"lines {first_bad}-{first_bad + value[: len(value) // 2].count(chr(10)) + 1}"
    )
    assert got[2][0] == first_bad + value[: len(value) // 2].count("\n") + 2


def test_a_bad_first_value_costs_only_itself_when_a_good_one_follows() -> None:
    got = list(stream('{bad\n{"a": 1}\n{"a": 2}\n').records())  # issue 32: not the file
    assert [type(r).__name__ for r in got] == ["BadValue", "tuple", "tuple"]
    assert isinstance(got[0], BadValue) and got[0].lines == "line 1"
    assert [r[1] for r in got[1:] if not isinstance(r, BadValue)] == [{"a": 1}, {"a": 2}]


def test_records_raise_when_no_value_is_good() -> None:
    with pytest.raises(DecodeError, match=r"f\.json:1: invalid JSON"):
        list(stream("{bad\n{worse\n").records())
    many = "".join(f"{{bad {i}\n" for i in range(MAX_LEADING_BAD + 1)) + '{"a": 1}\n'
    with pytest.raises(DecodeError, match=r"f\.json:1: invalid JSON"):  # not JSON Lines
        list(stream(many).records())


def test_bytes_that_are_not_utf8_cost_only_their_record() -> None:
    data = b'{"a": 1}\n{"a": "\xff"}\n{"a": 3}\n{"a": "\xc3'
    got = list(JsonStream(io.BytesIO(data), "f.jsonl").records())
    assert [r[1] for r in got if not isinstance(r, BadValue)] == [{"a": 1}, {"a": 3}]
    bad = [r for r in got if isinstance(r, BadValue)]
    assert [b.error.line for b in bad] == [2, 4]
    assert "not UTF-8 (byte 0xff" in bad[0].error.reason
