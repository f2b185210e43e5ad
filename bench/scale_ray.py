"""Scale-out on Ray against one process: identical rows, start-up cost, throughput per worker.

Writes ``--conversations`` agent conversations over ``--files`` Collector files with split
conversations (:func:`agent_eval.testing._split_traffic.write_split_traffic`: every trace split
over files, every conversation over two traces and several files, tool spans without a
conversation id in other files), starts the fake OpenAI-compatible judge (``--latency-ms``)
answering goal accuracy with a distinct request per conversation, then runs ``agent-eval score
DIR`` in this process:

- baseline: the default engine (one process: read, assemble, score);
- ray with 1 worker and with 2 workers: ``--engine ray`` on a local cluster of that many
  CPUs (reading and both regroupings on Ray Data, scoring on that many actors).

Each Ray configuration's fixed cost is measured apart: the cluster's start (``ray.init``) and
a warm-up run over one file of ``--warmup`` conversations (actors started, Ray Data's
pipeline set up); the pipeline's throughput is the full run's conversations over its wall time
minus the warm-up's. Every run has its own judge-call cache (every call reaches the judge).
Prints the rows identical to one process (every field but run id, start time and latency),
and throughput per worker against the baseline's, measured in the same run.

    python bench/scale_ray.py [--conversations 2000] [--files 20] [--latency-ms 20]
        [--concurrency 32]
"""

from __future__ import annotations

import argparse
import re
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured, Usage
from agent_eval.testing._split_traffic import write_split_traffic

MARKER = re.compile(r"#\d+#")
TIMES = {"run_id", "started_at", "latency_ms"}


def _infer(request: RecordedRequest) -> Structured:
    marker = MARKER.findall(request.text)[-1]
    return Structured({"user_goal": f"goal {marker}", "end_state": "done"}, usage=Usage(300, 30))


def _compare(request: RecordedRequest) -> Structured:
    return Structured({"reason": "compared", "verdict": "1"}, usage=Usage(120, 15))


def _score(
    inputs: Path, server: FakeModelServer, out: Path, concurrency: int, *extra: str
) -> float:
    start = time.perf_counter()
    done = CliRunner().invoke(app, [
        "score", str(inputs), "--judge", "fake-model", "--base-url", server.base_url,
        "--out", str(out), "--cache-path", f"{out}-cache.db", "--concurrency", str(concurrency),
        *extra,
    ])  # fmt: skip
    wall = time.perf_counter() - start
    if done.exit_code != 0:
        raise SystemExit(f"score failed ({done.exit_code}):\n{done.output[-3000:]}")
    return wall


def _rows(out: Path) -> dict[str, dict[str, Any]]:
    return {r.conversation_id: r.model_dump(mode="json", exclude=TIMES) for r in load_results(out)}


def _ray_run(
    workers: int, inputs: Path, warmup: Path, server: FakeModelServer, tmp: Path, args: Any
) -> dict[str, float]:
    import ray

    start = time.perf_counter()
    ray.init(num_cpus=workers, include_dashboard=False, log_to_driver=False)
    started = time.perf_counter() - start
    try:
        warm = _score(warmup, server, tmp / f"warm-{workers}", args.concurrency, "--engine", "ray")
        full = _score(inputs, server, tmp / f"ray-{workers}", args.concurrency, "--engine", "ray")
    finally:
        ray.shutdown()
    return {"init": started, "warmup": warm, "full": full}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--conversations", type=int, default=2000)
    parser.add_argument("--files", type=int, default=20)
    parser.add_argument("--warmup", type=int, default=20)
    parser.add_argument("--latency-ms", type=float, default=20.0)
    parser.add_argument("--concurrency", type=int, default=32)
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="scale-ray-"))
    try:
        inputs, warmup = tmp / "traffic", tmp / "warmup"
        write_split_traffic(inputs, args.conversations, args.files)
        write_split_traffic(warmup, args.warmup, 1)
        with FakeModelServer(latency=args.latency_ms / 1000) as server:
            server.add_rule(_infer, schema="GoalAndOutcome")
            server.add_rule(_compare, schema="OutcomeComparison")
            base = _score(inputs, server, tmp / "local", args.concurrency)
            runs = {k: _ray_run(k, inputs, warmup, server, tmp, args) for k in (1, 2)}
        _report(args, tmp, base, runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


def _report(args: Any, tmp: Path, base: float, runs: dict[int, dict[str, float]]) -> None:
    n = args.conversations
    local = _rows(tmp / "local")
    print(f"{n} conversations over {args.files} files (split), judge latency "
          f"{args.latency_ms:.0f} ms, --concurrency {args.concurrency}")  # fmt: skip
    base_rate = n / base
    print(f"one process: {base:.1f} s, {base_rate:.1f} conversations/s (baseline)")
    for workers, run in runs.items():
        rows = _rows(tmp / f"ray-{workers}")
        same = sum(1 for cid, row in local.items() if rows.get(cid) == row)
        pipeline = run["full"] - run["warmup"]
        rate = n / pipeline
        print(
            f"ray, {workers} worker(s): identical rows {same}/{n} (of {len(rows)}); fixed cost "
            f"{run['init']:.1f} s cluster start + {run['warmup']:.1f} s warm-up run; full run "
            f"{run['full']:.1f} s; pipeline {rate:.1f} conversations/s = {rate / workers:.1f} "
            f"per worker ({rate / workers / base_rate:.2f}x one process per worker, "
            f"{rate / base_rate:.2f}x one process)"
        )


if __name__ == "__main__":
    main()
