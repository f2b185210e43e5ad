"""CPU cost of the steering detector per conversation, against rendering it (same run).

Every result row carries its unit's steering flags, so a scoring run reads each conversation
once with :func:`agent_eval.steering.detect` (cached per trace object). This prints the CPU
time per conversation of ``detect`` and, as the same-run baseline, of rendering the same
conversation with ``ragas-pretty@1`` (which every judged metric does), best of ``--repeats``.

    python bench/steering_detect.py [../shared/data/tau-bench ../shared/data/tau2-bench ...]
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest import ingest
from agent_eval.steering import detect

ROOT = Path(__file__).resolve().parents[1]


def best(fn: Callable[[AgentTrace], Any], traces: list[AgentTrace], repeats: int) -> float:
    """Least CPU seconds of ``fn`` over every trace, of ``repeats`` rounds."""
    times = []
    for _ in range(repeats):
        start = time.process_time()
        for trace in traces:
            fn(trace)
        times.append(time.process_time() - start)
    return min(times)


def main(argv: list[str] | None = None) -> None:
    """Read the inputs, time both, print per conversation and the ratio."""
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("inputs", type=Path, nargs="*", default=[ROOT / "fixtures" / "otel"])
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args(argv)
    traces = list(ingest(args.inputs))
    chars = sum(len(m.content) for t in traces for m in t.messages)
    render = best(get_formatter("ragas-pretty@1").render, traces, args.repeats)
    found = best(detect, traces, args.repeats)
    n = len(traces)
    print(f"{n} conversations, {chars} characters of message content")
    print(f"render ragas-pretty@1 (baseline): {render / n * 1000:.2f} ms CPU per conversation")
    per_char = found / chars * 1e6
    print(f"steering detect: {found / n * 1000:.2f} ms CPU per conversation")
    print(f"  {per_char:.2f} us per character, {found / render:.0f}x the rendering")


if __name__ == "__main__":
    main(sys.argv[1:])
