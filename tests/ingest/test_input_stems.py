"""Conversations named after the file are named the same whether or not it is gzip'd (s7-gz #2).

``chat_messages``, ``rag_jsonl``, ``openai_cassette`` and ``mtrag`` name a conversation without
an id after the file's stem, and ``span-attributes`` names its span after the file: for
``x.json.gz`` that was ``x.json#1`` where ``x.json`` gives ``x#1``. One helper
(:func:`agent_eval.ingest._sources.input_stem`) strips the compression suffix first.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.ingest import SpanRecord, containers, ingest
from agent_eval.ingest._sources import input_name, input_stem, input_suffix

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()

CHAT = {"messages": [{"role": "user", "content": "Book a table."},
                     {"role": "assistant", "content": "Booked for 8 pm."}]}  # fmt: skip
RAG = {"question": "How long is the warranty?", "contexts": [{"text": "Two years."}],
       "answer": "Two years."}  # fmt: skip
MTRAG = {
    "author": "a1",
    "retriever": {"collection": "docs"},
    "generator": {"name": "gen", "prompt": "p"},
    "messages": [
        {"speaker": "user", "text": "How long is the warranty?"},
        {"speaker": "agent", "text": "Two years.",
         "contexts": [{"document_id": "d1", "text": "Two years."}]},
    ],
}  # fmt: skip


def _lines(*records: object) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in records)


CASES = {
    # name, bytes, the format it is read with, the conversation ids it gives
    "chat-whole": ("chats.json", orjson.dumps(CHAT), "openai-messages", ["chats"]),
    "chat-lines": ("chats.jsonl", _lines(CHAT, CHAT), "openai-messages",
                   ["chats/1", "chats/2"]),
    "rag-jsonl": ("turns.jsonl", _lines(RAG, RAG, RAG), "rag-jsonl",
                  ["turns/1", "turns/2", "turns/3"]),
    "mtrag": ("conv-17.json", orjson.dumps(MTRAG), "mtrag", ["mtrag/conv-17"]),
    "cassette": ("openai-vcr-gzip.yaml",
                 (REPO / "fixtures" / "cassettes" / "openai-vcr-gzip.yaml").read_bytes(),
                 "openai-cassette", None),
}  # fmt: skip


@pytest.mark.parametrize("case", CASES)
def test_a_gzipd_file_names_its_conversations_as_the_plain_file(case: str, tmp_path: Path) -> None:
    name, data, container, expected = CASES[case]
    (tmp_path / "plain").mkdir()
    (tmp_path / "gzip").mkdir()
    plain, packed = tmp_path / "plain" / name, tmp_path / "gzip" / f"{name}.gz"
    plain.write_bytes(data)
    packed.write_bytes(gzip.compress(data))
    ids = {}
    for label, path in (("plain", plain), ("gzip", packed)):
        out = tmp_path / f"{label}.jsonl"
        result = runner.invoke(app, ["ingest", str(path), "--out", str(out), "--json"])
        assert result.exit_code == 0, result.output
        (entry,) = orjson.loads(result.stdout)["files"]
        assert entry["container"] == container
        lines = out.read_bytes().splitlines()
        ids[label] = [orjson.loads(line)["conversation_id"] for line in lines]
    assert ids["gzip"] == ids["plain"]
    if expected is None:  # the cassette: "<stem>#<n>", one per conversation it recorded
        stem = Path(name).stem
        assert ids["gzip"] == [f"{stem}#{n}" for n in range(1, len(ids["gzip"]) + 1)]
        assert ids["gzip"]
    else:
        assert ids["gzip"] == expected


def test_a_gzipd_span_attributes_file_names_its_span_as_the_plain_file(tmp_path: Path) -> None:
    attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m"}
    (tmp_path / "plain").mkdir()
    (tmp_path / "gzip").mkdir()
    plain = tmp_path / "plain" / "chat-call.attrs.json"
    plain.write_bytes(orjson.dumps(attributes))
    packed = tmp_path / "gzip" / "chat-call.attrs.json.gz"
    packed.write_bytes(gzip.compress(orjson.dumps(attributes)))
    names = {}
    for label, path in (("plain", plain), ("gzip", packed)):
        (record,) = list(containers.get("span-attributes").read(str(path)))
        assert isinstance(record, SpanRecord)
        names[label] = record.name
    assert names == {"plain": "chat-call", "gzip": "chat-call"}
    run = ingest(packed, format="span-attributes")
    run.collect()
    assert run.report.files[0].spans_read == 1


@pytest.mark.parametrize(
    ("path", "name", "stem", "suffix"),
    [
        ("dir/x.json.gz", "x.json", "x", ".json"),
        ("dir/x.json", "x.json", "x", ".json"),
        ("X.JSONL.GZ", "X.JSONL", "X", ".jsonl"),
        ("labels.csv.gz", "labels.csv", "labels", ".csv"),
        ("x.otlp.jsonl.gz", "x.otlp.jsonl", "x.otlp", ".jsonl"),
        ("x.gz", "x", "x", ""),
        (".gz", ".gz", ".gz", ""),
        ("<stdin>", "<stdin>", "<stdin>", ""),
    ],
)
def test_the_name_of_an_input_is_judged_without_its_compression_suffix(
    path: str, name: str, stem: str, suffix: str
) -> None:
    assert (input_name(path), input_stem(path), input_suffix(path)) == (name, stem, suffix)
