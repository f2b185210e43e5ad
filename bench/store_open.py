"""Opening a large output directory: the results store at ``--rows`` rows vs reading its file.

Writes a run directory of ``--rows`` result rows (``results.db`` + ``results.jsonl``, through
:class:`~agent_eval.run._store.ResultStore`), then measures in CPU seconds (best of
``--repeats``; ``time.process_time``, so other load on the machine skews it less):

- baseline: reading ``results.jsonl`` (``read_bytes``) and ``orjson.loads`` of every line, the
  floor of anything that looks at every row once;
- open: ``ResultStore(DIR, exclusive=True)`` as ``score --resume`` / a new run into the same
  ``--out`` opens it (schema check, JSONL repair);
- open after a kill: the same with the JSONL's last line cut short (the repair path);
- resume keys: :func:`~agent_eval.run._runs.finished_results` of the run (what ``--resume``
  needs);
- all rows: :func:`~agent_eval.run._store.load_results` of the directory (what the usage
  summary and the reports read);

and prints each figure with its ratio to the baseline.

    python bench/store_open.py [--rows 100000] [--repeats 3]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from agent_eval._result import MetricResult
from agent_eval.run._runs import find_run, finished_results
from agent_eval.run._store import JSONL_NAME, ResultStore, RunRecord, load_results


def _row(i: int) -> MetricResult:
    return MetricResult(
        run_id="bench",
        conversation_id=f"conv-{i}",
        trace_ids=(f"{i:032x}",),
        metric="goal_accuracy@1",
        formatter="ragas-pretty@1",
        formatter_fingerprint="f" * 64,
        prompt_sha256="a" * 64,
        judge_model="gpt-4o-mini",
        status="ok",
        verdict="1" if i % 4 else "0",
        score=1.0 if i % 4 else 0.0,
        reason="The user got the forecast they asked for.",
        user_goal="Learn the weather today and tomorrow.",
        end_state="Gave both forecasts.",
        input_tokens=900,
        output_tokens=60,
        attempts=1,
        latency_ms=850.0,
        started_at="2026-01-01T00:00:00Z",
    )


def _cpu(repeats: int, work: Callable[[], object]) -> float:
    best = float("inf")
    for _ in range(repeats):
        start = time.process_time()
        work()
        best = min(best, time.process_time() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        run = Path(tmp) / "run"
        with ResultStore(run, exclusive=True) as store:
            store.start_run(RunRecord(run_id="bench", started_at="t", config={}))
            for i in range(args.rows):
                store.add(_row(i))
        jsonl = run / JSONL_NAME
        size = jsonl.stat().st_size

        def baseline() -> None:
            for line in jsonl.read_bytes().splitlines():
                orjson.loads(line)

        def open_store() -> None:
            ResultStore(run, exclusive=True).close()

        whole = jsonl.read_bytes()

        def open_after_kill() -> None:
            jsonl.write_bytes(whole[:-40])  # the last line cut short
            ResultStore(run, exclusive=True).close()

        figures = [
            ("read + orjson.loads every line (baseline)", _cpu(args.repeats, baseline)),
            ("open the store", _cpu(args.repeats, open_store)),
            ("open after a kill (last line cut)", _cpu(args.repeats, open_after_kill)),
            (
                "resume keys (finished_results)",
                _cpu(args.repeats, lambda: finished_results(find_run(str(run)))),
            ),
            ("all rows (load_results)", _cpu(args.repeats, lambda: load_results(run))),
        ]
        assert jsonl.read_bytes() == whole  # the repair restored the cut line
    base = figures[0][1]
    print(f"{args.rows:,} rows, results.jsonl {size / 1e6:.1f} MB; CPU s, best of {args.repeats}")
    for name, seconds in figures:
        print(f"{name:44} {seconds:8.3f} s {seconds / base:8.2f}x")


if __name__ == "__main__":
    main()
