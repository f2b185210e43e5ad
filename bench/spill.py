"""What a spilled span entry costs: the spill store's round trip against plain pickle.

On a file larger than the in-memory budget nearly every span entry is written to the spill
store and read back once at the end (``agent_eval/ingest/_spill.py``), so that round trip is paid
per span. This bench ingests ``bench/ingest.py``'s traffic once, keeping every part the
assembler spills, then measures in this process, CPU time, best of ``--repeats``:

- baseline: ``pickle.dumps`` + ``pickle.loads`` of the same parts (the spilled form before the
  compact one: the generic pickling of every object);
- pickler: the spill store's own pickler (compact forms) + ``pickle.loads``, no database;
- store: ``SpillStore.add_parts`` per spill, then ``SpillStore.parts`` per trace (SQLite
  included: what ingest pays).

It prints microseconds per spilled entry and each ratio to the baseline, and checks that
every part reads back equal to what was spilled.

    python bench/spill.py [--spans 30000] [--turns 5] [--inflight 40] [--budget 2000]
"""

from __future__ import annotations

import argparse
import gc
import pickle
import sys
import tempfile
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from ingest import generate  # bench/ingest.py

Batch = list[tuple[str, list[str], Any]]


def _spilled(path: Path, budget: int) -> list[Batch]:
    """Every batch of parts an ingest of ``path`` spills with ``budget`` entries in memory."""
    from agent_eval.ingest import _assemble as assemble
    from agent_eval.ingest import ingest
    from agent_eval.ingest._spill import SpillStore, StreamLimits

    batches: list[Batch] = []
    original = SpillStore.add_parts

    def keeping(self: SpillStore, parts: Iterable[tuple[str, list[str], Any]]) -> None:
        batch = list(parts)
        batches.append(batch)
        original(self, batch)

    limits = assemble.STREAM_LIMITS
    SpillStore.add_parts = keeping  # type: ignore[method-assign]
    assemble.STREAM_LIMITS = StreamLimits(max_spans_in_memory=budget)
    try:
        run = ingest(path)
        sum(1 for _ in run)
        assert run.report.balanced
    finally:
        SpillStore.add_parts = original  # type: ignore[method-assign]
        assemble.STREAM_LIMITS = limits
    return batches


def _best(fn: Callable[[], object], repeats: int) -> float:
    best = float("inf")
    for _ in range(repeats):
        cpu = time.process_time()
        fn()
        best = min(best, time.process_time() - cpu)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spans", type=int, default=30_000)
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--inflight", type=int, default=40)
    parser.add_argument("--budget", type=int, default=2_000, help="span entries kept in memory")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()

    from agent_eval.ingest._spill import CompactPickler, SpillStore

    with tempfile.TemporaryDirectory() as folder:
        path = Path(folder) / "spans.otlp.jsonl"
        n = generate(path, args.spans, args.turns, args.inflight)
        batches = _spilled(path, args.budget)
    parts = [part for batch in batches for _, _, part in batch]
    traces = list(dict.fromkeys(trace_id for batch in batches for trace_id, _, _ in batch))
    entries = sum(len(span_ids) for batch in batches for _, span_ids, _ in batch)
    print(
        f"{n} spans ({args.turns} turns, {args.inflight} in flight), budget {args.budget}: "
        f"{entries} entries spilled in {len(parts)} parts of {len(traces)} traces, "
        f"{len(batches)} spills"
    )
    gc.disable()  # as ingest runs: only young collections; here none, for steady figures

    blobs = [pickle.dumps(p, pickle.HIGHEST_PROTOCOL) for p in parts]
    pickler = CompactPickler()
    compact = [pickler.dumps(p) for p in parts]

    def store_round_trip() -> None:
        spill = SpillStore()
        try:
            for batch in batches:
                spill.add_parts(batch)
            for trace_id in traces:
                spill.parts(trace_id)
        finally:
            spill.close()

    check = SpillStore()
    try:
        for batch in batches:
            check.add_parts(batch)
        back = [p for trace_id in traces for p in check.parts(trace_id)]
    finally:
        check.close()
    by_trace: dict[str, list[Any]] = {}
    for batch in batches:
        for trace_id, _, part in batch:
            by_trace.setdefault(trace_id, []).append(part)
    assert back == [p for trace_id in traces for p in by_trace[trace_id]], "read back differs"

    rows = {
        "baseline": (
            _best(lambda: [pickle.dumps(p, pickle.HIGHEST_PROTOCOL) for p in parts], args.repeats),
            _best(lambda: [pickle.loads(b) for b in blobs], args.repeats),
        ),
        "pickler": (
            _best(lambda: [pickler.dumps(p) for p in parts], args.repeats),
            _best(lambda: [pickle.loads(b) for b in compact], args.repeats),
        ),
        "store": (_best(store_round_trip, args.repeats), 0.0),
    }
    base = sum(rows["baseline"])
    print("best of repeats; CPU time per spilled entry (write + read)")
    for kind, (write, read) in rows.items():
        total = write + read
        split = f" (write {write / entries * 1e6:5.1f} + read {read / entries * 1e6:5.1f})"
        print(
            f"{kind:9} {total / entries * 1e6:6.1f} us"
            + (split if read else " (SQLite included)" + " " * 20)
            + f"  {total / base:5.2f}x baseline"
        )
    print(f"bytes per entry: baseline {sum(map(len, blobs)) / entries:.0f}, "
          f"compact {sum(map(len, compact)) / entries:.0f}")  # fmt: skip


if __name__ == "__main__":
    main()
