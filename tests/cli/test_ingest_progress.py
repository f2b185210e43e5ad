"""A long ingest shows progress on stderr when it is a terminal, nothing when not (trial8 #11).

The terminal is a real pseudo-terminal (``pty``), so rich decides from ``isatty`` as it does for
a user; the non-terminal case is the CLI's own stderr under ``CliRunner``, as in CI logs.
"""

from __future__ import annotations

import gzip
import os
import pty
import re
import select
from pathlib import Path

import orjson
from rich.console import Console
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._ingest_progress import ingest_progress, progress_line
from agent_eval.ingest import FileReport, IngestReport, ingest, open_input
from agent_eval.ingest import _sources as sources
from agent_eval.testing._otlp import export_request, span

_ANSI = re.compile(r"\x1b\[[0-9;?]*[A-Za-z]")


def spans_file(path: Path, count: int) -> Path:
    """``count`` JSON Lines of one GenAI chat span each (a trace per line)."""
    lines = []
    for i in range(count):
        parts = [{"role": "user", "parts": [{"type": "text", "content": f"q{i}"}]}]
        out = [{"role": "assistant", "parts": [{"type": "text", "content": f"a{i}"}]}]
        attributes = {"gen_ai.operation.name": "chat", "gen_ai.request.model": "m",
                      "gen_ai.input.messages": orjson.dumps(parts).decode(),
                      "gen_ai.output.messages": orjson.dumps(out).decode()}  # fmt: skip
        request = export_request([span(f"{i + 1:032x}", f"{i + 1:016x}", "chat m", kind=3,
                                       attributes=attributes)])  # fmt: skip
        lines.append(orjson.dumps(request))
    path.write_bytes(b"\n".join(lines) + b"\n")
    return path


def test_the_line_names_the_file_its_bytes_read_of_its_size_and_the_counts(
    tmp_path: Path,
) -> None:
    path = spans_file(tmp_path / "spans.otlp.jsonl", 40)
    size = path.stat().st_size
    report = IngestReport(files=[FileReport(path=str(path), spans_read=7)], inputs=3)
    try:
        with open_input(str(path)) as stream:
            first = stream.readline()
            half = stream.read(size // 2 - len(first))
            assert len(first) + len(half) == size // 2
            line = progress_line(report)
    finally:
        sources.release(str(path))
    kb = f"{size / 1000:.1f} KB"
    assert line == (
        f"reading file 1/3 {path}: {size // 2 / 1000:.1f} KB of {kb} (50%); 7 spans, "
        "0 conversations"
    )


def test_a_gzipd_file_shows_its_compressed_bytes_of_its_stored_size(tmp_path: Path) -> None:
    plain = spans_file(tmp_path / "spans.otlp.jsonl", 1000)
    path = tmp_path / "spans.otlp.jsonl.gz"
    path.write_bytes(gzip.compress(plain.read_bytes()))
    report = IngestReport(files=[FileReport(path=str(path))], inputs=1)
    try:
        with open_input(str(path)) as stream:
            while stream.read(4096):  # to the end: every stored byte read
                pass
            line = progress_line(report)
    finally:
        sources.release(str(path))
    stored = f"{path.stat().st_size / 1000:.1f} KB"
    assert line == f"reading file 1/1 {path}: {stored} of {stored} (100%); 0 spans, 0 conversations"


def test_progress_is_drawn_on_a_terminal_and_erased(tmp_path: Path) -> None:
    path = spans_file(tmp_path / "spans.otlp.jsonl", 300)
    master, slave = pty.openpty()
    try:
        with os.fdopen(slave, "w", closefd=True) as terminal:
            console = Console(file=terminal, width=400)
            assert console.is_terminal  # decided by isatty, as for a user's shell
            run = ingest(path)
            with ingest_progress(run.report, console):
                traces = list(run)
            terminal.flush()
            drawn = b""
            while select.select([master], [], [], 0.5)[0]:
                drawn += os.read(master, 65536)
    finally:
        os.close(master)
    assert len(traces) == 300
    text = _ANSI.sub("", drawn.decode())
    # how many redraws happen while reading depends on the machine; the last one is fixed
    assert text.rstrip().rsplit("\r", 1)[-1] == "read 1/1 file(s); 300 spans, 300 conversations"
    assert "\x1b[2K" in drawn.decode()  # the line is erased when the inputs are read


def test_no_progress_when_stderr_is_not_a_terminal(tmp_path: Path) -> None:
    path = spans_file(tmp_path / "spans.otlp.jsonl", 50)
    out = tmp_path / "out.jsonl"
    result = CliRunner().invoke(app, ["ingest", str(path), "--out", str(out)])
    assert result.exit_code == 0, result.output
    assert "reading" not in result.stderr and "\x1b" not in result.stderr
    assert result.stderr.startswith("ingested 1 file(s): 50 spans, 0 log records -> 50 conv")
    assert len(out.read_text().splitlines()) == 50
