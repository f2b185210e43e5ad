"""Ingest peak memory against the input size: bounded by the conversations in flight?

Generates Collector-style OTLP/JSON Lines files (``bench/ingest.py``'s traffic: ``--turns``
per conversation, ``--inflight`` conversations interleaved) of each ``--sizes`` MiB, ingests
each end to end in a fresh process and prints its peak RSS (``ru_maxrss``) and CPU time, with
two same-run baselines: the RSS of a process that only imports ingest, and ``orjson.loads``
of every line of the same file. The figure of merit (issue 15): from the smallest to the
largest input, RSS growth / file growth (goal: < 0.15).

    python bench/ingest_memory.py [--sizes 100 1000] [--turns 5] [--inflight 40]
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from ingest import generate  # bench/ingest.py

SPANS_PER_MIB = 955
"""About how many spans of this traffic make a MiB (5 turns; measured)."""


def _measure(kind: str, path: str) -> dict[str, Any]:
    import orjson

    from agent_eval.ingest import ingest

    cpu = time.process_time()
    count = 0
    if kind == "pipeline":
        run = ingest(path)
        count = sum(1 for _ in run)
        assert run.report.balanced
    elif kind == "baseline":
        with open(path, "rb") as stream:
            count = sum(len(orjson.loads(line)["resourceSpans"]) for line in stream)
    cpu = time.process_time() - cpu
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {"cpu": cpu, "peak_mib": peak, "count": count}


def _child(kind: str, path: Path) -> dict[str, Any]:
    proc = subprocess.run(
        [sys.executable, __file__, "--measure", kind, str(path)],
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, Any] = json.loads(proc.stdout)
    return result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000], help="MiB")
    parser.add_argument("--turns", type=int, default=5)
    parser.add_argument("--inflight", type=int, default=40)
    parser.add_argument("--measure", nargs=2, metavar=("KIND", "PATH"), help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.measure:
        print(json.dumps(_measure(args.measure[0], args.measure[1])))
        return
    rows = []
    with tempfile.TemporaryDirectory() as folder:
        for size in args.sizes:
            path = Path(folder) / f"spans-{size}.otlp.jsonl"
            n = generate(path, size * SPANS_PER_MIB * 5 // args.turns, args.turns, args.inflight)
            mib = path.stat().st_size / 2**20
            imports = _child("imports", path)
            base = _child("baseline", path)
            pipe = _child("pipeline", path)
            path.unlink()
            rows.append((mib, n, imports, base, pipe))
            print(
                f"{mib:7.0f} MiB, {n:>9,} spans, {pipe['count']:>7,} conversations: peak RSS "
                f"{pipe['peak_mib']:6.0f} MiB (imports alone {imports['peak_mib']:4.0f} MiB, "
                f"orjson.loads {base['peak_mib']:4.0f} MiB); CPU {pipe['cpu']:7.1f} s = "
                f"{pipe['cpu'] / base['cpu']:5.1f}x orjson.loads ({base['cpu']:5.1f} s)",
                flush=True,
            )
    (small, *_, large) = rows
    growth = (large[4]["peak_mib"] - small[4]["peak_mib"]) / (large[0] - small[0])
    print(
        f"RSS growth / file growth from {small[0]:.0f} to {large[0]:.0f} MiB: {growth:.3f} "
        "(goal < 0.15)"
    )


if __name__ == "__main__":
    main()
