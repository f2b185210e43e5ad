"""Scale-out on Ray against one process: identical rows, start-up cost, throughput per worker.

Writes ``--conversations`` agent conversations over ``--files`` Collector files with split
conversations (:func:`agent_eval.testing._split_traffic.write_split_traffic`: every trace split
over files, every conversation over two traces and several files, tool spans without a
conversation id in other files), starts the fake OpenAI-compatible judge in its own process
(``--latency-ms``; its CPU is not the driver's) answering goal accuracy with a distinct request
per conversation (``--metric faithfulness``: the claim-level metric, one row per answer, each
answer decomposed into its sentences against its tool result), then runs
``agent-eval score DIR`` in this process:

- baseline: the default engine (one process: read, assemble, score) with
  ``--baseline-concurrency`` conversations in flight (default ``--concurrency``);
- ray with ``--workers 1`` and ``--workers 2``: ``--engine ray`` on one local cluster of 2
  CPUs (reading and both regroupings as Ray tasks over both CPUs, scoring on that many
  actors; each actor scores at most 4 batches of 16 conversations at once, and the run's
  authority holds ``--concurrency`` judge calls in flight over all of them).

The fixed cost is measured apart: the cluster's start (``ray.init``, once) and, per worker
count, a warm-up run over one file of ``--warmup`` conversations (actors started, tasks'
processes warm); the pipeline's throughput is the full run's conversations over its wall time
minus the warm-up's. Every run has its own judge-call cache (every call reaches the judge).
Prints the rows identical to one process (every field but run id, start time and latency;
for a claim-level metric also the pinned decompositions), and throughput per worker against
the baseline's, measured in the same run.

Two regimes, both worth a run on a small machine:

- CPU-bound (the defaults: 20 ms judge): one process already keeps a core busy, and the driver,
  the judge and the workers share the machine's CPUs, so on 2 cores a second worker has no
  core of its own;
- latency-bound (``--latency-ms 1000 --concurrency 256 --baseline-concurrency 64``): each
  worker's conversations in flight (64) are its capacity, as a worker's own CPU is on a real
  cluster, and the authority's limit is above both; throughput per worker shows how the
  pipeline scales when the machine is not the limit.

    python bench/scale_ray.py [--conversations 2000] [--files 20] [--latency-ms 20]
        [--concurrency 32] [--baseline-concurrency N] [--metric goal_accuracy|faithfulness]
"""

from __future__ import annotations

import argparse
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing._process import server_process
from agent_eval.testing._split_traffic import write_split_traffic

TIMES = {"run_id", "started_at", "latency_ms"}

SERVER = r"""
import re, signal, sys, threading
from agent_eval.testing import ClaimScript, FakeModelServer, Structured, Usage

MARKER = re.compile(r"#\d+#")

def infer(request):
    marker = MARKER.findall(request.text)[-1]
    return Structured({"user_goal": f"goal {marker}", "end_state": "done"}, usage=Usage(300, 30))

def compare(request):
    return Structured({"reason": "compared", "verdict": "1"}, usage=Usage(120, 15))

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
with FakeModelServer(latency=float(sys.argv[1]) / 1000) as server:
    server.add_rule(infer, schema="GoalAndOutcome")
    server.add_rule(compare, schema="OutcomeComparison")
    ClaimScript(usage=Usage(250, 40)).install(server)
    print(server.base_url, flush=True)
    stop.wait()
"""


def _score(
    inputs: Path, base_url: str, out: Path, args: Any, *extra: str, concurrency: int | None = None
) -> float:
    start = time.perf_counter()
    done = CliRunner().invoke(app, [
        "score", str(inputs), "--judge", "fake-model", "--base-url", base_url,
        "--out", str(out), "--cache-path", f"{out}-cache.db",
        "--concurrency", str(concurrency or args.concurrency), "--metric", args.metric, *extra,
    ])  # fmt: skip
    wall = time.perf_counter() - start
    if done.exit_code != 0:
        raise SystemExit(f"score failed ({done.exit_code}):\n{done.output[-3000:]}")
    return wall


def _rows(out: Path) -> dict[tuple[str, str], dict[str, Any]]:
    rows = load_results(out)
    return {(r.conversation_id, r.unit_id): r.model_dump(mode="json", exclude=TIMES) for r in rows}


def _decompositions(out: Path) -> list[tuple[str, str]]:
    """The pinned decompositions of a claim-level run (``[]`` for other metrics)."""
    path = out / "decompositions.db"
    if not path.is_file():
        return []
    with sqlite3.connect(path) as db:
        return sorted(db.execute("SELECT key, atoms FROM decompositions").fetchall())


def _ray_runs(
    inputs: Path, warmup: Path, base_url: str, tmp: Path, args: Any
) -> tuple[float, dict[int, dict[str, float]]]:
    """The cluster's start, then per worker count its warm-up and full run's wall seconds."""
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=2, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - start
    runs = {}
    try:
        for workers in (1, 2):
            ray_args = ("--engine", "ray", "--workers", str(workers))
            warm = _score(warmup, base_url, tmp / f"warm-{workers}", args, *ray_args)
            full = _score(inputs, base_url, tmp / f"ray-{workers}", args, *ray_args)
            runs[workers] = {"warmup": warm, "full": full}
    finally:
        ray.shutdown()
    return started, runs


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--baseline-concurrency", type=int, default=None)
    parser.add_argument("--metric", default="goal_accuracy")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scale-ray-"))
    try:
        inputs, warmup = tmp / "traffic", tmp / "warmup"
        write_split_traffic(inputs, args.conversations, args.files)
        write_split_traffic(warmup, args.warmup, 1)
        with server_process(SERVER, str(args.latency_ms)) as base_url:
            base = _score(
                inputs, base_url, tmp / "local", args, concurrency=args.baseline_concurrency
            )
            started, runs = _ray_runs(inputs, warmup, base_url, tmp, args)
        _report(args, tmp, base, started, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _report(
    args: Any, tmp: Path, base: float, started: float, runs: dict[int, dict[str, float]]
) -> None:
    n = args.conversations
    local = _rows(tmp / "local")
    pinned = _decompositions(tmp / "local")
    print(f"{n} conversations over {args.files} files (split), metric {args.metric}, judge "
          f"latency {args.latency_ms:.0f} ms, --concurrency {args.concurrency}")  # fmt: skip
    base_rate = n / base
    concurrency = args.baseline_concurrency or args.concurrency
    print(f"one process (--concurrency {concurrency}): {base:.1f} s, {len(local)} rows, "
          f"{base_rate:.1f} conversations/s (baseline)")  # fmt: skip
    print(f"ray: local cluster of 2 CPUs started in {started:.1f} s (fixed)")
    for workers, run in runs.items():
        rows = _rows(tmp / f"ray-{workers}")
        same = sum(1 for key, row in local.items() if rows.get(key) == row)
        pipeline = run["full"] - run["warmup"]
        rate = n / pipeline
        decompositions = ""
        if pinned:
            equal = _decompositions(tmp / f"ray-{workers}") == pinned
            decompositions = f" decompositions pinned {len(pinned)}, identical: {equal};"
        print(
            f"ray, --workers {workers}: identical rows {same}/{len(local)} (of {len(rows)});"
            f"{decompositions} fixed cost {run['warmup']:.1f} s warm-up run; full run "
            f"{run['full']:.1f} s; pipeline {rate:.1f} conversations/s = {rate / workers:.1f} "
            f"per worker ({rate / workers / base_rate:.2f}x one process per worker, "
            f"{rate / base_rate:.2f}x one process)"
        )


if __name__ == "__main__":
    main()
