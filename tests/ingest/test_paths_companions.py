"""Companion files next to traces (labels, verdicts, references, results) are passed over with a
note; the unknown-format message lists the containers sorted, in one wording."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from agent_eval.errors import UnknownFormatError
from agent_eval.ingest import containers, ingest
from agent_eval.ingest._paths import companion_note, expand_paths
from agent_eval.ingest._pipeline import known_formats

LABELS = "not a trace file: labels (use --labels)"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


@pytest.mark.parametrize(
    ("name", "text", "note"),
    [
        ("labels.jsonl", '{"conversation_id": "c1", "label": 1}\n', LABELS),
        ("labels.csv", "conversation_id,label\nc1,1\n", LABELS),
        ("rewards.jsonl", '{"conversation_id": "c1", "reward": 0.5}\n', LABELS),
        (
            "refs.jsonl",
            '{"conversation_id": "c1", "reference": "book a flight"}\n',
            "not a trace file: references (use --references)",
        ),
        (
            "verdicts.csv",
            "conversation_id,verdict\nc1,pass\n",
            "not a trace file: verdicts (use calibrate --predictions)",
        ),
        (
            "results.jsonl",
            json.dumps({"conversation_id": "c", "run_id": "r", "metric": "m", "trace_ids": []}),
            "not a trace file: result rows of a run (use agent-eval report or calibrate)",
        ),
    ],
)
def test_companion_files_are_recognised(tmp_path: Path, name: str, text: str, note: str) -> None:
    assert companion_note(write(tmp_path / name, text)) == note


@pytest.mark.parametrize(
    ("name", "text"),
    [
        # an AgentTrace line has conversation_id and reference, but also messages
        ("t.jsonl", '{"conversation_id": "c", "reference": null, "messages": []}\n'),
        ("spans.json", '{"resourceSpans": []}\n'),
        ("pretty.json", '{\n  "conversation_id": "c1",\n  "label": 1\n}\n'),
        ("labels.txt.bin", '{"conversation_id": "c1", "label": 1}\n'),  # suffix not checked
        ("other.jsonl", '{"conversation_id": "c1", "formatter": "x", "text": "y"}\n'),
        ("bad.csv", "\xff\xfe not text"),
    ],
)
def test_other_files_are_not_companions(tmp_path: Path, name: str, text: str) -> None:
    assert companion_note(write(tmp_path / name, text)) is None


def test_a_directory_run_notes_companions_instead_of_errors(tmp_path: Path) -> None:
    write(tmp_path / "labels.jsonl", '{"conversation_id": "c1", "label": 1}\n')
    trace = {"conversation_id": "c1", "messages": [{"role": "user", "content": "hi"}]}
    write(tmp_path / "traces.jsonl", json.dumps(trace) + "\n")
    assert [i.note for i in expand_paths([tmp_path])] == [LABELS, None]
    run = ingest(tmp_path)
    assert [t.conversation_id for t in run] == ["c1"]
    files = {Path(f.path).name: f for f in run.report.files}
    assert files["labels.jsonl"].note == LABELS and files["labels.jsonl"].error is None
    assert files["labels.jsonl"].container is None and files["traces.jsonl"].note is None
    assert run.report.to_json()["files"][0]["note"] == LABELS


def test_companions_alone_give_no_conversation_and_no_error(tmp_path: Path) -> None:
    run = ingest(write(tmp_path / "labels.jsonl", '{"conversation_id": "c1", "label": 0}\n'))
    assert run.collect() == [] and run.report.files[0].note == LABELS


def test_unknown_format_lists_the_containers_sorted(tmp_path: Path) -> None:
    names = sorted(containers.names())
    assert known_formats() == f"known formats (--format NAME): {', '.join(names)}"
    write(tmp_path / "a.dat", "plain text, not a trace")
    with pytest.raises(UnknownFormatError) as info:
        list(ingest(tmp_path / "a.dat"))
    assert str(info.value) == f"no container recognises {tmp_path / 'a.dat'}; {known_formats()}"
