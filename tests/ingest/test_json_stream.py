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
from agent_eval.ingest.containers._json_stream import JsonStream

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
