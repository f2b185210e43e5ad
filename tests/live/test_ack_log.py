"""The acknowledgement log: records re-decode exactly as received, a torn tail is cut off and
reported, compaction deletes what is scored, and the bound refuses rather than drops."""

from __future__ import annotations

import asyncio
import gzip
from pathlib import Path

import orjson
import pytest

from agent_eval.errors import OutputError
from agent_eval.live._ack_log import AckLog, AckLogFull, AckTooLarge
from agent_eval.live._ack_records import AckRecord, encode_record, read_segment, segment_header
from agent_eval.live._payloads import decode
from agent_eval.live._revisions import RevisionJournal

MIB = 1024 * 1024


def _json_body(trace: int, text: str = "hello") -> bytes:
    span = {
        "traceId": f"{trace:032x}",
        "spanId": f"{trace:016x}",
        "name": "chat",
        "startTimeUnixNano": "1700000000000000000",
        "endTimeUnixNano": "1700000001000000000",
        "attributes": [{"key": "gen_ai.operation.name", "value": {"stringValue": text}}],
    }
    request = {"resourceSpans": [{"scopeSpans": [{"spans": [span]}]}]}
    return orjson.dumps(request)


def _append(log: AckLog, body: bytes, coding: str | None = None) -> object:
    return asyncio.run(log.append("traces", "json", coding, body))


def test_records_read_back_and_decode_exactly_as_received(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=8 * MIB)
    log.start("run-1")
    plain, zipped = _json_body(1), gzip.compress(_json_body(2, "zipped"))
    _append(log, plain)
    _append(log, zipped, "gzip")
    log.close()  # two untracked records pin the segment: it stays
    (segment,) = sorted((tmp_path / "log").glob("*.seg"))
    found = read_segment(segment)
    assert found.run_id == "run-1" and found.torn_at is None
    assert [r.body for r in found.records] == [plain, zipped]
    assert [r.content_encoding for r in found.records] == [None, "gzip"]
    for record, original in zip(found.records, (plain, zipped), strict=True):
        kwargs = {"signal": "traces", "encoding": "json", "max_bytes": MIB}
        again = decode(record.body, content_encoding=record.content_encoding, **kwargs)
        coding = record.content_encoding
        assert again == decode(original, content_encoding=coding, **kwargs)  # type: ignore[arg-type]


@pytest.mark.parametrize("cut", [1, 5, 20, 24, 40, -1])
def test_a_record_cut_short_anywhere_is_cut_off_and_counted(tmp_path: Path, cut: int) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=8 * MIB)
    log.start("run-1")
    _append(log, _json_body(1))
    log.close()
    (segment,) = (tmp_path / "log").glob("*.seg")
    whole = segment.stat().st_size
    torn = encode_record(
        AckRecord(seq=2, signal="traces", encoding="json", content_encoding=None,
                  received_at="2026-01-01T00:00:00+00:00", body=_json_body(2))
    )  # fmt: skip
    with segment.open("ab") as handle:  # a kill while writing the next record
        handle.write(torn[:cut])
    again = AckLog.open(tmp_path / "log", max_bytes=8 * MIB)
    assert again.torn == [(segment, whole)]
    assert segment.stat().st_size == whole  # cut off: what follows can be read
    assert [r.seq for _, r in again.replay()] == [1]
    again.start("run-1")
    ack = asyncio.run(again.append("traces", "json", None, _json_body(3)))
    assert ack.seq == 2  # numbering continues after the whole records
    again.close()


def test_a_damaged_byte_fails_the_checksum(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=8 * MIB)
    log.start("run-1")
    _append(log, _json_body(1))
    _append(log, _json_body(2))
    log.close()
    (segment,) = (tmp_path / "log").glob("*.seg")
    data = bytearray(segment.read_bytes())
    data[-3] ^= 0xFF  # inside the second record's body
    segment.write_bytes(bytes(data))
    found = read_segment(segment)
    assert [r.seq for r in found.records] == [1] and found.torn_at is not None


def test_compaction_deletes_scored_segments_and_keeps_the_size_bounded(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=2 * MIB)  # segments of 1 MiB
    log.start("run-1")
    body = b"x" * (100 * 1024)
    peak = 0
    for n in range(200):  # 20 MiB in all, ten times the bound
        ack = _append(log, body)
        trace = f"{n:032x}"
        log.track(ack, [trace])  # type: ignore[arg-type]
        log.settle(log.snapshot([trace]))  # its conversation's rows are committed
        peak = max(peak, log.size)
        assert log.size <= log.max_bytes
    assert peak <= 2 * MIB and len(log.segments) <= 2
    log.close()
    assert not list((tmp_path / "log").glob("*.seg"))  # all scored: nothing left


def test_a_full_log_refuses_and_a_trace_still_unscored_keeps_its_segment(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=2 * MIB)
    log.start("run-1")
    body = b"x" * (300 * 1024)
    first = _append(log, body)
    log.track(first, ["a" * 32])  # type: ignore[arg-type]  # never scored
    with pytest.raises(AckLogFull, match="--max-log-mb"):
        for n in range(20):
            ack = _append(log, body)
            log.track(ack, [f"{n:032x}"])  # type: ignore[arg-type]
            log.settle(log.snapshot([f"{n:032x}"]))
    assert log.size <= log.max_bytes
    first_segment = min(log.segments)
    assert first_segment == 1 and (tmp_path / "log" / "0000000001.seg").exists()
    log.settle(log.snapshot(["a" * 32]))  # scored at last: its segment goes
    assert 1 not in log.segments
    log.close()


def test_a_body_larger_than_the_bound_is_too_large_not_full(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=MIB)
    log.start("run-1")
    with pytest.raises(AckTooLarge, match="raise --max-log-mb"):
        _append(log, b"z" * MIB)
    assert log.size < 200  # nothing of it was written
    log.close()


def test_a_new_record_of_a_settled_trace_makes_it_dirty_again(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=8 * MIB)
    log.start("run-1")
    trace = "b" * 32
    first = _append(log, _json_body(1))
    log.track(first, [trace])  # type: ignore[arg-type]
    snapshot = log.snapshot([trace])
    later = _append(log, _json_body(2))  # a late span arrives while revision 0 is scored
    log.track(later, [trace])  # type: ignore[arg-type]
    log.settle(snapshot)  # revision 0 committed: the late record is not scored yet
    assert log.dirty_traces == 1
    log.settle(log.snapshot([trace]))
    assert log.dirty_traces == 0


def test_concurrent_appends_share_syncs(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import os

    synced: list[int] = []
    real = os.fsync
    monkeypatch.setattr(os, "fsync", lambda fd: (synced.append(fd), real(fd))[1])
    log = AckLog.open(tmp_path / "log", max_bytes=64 * MIB)
    log.start("run-1")

    async def many() -> None:
        await asyncio.gather(*(log.append("traces", "json", None, b"y" * 1000) for _ in range(50)))

    asyncio.run(many())
    assert 1 <= len(synced) < 50  # group commit: one sync covers the requests written meanwhile
    log.close()


def test_a_second_serve_on_the_same_log_is_refused(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=MIB)
    with pytest.raises(OutputError, match="in use by another agent-eval run"):
        AckLog.open(tmp_path / "log", max_bytes=MIB)
    log.close()


def test_the_revision_journal_survives_a_torn_line_and_prunes(tmp_path: Path) -> None:
    path = tmp_path / "revisions.jsonl"
    journal = RevisionJournal(path)
    journal.add("c1", 0, "d0", ["t1"])
    journal.add("c1", 1, "d1", ["t1", "t2"])
    journal.add("c2", 0, "e0", ["t3"])
    journal.close()
    with path.open("ab") as handle:
        handle.write(b'{"conversation_id": "c3", "rev')  # killed mid-line
    again = RevisionJournal(path)
    assert again.revision_of("c1", "d1") == 1 and again.latest("c1") == 1
    assert again.latest("c3") == -1
    assert again.prune(lambda trace: trace == "t2") == 2  # c1@0 and c2@0 are unreferenced
    assert again.revision_of("c1", "d0") is None and again.revision_of("c1", "d1") == 1
    again.add("c4", 0, "f0", ["t2"])  # written whole after the cut-off line
    again.close()
    assert [orjson.loads(line)["conversation_id"] for line in path.read_bytes().splitlines()] == [
        "c1",
        "c4",
    ]


@pytest.mark.parametrize("written", [0, 5, 30])
def test_a_segment_killed_while_its_header_was_written_is_dropped(
    tmp_path: Path, written: int
) -> None:
    (tmp_path / "log").mkdir()
    cut = tmp_path / "log" / "0000000003.seg"
    cut.write_bytes(segment_header("run-1", 3)[:written])
    log = AckLog.open(tmp_path / "log", max_bytes=MIB)
    assert log.earlier_runs == [] and list(log.replay()) == []
    log.start("run-2")
    log.close()
    assert not cut.exists()


def _score(log: AckLog, n: int) -> None:
    """Log, hold and score (settle) trace ``n``, as a one-trace conversation."""
    trace = f"{n:032x}"
    log.track(_append(log, _json_body(n)), [trace])  # type: ignore[arg-type]
    log.settle(log.snapshot([trace]))


@pytest.mark.parametrize("index_traces", [None, 10])
def test_segments_retired_by_traces_take_their_index_with_them(
    tmp_path: Path, index_traces: int | None
) -> None:
    """Issue 33 item 3: without ``index_traces`` the index grows by every trace logged until a
    64 MiB segment fills; with it, scored traces' entries go once their segment is retired."""
    log = AckLog.open(tmp_path / "log", max_bytes=1024 * MIB, index_traces=index_traces)
    log.start("run-1")
    for n in range(100):
        _score(log, n)
    if index_traces is None:
        assert log.indexed_traces == 100 and log.compactions == 0
    else:  # the active segment's traces, at most, and the retired segments are gone
        assert log.indexed_traces <= index_traces and log.compactions >= 9
        assert len(log.segments) == 1
    log.close()


def test_an_unscored_trace_keeps_its_segment_and_index_until_scored(tmp_path: Path) -> None:
    log = AckLog.open(tmp_path / "log", max_bytes=1024 * MIB, index_traces=10)
    log.start("run-1")
    waiting = "a" * 32
    log.track(_append(log, _json_body(1000)), [waiting])  # type: ignore[arg-type]
    for n in range(30):
        _score(log, n)
    assert log.referenced(waiting) and 1 in log.segments
    assert log.indexed_traces <= 2 * 10 + 1  # its segment's traces, and the active one's
    log.settle(log.snapshot([waiting]))
    assert not log.referenced(waiting) and 1 not in log.segments
    log.close()
