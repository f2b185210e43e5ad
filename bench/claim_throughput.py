"""Claim-level throughput: ``faithfulness@1`` against Ragas 0.4.3 ``Faithfulness``, same run.

Runs the fake OpenAI-compatible server in its own process and scores N RAG answers of S
sentences each (so S statements, two judge calls per answer for both tools) and prints:

1. atoms (statements) judged per second at latency L and concurrency C, agent-eval and Ragas
   (``evaluate()`` with a LangChain ``ChatOpenAI`` judge, ``RunConfig(max_workers=C)``), and
   the ratio;
2. client CPU per atom at latency 0 (``time.process_time`` of the scoring process; the server
   runs elsewhere), both tools, and the ratio;
3. agent-eval's ``faithfulness@1[per_statement=true]`` (S + 1 calls per answer) beside them.

Ragas runs in the virtualenv ``bench/judge_throughput.py`` creates under ``.bench/`` (created
here on first use). The server answers every request from the text it is sent: decompositions
list the answer's "Fact k about item #i" sentences, verdicts mark every statement supported,
in the structured-output mode each tool asks for (instructor tools for ours, JSON text for
Ragas' prompts), so both judge the same S atoms per answer.

Usage::

    .venv/bin/python bench/claim_throughput.py [--n 200] [--statements 4] [--latency-ms 50]
        [--concurrency 32] [--skip-ragas]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from judge_throughput import BENCH_DIR, ragas_python

from agent_eval.testing._process import server_process

MODEL = "fake-model"

SERVER = r"""
import json, re, signal, sys, threading
from agent_eval.testing import FakeModelServer, Structured, Text, Usage

FACT = re.compile(r"Fact (\d+) about item #(\d+)")

def facts(text):
    seen = []
    for found in FACT.finditer(text):
        fact = f"Fact {found.group(1)} about item #{found.group(2)} holds."
        if fact not in seen:
            seen.append(fact)
    return seen

def case(request):
    messages = [m for m in request.messages if m.get("role") == "user"]
    return messages[-1]["content"] if messages else ""

def reply(request):
    text = case(request)
    name = request.schema_name
    if name == "Statements":
        found = facts(text.rpartition("Answer: ")[2])
        return Structured({"statements": found}, usage=Usage(300, 40))
    if name == "StatementVerdicts":
        statements = re.findall(r"^\d+\. (.*)$", text.rpartition("Statements:")[2], re.M)
        return Structured({"verdicts": [{"statement": s, "reason": "stated", "verdict": "1"}
                                        for s in statements]}, usage=Usage(400, 60))
    if name == "StatementVerdict":
        return Structured({"reason": "stated", "verdict": "1"}, usage=Usage(200, 15))
    # Ragas: JSON in the text reply; the NLI prompt carries "statements" in its input
    if "judge the faithfulness" in request.text:
        tail = text.rpartition("Now perform the same")[2] or text
        found = facts(tail.rpartition('"statements"')[2])
        data = {"statements": [{"statement": s, "reason": "stated", "verdict": 1} for s in found]}
        return Text(json.dumps(data), usage=Usage(400, 60))
    tail = text.rpartition("Now perform the same")[2] or text
    return Text(json.dumps({"statements": facts(tail.rpartition('"answer"')[2])}),
                usage=Usage(300, 40))

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
with FakeModelServer(latency=float(sys.argv[1]) / 1000, default=reply) as server:
    print(server.base_url, flush=True)
    stop.wait()
"""


@contextmanager
def fake_server(latency_ms: float) -> Iterator[str]:
    """Start the fake server in its own process; yields its base URL."""
    with server_process(SERVER, str(latency_ms)) as base_url:
        yield base_url


def answers(n: int, statements: int) -> list[tuple[str, str, list[str]]]:
    """``n`` distinct (question, answer, contexts) triples, each answer ``statements`` sentences."""
    out = []
    for i in range(n):
        answer = " ".join(f"Fact {k} about item #{i}." for k in range(1, statements + 1))
        contexts = [f"Record of item #{i} lists property {k}." for k in range(1, statements + 1)]
        out.append((f"What do we know about item #{i}?", answer, contexts))
    return out


# -- agent-eval -------------------------------------------------------------------------------


def _traces(items: list[tuple[str, str, list[str]]]) -> list[Any]:
    from agent_eval.ingest.containers._rag_turns import Passage, RagTurn, rag_trace

    return [
        rag_trace(
            conversation_id=f"answer-{i:05d}",
            turns=[RagTurn(question=q, passages=[Passage(text=c) for c in cs], answer=a)],
            container="bench",
            path="-",
        )
        for i, (q, a, cs) in enumerate(items)
    ]


async def _score(base_url: str, traces: list[Any], concurrency: int, spec: str) -> tuple[int, int]:
    from agent_eval.formatting import get_formatter
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.metrics._spec import build_metric
    from agent_eval.run._engine import Engine

    judge = OpenAIJudge(MODEL, base_url=base_url, api_key="bench-key", timeout=60)
    engine = Engine(metric=build_metric(spec), formatter=get_formatter("ragas-pretty@1"),
                    judge=judge, concurrency=concurrency)  # fmt: skip
    summary = await engine.run(traces, total=len(traces))
    await judge.aclose()
    if summary.scored != len(traces):
        raise RuntimeError(f"agent-eval scored {summary.scored} of {len(traces)}: {summary}")
    return summary.atoms, summary.attempts


def run_ours(base_url: str, traces: list[Any], concurrency: int, spec: str) -> dict[str, float]:
    """Score once; wall and CPU seconds, atoms judged and requests made."""
    wall, cpu = time.perf_counter(), time.process_time()
    atoms, requests = asyncio.run(_score(base_url, traces, concurrency, spec))
    return {"wall": time.perf_counter() - wall, "cpu": time.process_time() - cpu,
            "atoms": atoms, "requests": requests}  # fmt: skip


# -- Ragas, in its own virtualenv ----------------------------------------------------------

RAGAS_RUNNER = r"""
import json, sys, time
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.dataset_schema import SingleTurnSample
from ragas.llms import LangchainLLMWrapper
from ragas.metrics import Faithfulness
from ragas.run_config import RunConfig

base_url, workers, items = sys.argv[1], int(sys.argv[2]), json.load(open(sys.argv[3]))
samples = [SingleTurnSample(user_input=q, response=a, retrieved_contexts=cs) for q, a, cs in items]
llm = LangchainLLMWrapper(ChatOpenAI(model="fake-model", base_url=base_url, api_key="bench-key"))
wall, cpu = time.perf_counter(), time.process_time()
result = evaluate(dataset=EvaluationDataset(samples=samples), metrics=[Faithfulness(llm=llm)],
                  llm=llm, run_config=RunConfig(max_workers=workers), show_progress=False,
                  raise_exceptions=False)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
scores = result.to_pandas()["faithfulness"].tolist()
print(json.dumps({"wall": wall, "cpu": cpu, "scored": sum(s == s for s in scores),
                  "mean": sum(s for s in scores if s == s) / max(1, sum(s == s for s in scores))}))
"""


def run_ragas(python: Path, base_url: str, items: list[Any], workers: int) -> dict[str, float]:
    """Run the Ragas workload in its virtualenv; its wall and CPU seconds, rows scored."""
    runner, data = BENCH_DIR / "ragas_faithfulness.py", BENCH_DIR / "ragas_items.json"
    runner.write_text(RAGAS_RUNNER)
    data.write_text(json.dumps(items))
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "bench-key"}
    done = subprocess.run([str(python), str(runner), base_url, str(workers), str(data)],
                          check=False, capture_output=True, text=True, env=env)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"ragas runner failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    """Run the benchmark and print the same-run comparison."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=200, help="answers")
    parser.add_argument("--statements", type=int, default=4, help="sentences per answer")
    parser.add_argument("--latency-ms", type=float, default=50.0)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--skip-ragas", action="store_true")
    args = parser.parse_args()
    BENCH_DIR.mkdir(exist_ok=True)
    n, s, c = args.n, args.statements, args.concurrency
    items = answers(n, s)
    traces = _traces(items)
    atoms = n * s
    load = os.getloadavg()[0]
    print(f"{n} answers x {s} statements = {atoms} atoms; latency {args.latency_ms:g} ms, "
          f"concurrency {c}; load average {load:.1f} on {os.cpu_count()} CPUs")  # fmt: skip
    with fake_server(args.latency_ms) as slow_url, fake_server(0) as fast_url:
        for spec in ("faithfulness", "faithfulness[per_statement=true]"):  # imports, schemas
            run_ours(fast_url, _traces(answers(4, s)), c, spec)
        ours = run_ours(slow_url, traces, c, "faithfulness")
        per = run_ours(slow_url, traces, c, "faithfulness[per_statement=true]")
        ours_cpu = run_ours(fast_url, traces, c, "faithfulness")
        assert ours["atoms"] == atoms, ours
        print("\n[1] atoms judged per second")
        print(f"    agent-eval faithfulness@1: {atoms / ours['wall']:.1f} atoms/s "
              f"({ours['wall']:.2f} s, {ours['requests']:.0f} requests)")  # fmt: skip
        print(f"    agent-eval [per_statement=true]: {atoms / per['wall']:.1f} atoms/s "
              f"({per['wall']:.2f} s, {per['requests']:.0f} requests)")  # fmt: skip
        print("\n[2] client CPU per atom at latency 0")
        ours_ms = ours_cpu["cpu"] / atoms * 1000
        print(f"    agent-eval faithfulness@1: {ours_ms:.3f} ms/atom "
              f"({ours_cpu['cpu'] / ours_cpu['requests'] * 1000:.3f} ms/request)")  # fmt: skip
        if args.skip_ragas:
            print("\n[3] Ragas: skipped (--skip-ragas)")
            return
        python = ragas_python()
        if python is None:
            return
        ragas = run_ragas(python, slow_url, items, c)
        ragas_cpu = run_ragas(python, fast_url, items, c)
        ragas_ms = ragas_cpu["cpu"] / atoms * 1000
        print("\n[3] Ragas 0.4.3 Faithfulness, same server, same answers")
        print(f"    atoms/s {atoms / ragas['wall']:.1f} ({ragas['wall']:.2f} s, "
              f"{ragas['scored']:.0f} scored, mean {ragas['mean']:.2f}); agent-eval / Ragas = "
              f"{ragas['wall'] / ours['wall']:.2f} x the atoms per second")  # fmt: skip
        print(f"    client CPU per atom: Ragas {ragas_ms:.3f} ms, agent-eval {ours_ms:.3f} ms "
              f"= {ours_ms / ragas_ms:.2f} x Ragas")  # fmt: skip


if __name__ == "__main__":
    main()
