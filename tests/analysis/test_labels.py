"""Reading labels and predictions from JSONL and CSV."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._trace import AgentTrace
from agent_eval.analysis._labels import labels_from_traces, parse_binary, read_binary_file
from agent_eval.errors import InputError


@pytest.mark.parametrize(
    ("value", "expected"),
    [
        (1, 1),
        (0, 0),
        ("1", 1),
        ("0", 0),
        (True, 1),
        (False, 0),
        ("true", 1),
        ("False", 0),
        ("pass", 1),
        ("FAIL", 0),
        (1.0, 1),
        ("1.0", 1),
        (0.0, 0),
        (0.5, 0),
        ("0.999", 0),
    ],
)
def test_parse_binary_accepts(value: object, expected: int) -> None:
    assert parse_binary(value) == expected


@pytest.mark.parametrize("value", ["maybe", 2, -0.1, "", None, float("nan"), [1]])
def test_parse_binary_rejects(value: object) -> None:
    with pytest.raises(ValueError):
        parse_binary(value)


def test_jsonl_and_csv(tmp_path: Path) -> None:
    jsonl = tmp_path / "labels.jsonl"
    jsonl.write_text(
        '{"conversation_id": "a", "label": "pass"}\n\n{"conversation_id": "b", "reward": 0.0}\n'
    )
    csv = tmp_path / "labels.csv"
    csv.write_text("conversation_id,verdict\na,1\nb,fail\n")
    assert read_binary_file(jsonl) == {"a": 1, "b": 0}
    assert read_binary_file(csv) == {"a": 1, "b": 0}


def test_explicit_field(tmp_path: Path) -> None:
    path = tmp_path / "l.jsonl"
    path.write_text('{"conversation_id": "a", "label": 0, "human": 1}\n')
    assert read_binary_file(path, field="human") == {"a": 1}


def test_bad_value_names_file_and_line(tmp_path: Path) -> None:
    path = tmp_path / "l.csv"
    path.write_text("conversation_id,label\na,1\nb,maybe\n")
    with pytest.raises(InputError, match=r"l\.csv:3: label of 'b'.*'maybe'"):
        read_binary_file(path)


def test_duplicate_and_missing(tmp_path: Path) -> None:
    dup = tmp_path / "d.jsonl"
    dup.write_text('{"conversation_id": "a", "label": 1}\n{"conversation_id": "a", "label": 0}\n')
    with pytest.raises(InputError, match=r"d\.jsonl:2: .*twice \(first on line 1\)"):
        read_binary_file(dup)
    nocid = tmp_path / "n.jsonl"
    nocid.write_text('{"label": 1}\n')
    with pytest.raises(InputError, match=r"n\.jsonl:1: record has no conversation_id"):
        read_binary_file(nocid)
    noval = tmp_path / "v.jsonl"
    noval.write_text('{"conversation_id": "a"}\n')
    with pytest.raises(InputError, match=r"v\.jsonl:1: .*no value"):
        read_binary_file(noval)


def test_invalid_json_and_missing_file(tmp_path: Path) -> None:
    bad = tmp_path / "b.jsonl"
    bad.write_text('{"conversation_id": "a", "label": 1}\n{oops\n')
    with pytest.raises(InputError, match=r"b\.jsonl:2: invalid JSON"):
        read_binary_file(bad)
    with pytest.raises(InputError, match="cannot read"):
        read_binary_file(tmp_path / "absent.jsonl")


def test_labels_from_traces() -> None:
    traces = [
        AgentTrace(conversation_id="a", labels={"reward": 1.0}),
        AgentTrace(conversation_id="b", labels={"success": False}),
        AgentTrace(conversation_id="c"),
    ]
    assert labels_from_traces(traces) == {"a": 1, "b": 0}
    with pytest.raises(InputError, match="'d'"):
        labels_from_traces([AgentTrace(conversation_id="d", labels={"reward": 7})])
