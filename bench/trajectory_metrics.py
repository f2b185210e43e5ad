"""Judge-free trajectory metrics over many conversations, against baselines from the same run.

Builds ``--conversations`` synthetic AgentTraces (default 100,000) shaped like tau-bench
airline runs: ``--calls`` agent tool calls each (nested arguments, an error result now and then,
a repeated call now and then) and a reference of ``--reference`` gold calls, most of them made.
Then measures, in CPU seconds (best of ``--repeats``; other load on the machine does not skew the
ratios):

- baseline ``naive``: the least any implementation must do for ``tool_call_accuracy``: for each
  conversation, list the calls and match the reference one to one with Python ``==`` (exact
  arguments, any order); no atoms, no result rows;
- each metric's ``evaluate`` alone, for every conversation (``tool_call_accuracy`` strict and
  ``[order=any,args=subset]``, ``trajectory_match``, ``tool_errors``, ``loops``);
- baseline ``engine floor``: the engine (in memory, no store) with a judge-free metric that
  returns a constant, i.e. the protocol's own cost per row;
- the four metrics through the engine (in memory), and through ``score``'s path with the store
  (``results.jsonl`` + SQLite), as ``agent-eval score --metric ...`` runs them.

    python bench/trajectory_metrics.py [--conversations 100000] [--calls 8] [--reference 6]
        [--repeats 1]
"""

from __future__ import annotations

import argparse
import asyncio
import resource
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Message,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import CallTally, Metric, MetricInput, MetricOutcome
from agent_eval.metrics._spec import build_metric
from agent_eval.metrics._tool_calls import JudgeFreeMetric
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore

TOOLS = ("get_user_details", "get_reservation_details", "search_direct_flight", "book", "cancel")
METRICS = (
    "tool_call_accuracy",
    "tool_call_accuracy[order=any,args=subset]",
    "trajectory_match",
    "tool_errors",
    "loops",
)
ENGINE_METRICS = ("tool_call_accuracy", "trajectory_match", "tool_errors", "loops")


def _call(conv: int, k: int) -> ToolCall:
    name = TOOLS[(conv + k) % len(TOOLS)]
    arguments = {
        "user_id": f"user_{conv % 997}",
        "reservation_id": f"R{(conv * 31 + k) % 10_000:05d}",
        "passengers": [{"first_name": "Ann", "dob": "1990-01-01"}, {"first_name": "Bo"}],
        "amount": 100 + k,
    }
    return ToolCall.model_construct(id=f"call_{conv}_{k}", name=name, arguments=arguments)


def make_traces(n: int, calls: int, reference: int) -> list[AgentTrace]:
    """``n`` conversations; every 7th repeats a call, every 5th has an error result."""
    traces = []
    for conv in range(n):
        made = [_call(conv, k) for k in range(calls)]
        if conv % 7 == 0:
            made[-1] = made[0].model_copy(update={"id": f"call_{conv}_again"})
        messages: list[Message] = [UserMessage.model_construct(content="change my flight")]
        for k, call in enumerate(made):
            messages.append(AssistantMessage.model_construct(tool_calls=(call,)))
            error = conv % 5 == 0 and k == 2
            messages.append(
                ToolMessage.model_construct(
                    content="Error: not available" if error else '{"status": "ok"}',
                    tool_call_id=call.id,
                    tool_name=call.name,
                    is_error=error or None,
                )
            )
        messages.append(AssistantMessage.model_construct(content="Done."))
        gold = [_call(conv, k) for k in range(reference)]
        if conv % 3 == 0:
            gold[1] = gold[1].model_copy(update={"arguments": {"reservation_id": "OTHER"}})
        traces.append(  # valid by construction: built without validation, to save time
            AgentTrace.model_construct(
                conversation_id=f"conv-{conv}",
                messages=tuple(messages),
                reference_tool_calls=tuple(gold),
            )
        )
    return traces


def naive(traces: list[AgentTrace]) -> int:
    """The floor: list calls, match reference calls one to one with ``==``; count matches."""
    total = 0
    for trace in traces:
        made = [
            (c.name, c.arguments)
            for m in trace.messages
            if isinstance(m, AssistantMessage)
            for c in m.tool_calls or ()
        ]
        for call in trace.reference_tool_calls or ():
            key = (call.name, call.arguments)
            if key in made:
                made.remove(key)
                total += 1
    return total


class Constant(JudgeFreeMetric):
    """A judge-free metric that returns a constant: the engine's own cost per row."""

    name: ClassVar[str] = "bench_constant"
    version: ClassVar[int] = 1

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Score 1."""
        return MetricOutcome(score=1.0)


def evaluate_all(metric: Metric, traces: list[AgentTrace]) -> int:
    """``metric.evaluate`` on every trace, outside the engine; returns the atoms made."""

    async def run() -> int:
        atoms = 0
        for trace in traces:
            outcome = await metric.evaluate(
                MetricInput(conversation="", trace=trace), None, CallTally()
            )
            atoms += len(outcome.atoms or ())
        return atoms

    return asyncio.run(run())


def through_engine(metrics: list[Metric], traces: list[AgentTrace], store: Path | None) -> int:
    """Every metric through an Engine (as ``score`` runs them); returns the rows made."""
    formatter = get_formatter("ragas-pretty@1")

    async def run() -> int:
        rows = 0
        opened = ResultStore(store) if store is not None else None
        try:
            for metric in metrics:
                engine = Engine(
                    metric=metric,
                    formatter=formatter,
                    judge=None,
                    store=opened,
                    keep_results=False,
                    concurrency=16,
                )
                summary = await engine.run(traces, total=len(traces))
                rows += summary.scored + summary.skipped + summary.errored
        finally:
            if opened is not None:
                opened.close()
        return rows

    return asyncio.run(run())


def cpu(work: Callable[[], Any], repeats: int) -> tuple[float, Any]:
    """Best CPU seconds (user + system of this process) of ``repeats`` runs, and the result."""
    best, result = float("inf"), None
    for _ in range(repeats):
        start = time.process_time()
        result = work()
        best = min(best, time.process_time() - start)
    return best, result


def main(argv: list[str] | None = None) -> int:
    """Run the benchmark and print a table of CPU seconds, conversations/s and ratios."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--conversations", type=int, default=100_000)
    parser.add_argument("--calls", type=int, default=8)
    parser.add_argument("--reference", type=int, default=6)
    parser.add_argument("--repeats", type=int, default=1)
    args = parser.parse_args(argv)
    n = args.conversations
    start = time.perf_counter()
    traces = make_traces(n, args.calls, args.reference)
    print(f"built {n:,} conversations ({args.calls} calls, {args.reference} reference calls "
          f"each) in {time.perf_counter() - start:.1f} s", file=sys.stderr)  # fmt: skip
    rows: list[tuple[str, float, float]] = []
    floor, _ = cpu(lambda: naive(traces), args.repeats)
    rows.append(("baseline: naive == matching", floor, 1.0))
    for spec in METRICS:
        seconds, _ = cpu(lambda spec=spec: evaluate_all(build_metric(spec), traces), args.repeats)
        rows.append((f"evaluate {spec}", seconds, seconds / floor))
    engine_floor, _ = cpu(lambda: through_engine([Constant()], traces, None), args.repeats)
    rows.append(("baseline: engine floor (constant metric, in memory)", engine_floor, 1.0))
    four = [build_metric(spec) for spec in ENGINE_METRICS]
    in_memory, _ = cpu(lambda: through_engine(four, traces, None), args.repeats)
    rows.append(
        ("4 metrics through the engine, in memory", in_memory, in_memory / (4 * engine_floor))
    )
    with tempfile.TemporaryDirectory() as tmp:
        stored, made = cpu(lambda: through_engine(four, traces, Path(tmp) / "run"), 1)
    label = "4 metrics through the engine + store (jsonl + sqlite)"
    rows.append((label, stored, stored / (4 * engine_floor)))
    print(f"{'measure':58} {'CPU s':>8} {'conv/s':>10} {'ratio':>7}")
    for label, seconds, ratio in rows:
        per_second = n / seconds if seconds else float("inf")
        print(f"{label:58} {seconds:8.2f} {per_second:10,.0f} {ratio:6.2f}x")
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    print(f"rows written: {made:,}; peak RSS {peak:,.0f} MiB")
    print("ratios: evaluate rows against the naive baseline; engine rows against 4 x the "
          "engine floor (one engine per metric)")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
