"""Issue 33 item 3: the acknowledgement log's index and revision journal within
``--max-buffer-mb``. Mechanisms only (the RSS figures are ``bench/live_soak.py``'s): serve
retires a segment every ``index_traces_for(bound)`` traces, a retired segment whose
conversations are scored is deleted with its index, its journal entries and the revision
counters this process kept for them, and the buffer is given the bound less that share and
the receiver's working reserve."""

from __future__ import annotations

import asyncio
from pathlib import Path

from agent_eval._trace import AgentTrace
from agent_eval.formatting._registry import get_formatter
from agent_eval.live._ack_log import TRACE_INDEX_BYTES, AckLog
from agent_eval.live._durable import INDEX_SHARE, Durability, index_traces_for
from agent_eval.live._receiver import (
    WORKING_BYTES,
    Receiver,
    ReceiverLimits,
    working_bytes_for,
)
from agent_eval.live._revisions import REVISIONS_NAME
from agent_eval.live._scorer import Job, LiveScorer
from agent_eval.metrics._tool_errors import ToolErrors
from agent_eval.run._engine import Engine

MIB = 1024 * 1024


def _conversation(durable: Durability, n: int) -> None:
    """Log, hold, close, gate and commit conversation ``n`` (one trace), as serve does."""
    log, trace = durable.log, f"{n:032x}"
    ack = asyncio.run(log.append("traces", "json", None, b"{}"))
    log.track(ack, [trace])
    job = durable.gate(Job(AgentTrace(conversation_id=f"conv-{n}", trace_ids=(trace,))))
    assert job is not None and job.revision == 0
    durable.closed([trace])
    durable.committed(job)


def test_the_index_share_of_the_bound(tmp_path: Path) -> None:
    assert index_traces_for(8 * MIB) == 512 and index_traces_for(256 * MIB) == 16_384
    assert index_traces_for(1000) == 1
    log = AckLog.open(tmp_path / "ack-log", max_bytes=MIB, index_traces=index_traces_for(8 * MIB))
    durable = Durability(log, [])
    assert durable.index_bytes == 8 * MIB // INDEX_SHARE == 2 * 512 * TRACE_INDEX_BYTES
    durable.close()
    unbounded = Durability(AckLog.open(tmp_path / "other", max_bytes=MIB), [])
    assert unbounded.index_bytes == 0
    unbounded.close()


def test_scored_conversations_leave_the_index_the_journal_and_the_counters(
    tmp_path: Path,
) -> None:
    log = AckLog.open(tmp_path / "ack-log", max_bytes=1024 * MIB, index_traces=16)
    durable = Durability(log, [])
    log.start("run-1")
    for n in range(200):
        _conversation(durable, n)
        assert log.indexed_traces <= 16
        assert len(durable.journal.entries) <= 32 and len(durable.given) <= 32
    assert log.compactions >= 12
    lines = (tmp_path / "ack-log" / REVISIONS_NAME).read_bytes().splitlines()
    assert len(lines) <= 64  # rewritten as it is pruned
    durable.close()


def test_without_retiring_by_traces_everything_stays_indexed(tmp_path: Path) -> None:
    """The state before issue 33's fix: a 64 MiB segment holds every conversation's entries."""
    log = AckLog.open(tmp_path / "ack-log", max_bytes=1024 * MIB)
    durable = Durability(log, [])
    log.start("run-1")
    for n in range(200):
        _conversation(durable, n)
    assert log.indexed_traces == 200 and len(durable.given) == 200
    durable.close()


def test_the_receiver_gives_the_buffer_the_bound_less_the_index_share_and_working_reserve(
    tmp_path: Path,
) -> None:
    log = AckLog.open(tmp_path / "ack-log", max_bytes=MIB, index_traces=index_traces_for(8 * MIB))
    durable = Durability(log, [])
    formatter = get_formatter("transcript@1")
    engine = Engine(metric=ToolErrors(), formatter=formatter, judge=None, run_id="run-1")
    scorer = LiveScorer(engine, None)
    limits = ReceiverLimits(max_buffer_bytes=8 * MIB, working_bytes=working_bytes_for(8 * MIB))
    receiver = Receiver(scorer, limits, tmp_path / "out", durable=durable)
    spans = 8 * MIB - 8 * MIB // INDEX_SHARE - WORKING_BYTES
    assert receiver.buffer.max_bytes == spans == 4 * MIB
    assert working_bytes_for(2 * MIB) == MIB  # at most half a small bound
    receiver.evicted.close()
    durable.close()
