"""Judge-free retrieval metrics over many turns: ``context_precision@1`` and
``context_recall@1`` against a hand-written baseline measured in the same run.

Builds ``--turns`` labelled turns (``--per-conversation`` turns per AgentTrace, ``--passages``
retrieved passages each, one duplicate in every tenth turn, human relevance labels and a gold
set), then measures in CPU time (``time.process_time``, best of ``--repeats``):

- baseline: a plain loop over the same data computing the same figures (share relevant,
  average precision, recall against the gold set) from the raw lists and dicts: the floor for
  any Python implementation;
- metric: each metric's ``units`` + ``skip_reason`` + ``evaluate`` per turn (the metric alone);
- engine: the whole :class:`~agent_eval.run._engine.Engine` run, result rows built and counted
  (no store), as ``score`` runs it;

and prints turns/s and each ratio to the baseline. Numbers are checked equal to the baseline's.

    python bench/rag_retrieval.py [--turns 100000] [--per-conversation 10] [--passages 5]
"""

from __future__ import annotations

import argparse
import asyncio
import time
from collections.abc import Callable
from typing import Any

from agent_eval._trace import (
    AgentTrace,
    AssistantMessage,
    Retrieval,
    RetrievedDocument,
    UserMessage,
)
from agent_eval.formatting._registry import get_formatter
from agent_eval.metrics._base import CallTally, MetricInput
from agent_eval.metrics._spec import build_metric
from agent_eval.run._engine import Engine


def build(turns: int, per_conversation: int, passages: int) -> list[AgentTrace]:
    traces = []
    for c in range(turns // per_conversation):
        messages: list[Any] = []
        retrievals = []
        labels: dict[str, Any] = {}
        for t in range(per_conversation):
            n = c * per_conversation + t
            messages.append(UserMessage(content=f"question {n} about returns"))
            ids = [f"doc-{(n * 7 + k) % 997}" for k in range(passages)]
            if n % 10 == 0:
                ids.append(ids[0])  # a duplicate passage, counted once
            docs = tuple(RetrievedDocument(id=i, content=f"passage {i} text") for i in ids)
            retrievals.append(Retrieval(after_message=len(messages), documents=docs))
            messages.append(AssistantMessage(content=f"answer {n}", span_ids=(f"{n:016x}",)))
            labels[str(t + 1)] = {
                "relevance": {i: int((n + k) % 3 == 0) for k, i in enumerate(dict.fromkeys(ids))},
                "relevant_passages": [ids[0], f"doc-gold-{n}"],
            }
        traces.append(
            AgentTrace(
                conversation_id=f"c{c}",
                messages=tuple(messages),
                retrievals=tuple(retrievals),
                labels={"turns": labels},
            )
        )
    return traces


def baseline(traces: list[AgentTrace]) -> list[tuple[float, float, float]]:
    """Share relevant, average precision and recall per turn, from the raw data."""
    out = []
    for trace in traces:
        turns = trace.labels["turns"]
        for number, retrieval in enumerate(trace.retrievals, 1):
            labels = turns[str(number)]  # type: ignore[index]
            seen: dict[str, None] = {}
            for doc in retrieval.documents:
                seen.setdefault(doc.id or "")
            flags = [bool(labels["relevance"][i]) for i in seen]  # type: ignore[index]
            hits, total = 0, 0.0
            for k, flag in enumerate(flags, 1):
                if flag:
                    hits += 1
                    total += hits / k
            gold = labels["relevant_passages"]  # type: ignore[index]
            recall = sum(g in seen for g in gold) / len(gold)  # type: ignore[union-attr,arg-type]
            out.append((sum(flags) / len(flags), total / hits if hits else 0.0, recall))
    return out


def metric_only(traces: list[AgentTrace]) -> list[tuple[float, float, float]]:
    precision, recall = build_metric("context_precision"), build_metric("context_recall")
    out = []

    async def run() -> None:
        for trace in traces:
            for unit in precision.units(trace):
                sample = MetricInput(conversation="", unit=unit, trace=trace)
                assert precision.skip_reason(sample) is None and recall.skip_reason(sample) is None
                p = await precision.evaluate(sample, None, CallTally())
                r = await recall.evaluate(sample, None, CallTally())
                out.append((p.score or 0.0, p.details["average_precision"], r.score or 0.0))

    asyncio.run(run())
    return out  # type: ignore[return-value]


def engine(traces: list[AgentTrace]) -> list[tuple[float, float, float]]:
    rows = {}
    for name in ("context_precision", "context_recall"):
        run = Engine(
            metric=build_metric(name),
            formatter=get_formatter("json@1"),
            judge=None,
            concurrency=64,
        )
        summary = asyncio.run(run.run(traces))
        assert summary.scored == summary.input
        rows[name] = {r.subject: r for r in summary.results}
    return [
        (p.score or 0.0, p.details["average_precision"], rows["context_recall"][s].score or 0.0)  # type: ignore[misc]
        for s, p in rows["context_precision"].items()
    ]


def best(
    fn: Callable[[list[AgentTrace]], Any], traces: list[AgentTrace], repeats: int
) -> tuple[float, Any]:
    times, result = [], None
    for _ in range(repeats):
        start = time.process_time()
        result = fn(traces)
        times.append(time.process_time() - start)
    return min(times), result


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--turns", type=int, default=100_000)
    parser.add_argument("--per-conversation", type=int, default=10)
    parser.add_argument("--passages", type=int, default=5)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    start = time.process_time()
    traces = build(args.turns, args.per_conversation, args.passages)
    turns = sum(len(t.retrievals) for t in traces)
    print(f"built {turns:,} turns in {len(traces):,} conversations "
          f"({time.process_time() - start:.1f} s CPU)")  # fmt: skip
    base_s, expected = best(baseline, traces, args.repeats)
    metric_s, got = best(metric_only, traces, args.repeats)
    engine_s, via_engine = best(engine, traces, max(1, args.repeats - 1))
    for name, values in (("metric", got), ("engine", via_engine)):
        assert len(values) == len(expected), name
        for a, b in zip(values, expected, strict=True):
            assert all(abs(x - y) < 1e-12 for x, y in zip(a, b, strict=True)), (name, a, b)
    print(f"{'':10} {'CPU s':>8} {'turns/s':>12} {'x baseline':>11}")
    for name, seconds in (("baseline", base_s), ("metric", metric_s), ("engine", engine_s)):
        print(f"{name:10} {seconds:8.2f} {turns / seconds:12,.0f} {seconds / base_s:11.1f}")
    print("metric and engine: both metrics (precision + recall) per turn; same figures as baseline")


if __name__ == "__main__":
    main()
