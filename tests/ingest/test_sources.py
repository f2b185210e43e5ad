"""Inputs that are not plain files: gzip'd files, archives, standard input, pipes (trial8 #3, #10).

gzip'd files are read by magic bytes whatever their name, counted like any file; a cut-short or
corrupt one is an error naming the file, after what was read before the damage. Archives that
are not read are listed as skipped with the remedy. ``-`` is standard input, named ``<stdin>``;
a FIFO given by path is read once, sniffed from the kept first bytes.
"""

from __future__ import annotations

import gzip
import os
import random
import threading
import zlib
from collections.abc import Iterator
from pathlib import Path
from typing import Any, ClassVar

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.errors import InputError
from agent_eval.ingest import Container, ContainerItem, containers, ingest, open_input
from agent_eval.ingest._paths import expand_paths
from agent_eval.ingest._sources import STDIN_NAME
from agent_eval.testing._otlp import export_request, span

MODEL = "gpt-test"


def chat_request(trace_id: str, turn: int, filler: str = "") -> dict[str, Any]:
    """One export request holding one GenAI chat span (a user turn and its answer)."""
    parts = [{"role": "user", "parts": [{"type": "text", "content": f"question {turn} {filler}"}]}]
    out = [{"role": "assistant", "parts": [{"type": "text", "content": f"answer {turn}"}],
            "finish_reason": "stop"}]  # fmt: skip
    attributes = {
        "gen_ai.operation.name": "chat",
        "gen_ai.request.model": MODEL,
        "gen_ai.input.messages": orjson.dumps(parts).decode(),
        "gen_ai.output.messages": orjson.dumps(out).decode(),
    }
    span_id = f"{turn + 1:016x}"
    return export_request(
        [span(trace_id, span_id, f"chat {MODEL}", kind=3, start=turn + 1, attributes=attributes)]
    )


def jsonl(requests: list[dict[str, Any]]) -> bytes:
    return b"".join(orjson.dumps(r) + b"\n" for r in requests)


def many_traces(count: int, seed: int = 7) -> bytes:
    """``count`` JSON Lines, one single-span trace each, with incompressible filler text."""
    rng = random.Random(seed)
    return jsonl([chat_request(f"{i + 1:032x}", i, rng.randbytes(600).hex()) for i in range(count)])


def test_a_directory_walk_reads_gzipd_files_and_lists_archives_with_the_remedy(
    tmp_path: Path,
) -> None:
    (tmp_path / "plain.otlp.jsonl").write_bytes(jsonl([chat_request("a" * 32, 0)]))
    (tmp_path / "rotated.otlp.jsonl.gz").write_bytes(
        gzip.compress(jsonl([chat_request("b" * 32, 0)]))
    )
    (tmp_path / "whole.json.gz").write_bytes(gzip.compress(orjson.dumps(chat_request("c" * 32, 0))))
    (tmp_path / "export.zip").write_bytes(b"PK\x03\x04 a zip archive")
    (tmp_path / "notes.txt.gz").write_bytes(gzip.compress(b"not traces"))  # a note, gzip'd
    run = ingest(tmp_path)
    traces = run.collect()
    files = {Path(f.path).name: f for f in run.report.files}
    assert sorted(files) == ["export.zip", "plain.otlp.jsonl", "rotated.otlp.jsonl.gz",
                             "whole.json.gz"]  # fmt: skip
    for name in ("plain.otlp.jsonl", "rotated.otlp.jsonl.gz", "whole.json.gz"):
        assert (files[name].container, files[name].spans_read, files[name].error) == (
            "otlp-json", 1, None,
        )  # fmt: skip
    assert len(traces) == run.report.conversations == 3
    zipped = files["export.zip"]
    assert zipped.note == (
        f"not read: a zip archive: extract it (unzip -d DIR {tmp_path / 'export.zip'}) and pass DIR"
    )
    assert (zipped.container, zipped.error, zipped.spans_read) == (None, None, 0)
    assert run.report.balanced and run.report.spans_read == 3


def test_gzip_is_recognised_by_its_magic_bytes_not_its_name(tmp_path: Path) -> None:
    path = tmp_path / "spans.otlp.jsonl"  # gzip'd, but named like a plain file
    path.write_bytes(gzip.compress(jsonl([chat_request("d" * 32, 0), chat_request("e" * 32, 1)])))
    run = ingest(path)
    assert [len(t.messages) for t in run] == [2, 2]
    assert run.report.files[0].container == "otlp-json"


def test_gzip_is_decompressed_as_it_is_read_not_whole(tmp_path: Path) -> None:
    data = many_traces(50)
    path = tmp_path / "big.otlp.jsonl.gz"
    path.write_bytes(gzip.compress(data))
    with open_input(str(path)) as stream:
        first = stream.readline()
        assert first == data[: data.index(b"\n") + 1]
        assert stream.tell() == len(first)  # a stream position, not a decompressed copy
        assert isinstance(stream, gzip.GzipFile)


def _complete_lines_before_damage(damaged: bytes) -> int:
    """How many whole lines zlib decompresses from ``damaged`` before it ends or breaks."""
    decompressor = zlib.decompressobj(wbits=31)  # 31: a gzip header and trailer (zlib manual)
    out = b""
    for start in range(0, len(damaged), 1024):
        try:
            out += decompressor.decompress(damaged[start : start + 1024])
        except zlib.error:
            break
    return out.count(b"\n")


def test_a_cut_short_gzip_is_an_error_naming_the_file_after_what_was_read(tmp_path: Path) -> None:
    compressed = gzip.compress(many_traces(300))
    path = tmp_path / "cut.otlp.jsonl.gz"
    path.write_bytes(compressed[: len(compressed) // 2])
    good = tmp_path / "good.otlp.jsonl"  # one input that reads, so iteration does not raise
    good.write_bytes(jsonl([chat_request("f" * 32, 9999)]))
    run = ingest([path, good])
    traces = run.collect()
    file = run.report.files[0]
    expected = _complete_lines_before_damage(compressed[: len(compressed) // 2])
    assert 100 < expected < 200
    assert file.spans_read == expected == len(traces) - 1
    assert file.error is not None
    assert file.error.startswith(f"{path}: the gzip data ends early (truncated: ")
    assert "what was read before it is kept" in file.error
    assert run.report.balanced


def test_a_corrupt_gzip_is_an_error_naming_the_file_after_what_was_read(tmp_path: Path) -> None:
    compressed = bytearray(gzip.compress(many_traces(300)))
    compressed[-8] ^= 0xFF  # the CRC-32 of the trailer (RFC 1952 2.3.1) no longer matches
    path = tmp_path / "corrupt.otlp.jsonl.gz"
    path.write_bytes(bytes(compressed))
    good = tmp_path / "good.otlp.jsonl"
    good.write_bytes(jsonl([chat_request("f" * 32, 9999)]))
    run = ingest([path, good])
    traces = run.collect()
    file = run.report.files[0]
    assert file.error is not None
    assert file.error.startswith(f"{path}: the gzip data is corrupt (CRC check failed")
    assert file.error.endswith(f"re-copy or re-export the file (gzip -t {path} checks it)")
    assert file.spans_read == len(traces) - 1 == 300  # read before the trailer was checked
    assert run.report.balanced


def test_a_zip_given_by_name_without_its_suffix_is_named_with_the_remedy(tmp_path: Path) -> None:
    path = tmp_path / "download"
    path.write_bytes(b"PK\x03\x04\x14\x00 rest of a zip")
    (tmp_path / "x.otlp.jsonl").write_bytes(jsonl([chat_request("f" * 32, 0)]))
    run = ingest([path, tmp_path / "x.otlp.jsonl"])
    assert len(run.collect()) == 1
    assert run.report.files[0].error == (
        f"{path}: not read: it is a zip archive; extract it (unzip -d DIR {path}) and pass DIR"
    )


def test_cli_reads_standard_input_named_stdin(tmp_path: Path) -> None:
    data = jsonl([chat_request("1" * 32, 0), chat_request("2" * 32, 1)])
    out = tmp_path / "out.jsonl"
    runner = CliRunner()
    for given in (data, gzip.compress(data)):  # `zcat x.gz | ingest -` and `cat x.gz | ingest -`
        result = runner.invoke(app, ["ingest", "-", "--out", str(out), "--json"], input=given)
        assert result.exit_code == 0, result.output
        summary = orjson.loads(result.stdout)
        assert [(f["path"], f["container"], f["spans_read"]) for f in summary["files"]] == [
            (STDIN_NAME, "otlp-json", 2)
        ]
        assert len(out.read_text().splitlines()) == 2


def test_cli_names_stdin_in_errors() -> None:
    result = CliRunner().invoke(app, ["ingest", "-"], input=b"\x00\x01 not traces\n")
    assert result.exit_code == 3
    assert "no container recognises <stdin>" in result.stderr


def test_a_fifo_is_read_once_and_sniffed_from_its_kept_first_bytes(tmp_path: Path) -> None:
    data = many_traces(120)  # more than the 64 KiB kept for sniffing
    assert len(data) > 64 * 1024
    fifo = tmp_path / "spans.fifo"
    os.mkfifo(fifo)

    def write() -> None:
        with open(fifo, "wb") as stream:
            stream.write(data)

    writer = threading.Thread(target=write)
    writer.start()
    (item,) = expand_paths([fifo])
    assert (item.path, item.error, item.note) == (str(fifo), None, None)
    run = ingest(fifo)
    traces = run.collect()
    writer.join(timeout=30)
    assert len(traces) == run.report.files[0].spans_read == 120
    assert run.report.files[0].error is None and run.report.balanced


class _ReadsTwice(Container):
    name: ClassVar[str] = "test-reads-twice"
    description: ClassVar[str] = "opens its input twice"

    def sniff(self, path: str, head: bytes) -> bool:
        return False

    def read(self, path: str) -> Iterator[ContainerItem]:
        with open_input(path) as stream:
            stream.read()
        with open_input(path) as stream:
            stream.read()
        yield from ()


def test_a_container_reading_stdin_twice_is_told_to_use_a_file(monkeypatch: Any) -> None:
    import io
    import sys

    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BytesIO(b"{}\n")))
    containers.register("test-reads-twice", _ReadsTwice)
    try:
        with pytest.raises(InputError) as raised:
            ingest("-", format="test-reads-twice").collect()
    finally:
        containers.unregister("test-reads-twice")
    assert str(raised.value).startswith(
        "<stdin>: standard input or a pipe can be read once, and this input is being read a "
        "second time"
    )
    assert "write it to a file first" in str(raised.value)
