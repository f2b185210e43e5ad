"""A turn-labels file beside traces is "not a trace file: turn labels", and a JSON object whose
``generator`` is a string is not taken for an MTRAG conversation (trial7 #17: ``formatters diff
... fixtures/`` told the user to force a format for ``rag-turn-labels.jsonl`` and read
``fixtures/expected.json`` as a broken MTRAG record).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.errors import UnknownFormatError
from agent_eval.ingest import ingest
from agent_eval.ingest._paths import companion_note
from agent_eval.ingest.containers._mtrag_container import MtragContainer

from ..run.goal_script import trace

TURN_LABELS = "not a trace file: turn labels (use --turn-labels)"
TURN_ROW = {"conversation_id": "rag/returns", "turn": 1, "relevance": {"p1": 1},
            "relevant_passages": ["p1"], "answerability": "ANSWERABLE"}  # fmt: skip


@pytest.mark.parametrize(
    ("record", "note"),
    [
        (TURN_ROW, TURN_LABELS),
        ({"conversation_id": "c", "turn": "2", "reference": "14 days"}, TURN_LABELS),
        # RAG turn records carry a turn too: they are traces, not labels
        ({"conversation_id": "c", "turn": 1, "question": "q?", "contexts": ["x"]}, None),
        (
            {
                "conversation_id": "c",
                "turn": 1,
                "input": [{"speaker": "user"}],
                "contexts": [],
                "targets": [],
            },
            None,
        ),  # fmt: skip  (MTRAG-UN)
    ],
)
def test_turn_label_rows_are_recognised(
    tmp_path: Path, record: dict[str, object], note: str | None
) -> None:
    path = tmp_path / "rows.jsonl"
    path.write_text(json.dumps(record) + "\n", encoding="utf-8")
    assert companion_note(path) == note


def test_a_string_generator_is_not_mtrag(tmp_path: Path) -> None:
    mtrag = MtragContainer()
    oracle = b'{\n "generator": "fixtures/generate.py",\n "files": [{"messages": 3}]\n}'
    conversation = b'{"author": "a", "retriever": {"collection": {}}, "messages": []}'
    assert not mtrag.sniff("expected.json", oracle)
    assert mtrag.sniff("55.json", conversation)
    path = tmp_path / "expected.json"
    path.write_bytes(oracle)
    run = ingest([str(path)], format="auto")
    with pytest.raises(UnknownFormatError, match="no container recognises"):
        list(run)
    assert run.report.records_ignored == {}  # not an invalid_mtrag_conversation


def test_formatters_diff_and_show_name_companion_files_as_ingest_does(tmp_path: Path) -> None:
    traces = tmp_path / "traces.jsonl"
    traces.write_text(trace("a", done=True).model_dump_json() + "\n", encoding="utf-8")
    (tmp_path / "rag-turn-labels.jsonl").write_text(json.dumps(TURN_ROW) + "\n", encoding="utf-8")
    runner = CliRunner()
    for command in (["formatters", "diff", "json@1", "transcript@1"], ["show"]):
        result = runner.invoke(app, [*command, str(tmp_path)])
        assert result.exit_code == 0, result.stderr
        assert f"skipped {tmp_path / 'rag-turn-labels.jsonl'}: {TURN_LABELS}" in " ".join(
            result.stderr.split()
        )
        assert "force one with --format" not in result.stderr
