"""Reference files: JSONL and CSV of {conversation_id, reference}, with file:line errors."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval._references import load_references
from agent_eval.errors import InputError


def test_jsonl_and_csv(tmp_path: Path) -> None:
    (tmp_path / "r.jsonl").write_text(
        '{"conversation_id": "a", "reference": "x"}\n\n{"conversation_id": "b", "reference": "y"}\n'
    )
    (tmp_path / "r.csv").write_text('conversation_id,reference,extra\na,"x, with comma",1\n')
    assert load_references(tmp_path / "r.jsonl") == {"a": "x", "b": "y"}
    assert load_references(tmp_path / "r.csv") == {"a": "x, with comma"}


@pytest.mark.parametrize(
    ("name", "text", "message"),
    [
        ("r.jsonl", '{"conversation_id": "a"}\n', "r.jsonl:1"),
        (
            "r.jsonl",
            '{"conversation_id": "a", "reference": "x"}\n{oops\n',
            "r.jsonl:2: not valid JSON",
        ),
        ("r.jsonl", '{"conversation_id": 1, "reference": "x"}\n', "both strings"),
        ("r.csv", "id,reference\na,x\n", "lacks conversation_id"),
        # regression: an empty conversation_id was accepted (it matches no conversation)
        (
            "r.jsonl",
            '{"conversation_id": "a", "reference": "x"}\n'
            '{"conversation_id": "", "reference": "y"}\n',
            "r.jsonl:2: empty conversation_id",
        ),
        (
            "r.csv",
            'conversation_id,reference\na,"two\nlines"\n\n ,y\n',
            "r.csv:5: empty conversation_id",
        ),
        ("r.txt", "a x\n", "use .jsonl or .csv"),
        (
            "r.jsonl",
            '{"conversation_id": "a", "reference": "x"}\n'
            '{"conversation_id": "a", "reference": "z"}\n',
            "two different",
        ),
    ],
)
def test_bad_files_name_file_and_line(tmp_path: Path, name: str, text: str, message: str) -> None:
    (tmp_path / name).write_text(text)
    with pytest.raises(InputError) as caught:
        load_references(tmp_path / name)
    assert message in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(InputError, match="not found"):
        load_references(tmp_path / "none.jsonl")
