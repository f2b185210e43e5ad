"""Formatter throughput: each built-in's ``render`` against pydantic's ``model_dump_json``.

The workload is the probe set repeated (``--copies`` times), plus the tau2-bench airline run when
``../shared/data`` is present. For each locked formatter identity, prints conversations/s,
microseconds per message, the ratio of its render time to ``AgentTrace.model_dump_json`` of the
same traces (the baseline, measured in the same run: Rust-side JSON serialization), the
fingerprint time, and the o200k tokens per conversation it produces (what a judge pays for).

    python bench/formatter_render.py [--copies 200] [--repeats 5]
"""

from __future__ import annotations

import argparse
import time
from collections.abc import Callable
from pathlib import Path

from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace
from agent_eval.formatting import fingerprint, probe_set
from agent_eval.formatting._lock import lock_targets

TAU2 = Path(__file__).resolve().parents[2] / "shared/data/tau2-bench"


def workload(copies: int) -> list[AgentTrace]:
    traces = list(probe_set()) * copies
    if TAU2.is_dir():
        from agent_eval.ingest._pipeline import ingest

        traces += list(ingest(sorted(TAU2.glob("*.json")), format="tau2-bench"))
    return traces


def best_of(repeats: int, work: Callable[[], object]) -> float:
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        work()
        times.append(time.perf_counter() - start)
    return min(times)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__)
    parser.add_argument("--copies", type=int, default=200)
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    traces = workload(args.copies)
    messages = sum(len(t.messages) for t in traces)
    baseline = best_of(args.repeats, lambda: [t.model_dump_json() for t in traces])
    print(
        f"{len(traces)} conversations, {messages} messages; baseline model_dump_json "
        f"{baseline * 1e3:.1f} ms"
    )
    print(
        f"{'formatter':36} {'conv/s':>9} {'us/msg':>8} {'x baseline':>10} "
        f"{'fp ms':>7} {'tok/conv':>9}"
    )
    sample = traces[-20:]
    for identity, formatter in sorted(lock_targets().items()):
        elapsed = best_of(args.repeats, lambda f=formatter: [f.render(t) for t in traces])
        fp = best_of(args.repeats, lambda f=formatter: fingerprint(f))
        tokens = sum(count_tokens(formatter.render(t)) for t in sample) / len(sample)
        print(
            f"{identity:36} {len(traces) / elapsed:9.0f} {elapsed / messages * 1e6:8.1f} "
            f"{elapsed / baseline:10.2f} {fp * 1e3:7.1f} {tokens:9.0f}"
        )


if __name__ == "__main__":
    main()
