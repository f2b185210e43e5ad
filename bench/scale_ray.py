"""Scale-out on Ray against one process: identical rows, start-up cost, throughput per worker.

Writes ``--conversations`` agent conversations over ``--files`` Collector files with split
conversations (:func:`agent_eval.testing._split_traffic.write_split_traffic`: every trace split
over files, every conversation over two traces and several files, tool spans without a
conversation id in other files), starts the fake OpenAI-compatible judge (``--latency-ms``)
answering goal accuracy with a distinct request per conversation (``--metric faithfulness``:
the claim-level metric, one row per answer, each answer decomposed into its sentences against
its tool result), then runs ``agent-eval score DIR`` in this process:

- baseline: the default engine (one process: read, assemble, score);
- ray with ``--workers 1`` and ``--workers 2``: ``--engine ray`` on one local cluster of 2
  CPUs (reading and both regroupings on Ray Data over both CPUs, scoring on that many actors).

The fixed cost is measured apart: the cluster's start (``ray.init``, once) and, per worker
count, a warm-up run over one file of ``--warmup`` conversations (actors started, Ray Data's
pipeline set up); the pipeline's throughput is the full run's conversations over its wall time
minus the warm-up's. Every run has its own judge-call cache (every call reaches the judge).
Prints the rows identical to one process (every field but run id, start time and latency;
for a claim-level metric also the pinned decompositions), and throughput per worker against
the baseline's, measured in the same run.

    python bench/scale_ray.py [--conversations 2000] [--files 20] [--latency-ms 20]
        [--concurrency 32] [--metric goal_accuracy|faithfulness]
"""

from __future__ import annotations

import argparse
import re
import shutil
import sqlite3
import tempfile
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import ClaimScript, FakeModelServer, RecordedRequest, Structured, Usage
from agent_eval.testing._split_traffic import write_split_traffic

MARKER = re.compile(r"#\d+#")
TIMES = {"run_id", "started_at", "latency_ms"}


def _infer(request: RecordedRequest) -> Structured:
    marker = MARKER.findall(request.text)[-1]
    return Structured({"user_goal": f"goal {marker}", "end_state": "done"}, usage=Usage(300, 30))


def _compare(request: RecordedRequest) -> Structured:
    return Structured({"reason": "compared", "verdict": "1"}, usage=Usage(120, 15))


def _score(inputs: Path, server: FakeModelServer, out: Path, args: Any, *extra: str) -> float:
    start = time.perf_counter()
    done = CliRunner().invoke(app, [
        "score", str(inputs), "--judge", "fake-model", "--base-url", server.base_url,
        "--out", str(out), "--cache-path", f"{out}-cache.db",
        "--concurrency", str(args.concurrency), "--metric", args.metric, *extra,
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
    inputs: Path, warmup: Path, server: FakeModelServer, tmp: Path, args: Any
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
            warm = _score(warmup, server, tmp / f"warm-{workers}", args, *ray_args)
            full = _score(inputs, server, tmp / f"ray-{workers}", args, *ray_args)
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
    parser.add_argument("--metric", default="goal_accuracy")
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scale-ray-"))
    try:
        inputs, warmup = tmp / "traffic", tmp / "warmup"
        write_split_traffic(inputs, args.conversations, args.files)
        write_split_traffic(warmup, args.warmup, 1)
        with FakeModelServer(latency=args.latency_ms / 1000) as server:
            server.add_rule(_infer, schema="GoalAndOutcome")
            server.add_rule(_compare, schema="OutcomeComparison")
            ClaimScript(usage=Usage(250, 40)).install(server)
            base = _score(inputs, server, tmp / "local", args)
            started, runs = _ray_runs(inputs, warmup, server, tmp, args)
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
    print(f"one process: {base:.1f} s, {len(local)} rows, {base_rate:.1f} conversations/s "
          f"(baseline)")  # fmt: skip
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
