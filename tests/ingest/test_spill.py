"""Spilling idle traces to disk keeps memory bounded and the output unchanged.

(The output is compared with the pre-spill golden output on every fixture in
``test_ingest_golden.py``; these tests check the mechanism itself.)
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import pytest

from agent_eval.ingest import assemble, ingest
from agent_eval.ingest.spill import SpillStore, StreamLimits

from .stream_traffic import write_traffic


@pytest.fixture
def traffic(tmp_path: Path) -> list[Path]:
    return write_traffic(tmp_path)


def _spill_dirs() -> set[str]:
    return {p.name for p in Path(tempfile.gettempdir()).glob("agent-eval-spill-*")}


@pytest.fixture
def own_tmpdir(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The spill directory goes under this test's own TMPDIR (others run in parallel)."""
    folder = tmp_path / "tmpdir"
    folder.mkdir()
    monkeypatch.setattr(tempfile, "tempdir", str(folder))
    return folder


def test_spilled_run_gives_the_in_memory_run(
    traffic: list[Path], monkeypatch: pytest.MonkeyPatch
) -> None:
    expected = [t.model_dump_json() for t in ingest(traffic)]
    parts: list[str] = []
    original = SpillStore.add_part

    def counting(self: SpillStore, trace_id: str, span_ids: list[str], part: object) -> None:
        parts.append(trace_id)
        original(self, trace_id, span_ids, part)

    monkeypatch.setattr(SpillStore, "add_part", counting)
    monkeypatch.setattr(assemble, "STREAM_LIMITS", StreamLimits(max_spans_in_memory=2, spill_to=0))
    run = ingest(traffic)
    assert [t.model_dump_json() for t in run] == expected
    assert run.report.balanced
    assert len(set(parts)) > 30  # most traces went to disk
    assert len(parts) > len(set(parts))  # traces spilled in parts, read back whole


def test_memory_holds_at_most_the_budget(traffic: list[Path]) -> None:
    from agent_eval.ingest.accounting import FileReport, IngestReport
    from agent_eval.ingest.containers.otlp_json import OtlpJsonContainer
    from agent_eval.ingest.spans import LogRecord, SpanRecord

    report = IngestReport()
    file = FileReport(path=str(traffic[0]))
    report.files.append(file)
    assembler = assemble.Assembler(report, StreamLimits(max_spans_in_memory=8, spill_to=0.5))
    most = 0
    for item in OtlpJsonContainer().read(str(traffic[0])):
        if isinstance(item, SpanRecord):
            file.spans_read += 1
            assembler.add_span(item, file)
            most = max(most, assembler._in_memory)
        elif isinstance(item, LogRecord):
            file.logs_read += 1
            assembler.add_log(item, file)
    assert most <= 8
    assert len(list(assembler.finish())) == 16
    assert report.balanced


def test_the_spill_directory_is_removed_when_done_or_abandoned(
    traffic: list[Path], monkeypatch: pytest.MonkeyPatch, own_tmpdir: Path
) -> None:
    before = _spill_dirs()
    assert before == set()
    monkeypatch.setattr(assemble, "STREAM_LIMITS", StreamLimits.tightest())
    assert len(ingest(traffic).collect()) == 16
    assert _spill_dirs() == before
    run = iter(ingest(traffic))
    next(run)
    assert len(_spill_dirs() - before) == 1  # in use while conversations are still coming
    run.close()  # type: ignore[attr-defined]
    assert _spill_dirs() == before
