"""What honest usage and pricing cost: the no-usage estimate per call, and genai-prices lookups.

Prints, in one run, each against a baseline measured in the same run:

1. client CPU per judge call when the endpoint reports no ``usage`` (each row then counts the
   o200k tokens of its requests and replies) as a ratio to the same workload with usage
   reported. The encoder is loaded before either is measured, as ``score``'s plan loads it.
   The fake server runs in its own process; the two workloads alternate and the
   best of ``--rounds`` is kept for each, so machine load hits both alike;
2. the first price lookup in a fresh interpreter (imports genai-prices and reads its bundled
   data) as a ratio to the interpreter importing ``agent_eval._costs`` alone;
3. a warm price lookup (``PriceTable().price``, memoised per model) as a ratio to a plain dict
   lookup.

Usage::

    .venv/bin/python bench/usage_accounting.py [--n 400] [--concurrency 32] [--rounds 3]
"""

from __future__ import annotations

import argparse
import asyncio
import subprocess
import sys
import time
import timeit
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from agent_eval.testing._process import server_process

MODEL = "gpt-4o-mini"
SERVER = r"""
import re, signal, sys, threading
from agent_eval.testing import NO_USAGE, FakeModelServer, Structured, Usage

def reply(request):
    found = re.search(r"restaurant #(\d+)", request.text)
    number = found.group(1) if found else "?"
    usage = NO_USAGE if "NO-USAGE" in request.text else Usage(300, 20)
    return Structured({"user_goal": f"Book a table at restaurant #{number}",
                       "end_state": f"A table was booked at restaurant #{number}",
                       "reason": "The booking matches the request.", "verdict": "1"},
                      usage=usage)

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
with FakeModelServer(default=reply, models=("gpt-4o-mini",)) as server:
    print(server.base_url, flush=True)
    stop.wait()
"""


@contextmanager
def fake_server() -> Iterator[str]:
    """The fake server in its own process (its CPU is not this process's); its base URL."""
    with server_process(SERVER) as base_url:
        yield base_url


def conversations(n: int, marker: str, round_no: int) -> list[Any]:
    """``n`` distinct conversations; ``marker`` in the text selects the reply's usage."""
    from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage

    return [
        AgentTrace(
            conversation_id=f"c{round_no}-{i}",
            messages=(
                UserMessage(content=f"{marker} Please book a table at restaurant #{i}-{round_no}."),
                AssistantMessage(content=f"Done: booking reference R{i:05d}."),
            ),
        )
        for i in range(n)
    ]


async def _score(base_url: str, traces: list[Any], concurrency: int) -> tuple[int, int, bool]:
    from agent_eval.formatting import get_formatter
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.metrics._goal_accuracy import GoalAccuracy
    from agent_eval.run._engine import Engine

    async with OpenAIJudge(MODEL, base_url=base_url, api_key="bench-key", timeout=30) as judge:
        engine = Engine(metric=GoalAccuracy(), formatter=get_formatter("ragas-pretty@1"),
                        judge=judge, concurrency=concurrency)  # fmt: skip
        summary = await engine.run(traces, total=len(traces))
    return summary.judge_calls, summary.scored, summary.usage_unknown == summary.input


def cpu_per_call(base_url: str, traces: list[Any], concurrency: int) -> tuple[float, bool]:
    """Client CPU seconds per judge call, and whether every row had unknown usage."""
    cpu = time.process_time()
    calls, scored, unknown = asyncio.run(_score(base_url, traces, concurrency))
    cpu = time.process_time() - cpu
    if scored != len(traces):
        raise RuntimeError(f"only {scored} of {len(traces)} scored")
    return cpu / calls, unknown


def fresh_interpreter_seconds(code: str, repeats: int = 5) -> float:
    """Best wall time of ``python -c code`` over ``repeats`` runs."""
    best = float("inf")
    for _ in range(repeats):
        start = time.perf_counter()
        subprocess.run([sys.executable, "-c", code], check=True)
        best = min(best, time.perf_counter() - start)
    return best


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--n", type=int, default=400, help="conversations per workload")
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()

    from agent_eval._tokens import count_tokens

    load = time.perf_counter()
    count_tokens("load the o200k ranks")  # once per process; `score` plans with it anyway
    load = time.perf_counter() - load
    known: list[float] = []
    unknown: list[float] = []
    with fake_server() as base_url:
        cpu_per_call(base_url, conversations(20, "WARMUP", 99), args.concurrency)
        for round_no in range(args.rounds):
            cpu, flag = cpu_per_call(base_url, conversations(args.n, "USAGE", round_no),
                                     args.concurrency)  # fmt: skip
            assert not flag
            known.append(cpu)
            cpu, flag = cpu_per_call(base_url, conversations(args.n, "NO-USAGE", round_no),
                                     args.concurrency)  # fmt: skip
            assert flag, "the fake server was to omit usage"
            unknown.append(cpu)
    base, est = min(known), min(unknown)
    print(f"1. client CPU per judge call, usage reported (baseline): {base * 1e3:.3f} ms")
    print(f"   usage not reported (o200k estimate per row):          {est * 1e3:.3f} ms")
    print(f"   ratio {est / base:.2f}x over {args.rounds} rounds of {args.n} conversations")
    print(f"   (o200k encoder loaded once before, as the run's plan does: {load:.3f} s)")

    costs_only = fresh_interpreter_seconds("import agent_eval._costs")
    first_price = fresh_interpreter_seconds(
        "from agent_eval._costs import PriceTable; PriceTable().price('gpt-4o-mini')"
    )
    print(f"2. fresh interpreter, import agent_eval._costs (baseline): {costs_only:.3f} s")
    print(f"   same + first genai-prices lookup:                     {first_price:.3f} s")
    print(f"   ratio {first_price / costs_only:.2f}x (+{first_price - costs_only:.3f} s once)")

    from agent_eval._costs import PriceTable

    table, plain = PriceTable(), {"gpt-4o-mini": 1}
    table.price("gpt-4o-mini")
    n = 200_000
    warm = min(timeit.repeat(lambda: table.price("gpt-4o-mini"), number=n, repeat=3)) / n
    base_lookup = min(timeit.repeat(lambda: plain.get("gpt-4o-mini"), number=n, repeat=3)) / n
    print(f"3. warm price lookup: {warm * 1e9:.0f} ns; dict lookup (baseline) "
          f"{base_lookup * 1e9:.0f} ns; ratio {warm / base_lookup:.1f}x")  # fmt: skip


if __name__ == "__main__":
    main()
