"""Judge throughput benchmark: agent-eval's engine against the physical limit and Ragas 0.4.3.

Runs the fake OpenAI-compatible server (``python -m agent_eval.testing._fake_server``) in
separate processes with a fixed latency, and each measured client in a process of its own
(a fresh interpreter, warmed up with 50 conversations first), and prints, in one run:

1. wall time of N conversations (two sequential judge calls each) at latency L and
   concurrency C (16 and 64 by default), as a ratio to the limit ``2 x L x ceil(N / C)`` and
   to the same-run floor: bare aiohttp making the same two sequential posts per conversation
   (on a shared machine the fake server's own delay shows in both). The fake server runs as
   ``--server-processes`` processes on one port (``SO_REUSEPORT``, default 2), and the floor is
   also measured against a single server process, which shows the server's share. Then
   where the time beyond the limit goes, from one timed run of each engine and of the floor
   at the last concurrency (:func:`excess_parts`). With more than one ``--latency-ms``, the
   later latencies are a sweep (realistic judge latencies are 0.5-5 s): N = ``--sweep-waves``
   x C conversations, so each wall is that many waves, on the last loop of ``--loops``, for
   each tree and the floor;
2. client CPU time per judge call at latency 0 and concurrency 256 (``time.process_time`` of
   the client process; the server runs elsewhere) and the calls per second of one core that
   makes (for the whole engine, and for ``OpenAIJudge.ask`` alone), beside two same-run
   floors: the bare HTTP client (aiohttp ``post`` of the same
   prebuilt bodies, ``orjson`` + pydantic on the reply) and the openai 3 client on its aiohttp
   transport (``AsyncOpenAI.post``, the judge's transport before), then where the CPU goes
   (pyinstrument, top frames by self time);
3. the same workload through Ragas 0.4.3 ``AgentGoalAccuracyWithoutReference`` (``evaluate()``
   with a LangChain ``ChatOpenAI`` judge) in a virtualenv created under ``.bench/``: wall-time
   ratio at Ragas' defaults and at equal concurrency, client CPU per judge call;
4. a cached re-run's wall time as a ratio to the first run;
5. the results store's cost per row: ``ResultStore.add`` of ``--store-rows`` goal-accuracy rows
   plus ``close`` (CPU and wall per row, in a fresh process; for ``--baseline`` too).

Every client row is measured on each event loop of ``--loops`` (default ``asyncio,uvloop``;
uvloop rows only when it is installed), named ``[asyncio]`` / ``[uvloop]``; each wall row's
floor is bare aiohttp on the same loop, and CPU rows are compared with the default loop's
aiohttp floor. The fake server runs on agent-eval's own default loop
(:mod:`agent_eval.run._event_loop`).

With ``--baseline REV`` (e.g. ``--baseline main``) the engine rows are also measured for the
code at git revision ``REV`` (``git archive`` into ``.bench/``, imported first on the path),
alternating with this checkout's, so before/after come from the same run. The machine may be
shared: each figure is the best (least CPU, least wall) of ``--reps`` repetitions.

Usage::

    .venv/bin/python bench/judge_throughput.py [--n 1000] [--latency-ms 100[,500,1000]]
        [--sweep-waves 4]
        [--concurrency 16,64] [--cpu-concurrency 256] [--reps 3] [--baseline REV]
        [--store-rows 20000] [--server-processes 2] [--loops asyncio,uvloop] [--skip-ragas]
"""

from __future__ import annotations

import argparse
import asyncio
import contextvars
import json
import math
import os
import statistics
import subprocess
import sys
import tempfile
import time
from collections import defaultdict
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager
from pathlib import Path
from typing import Any

from agent_eval.testing._process import server_process

ROOT = Path(__file__).resolve().parents[1]
BENCH_DIR = ROOT / ".bench"
RAGAS_VENV = BENCH_DIR / "ragas-venv"
RAGAS_PINS = ["ragas==0.4.3", "langchain-community<0.4", "langchain-openai<1", "langchain-core<1"]
"""langchain-openai and -core are held below 1.0 (what langchain-community 0.3 needs) so pip
resolves in seconds instead of backtracking through every 1.x release."""
MODEL = "fake-model"

# The fake server process: one structured reply that satisfies both stages of both tools
# (agent-eval's GoalAndOutcome / OutcomeComparison, Ragas' workflow / compare-outcome outputs;
# extra keys are ignored). The end state names the conversation's restaurant, so no two
# conversations send the same stage-2 request (nothing is shared through a cache).
SERVER = r"""
import re, signal, sys, threading
from agent_eval.testing import FakeModelServer, Structured, Usage

def reply(request):
    found = re.search(r"restaurant #(\d+)", request.text)
    number = found.group(1) if found else "?"
    return Structured({"user_goal": f"Book a table at restaurant #{number}",
                       "end_state": f"A table was booked at restaurant #{number}",
                       "reason": "The booking matches the request.", "verdict": "1"},
                      usage=Usage(300, 20))

stop = threading.Event()
signal.signal(signal.SIGTERM, lambda *_: stop.set())
with FakeModelServer(latency=float(sys.argv[1]) / 1000, default=reply, port=int(sys.argv[2]),
                     reuse_port=True) as server:
    print(server.base_url, flush=True)
    stop.wait()
"""


@contextmanager
def fake_server(latency_ms: float, processes: int = 1) -> Iterator[str]:
    """Start the fake server in ``processes`` processes on one port; yields its base URL.

    The first binds a free port, the others the same one (``SO_REUSEPORT``): the kernel
    spreads the client's connections over them, so one Python server process (one core) does
    not hold every reply back.
    """
    with ExitStack() as stack:
        base_url = stack.enter_context(server_process(SERVER, str(latency_ms), "0"))
        port = base_url.rsplit(":", 1)[1].split("/", 1)[0]
        for _ in range(processes - 1):
            stack.enter_context(server_process(SERVER, str(latency_ms), port))
        yield base_url


# -- the event loop ---------------------------------------------------------------------------

CHOSEN = {"loop": "asyncio"}
"""The event loop this process runs its clients on (``--worker ... LOOP``; the main process:
the last of ``--loops``)."""


def run_loop(coro: Any) -> Any:
    """Run ``coro`` on ``CHOSEN["loop"]``: asyncio's default loop or uvloop (public API, as
    ``agent_eval.run._event_loop`` does), whatever the checkout measured (a baseline has none)."""
    factory = None
    if CHOSEN["loop"] == "uvloop":
        import uvloop

        factory = uvloop.new_event_loop
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)


# -- agent-eval -------------------------------------------------------------------------------


def conversations(n: int) -> list[Any]:
    """``n`` small, distinct tool-using conversations."""
    from agent_eval._trace import AgentTrace, AssistantMessage, ToolCall, ToolMessage, UserMessage

    traces = []
    for i in range(n):
        call = ToolCall(id=f"call_{i}", name="book_table", arguments={"party": i % 8 + 1})
        messages = (
            UserMessage(content=f"Please book a table for {i % 8 + 1} at restaurant #{i}."),
            AssistantMessage(content="", tool_calls=(call,)),
            ToolMessage(content=f'{{"status": "booked", "ref": "R{i:05d}"}}', tool_call_id=call.id),
            AssistantMessage(content=f"Done: your booking reference is R{i:05d}."),
            UserMessage(content="Thanks!"),
        )
        traces.append(AgentTrace(conversation_id=f"conv-{i:05d}", messages=messages))
    return traces


async def _score(
    base_url: str,
    traces: list[Any],
    concurrency: int,
    out: Path,
    cache: Path | None,
    timeline: list[list[float]] | None = None,
) -> tuple[int, int]:
    from agent_eval.formatting import get_formatter
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.metrics._goal_accuracy import GoalAccuracy
    from agent_eval.run._cache import CachedJudge, JudgeCache
    from agent_eval.run._engine import Engine
    from agent_eval.run._store import ResultStore

    judge: Any = OpenAIJudge(MODEL, base_url=base_url, api_key="bench-key", timeout=30)
    judge_cache = JudgeCache(cache) if cache is not None else None
    if judge_cache is not None:
        judge = CachedJudge(judge, judge_cache, parameters={"mode": "tools"})
    if timeline is not None:
        judge = _timed_judge(judge, timeline)
    with ResultStore(out) as store:
        engine = Engine(metric=GoalAccuracy(), formatter=get_formatter("ragas-pretty@1"),
                        judge=judge, store=store, concurrency=concurrency)  # fmt: skip
        summary = await engine.run(traces, total=len(traces))
    await judge.aclose()
    if judge_cache is not None:
        judge_cache.close()
    return summary.scored, summary.attempts


def run_ours(
    base_url: str,
    traces: list[Any],
    concurrency: int,
    cache: Path | None = None,
    timeline: list[list[float]] | None = None,
) -> dict[str, float]:
    """Score ``traces`` once; wall seconds, CPU seconds, requests made and rows scored.

    With ``timeline``, each conversation's judge calls are timed into it (see
    :func:`_timed_judge`).
    """
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as out:
        wall, cpu = time.perf_counter(), time.process_time()
        scored, requests = run_loop(
            _score(base_url, traces, concurrency, Path(out), cache, timeline)
        )
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "requests": requests, "scored": scored}


def _timed_judge(judge: Any, timeline: list[list[float]]) -> Any:
    """``judge`` wrapped to append ``perf_counter()`` before and after each ``ask`` to the
    list of the asking task, one list in ``timeline`` per task (each task has its own copy of
    the context). The engine scores a conversation's calls in order in one task (a task per
    conversation before session 6, a worker per slot since), so a list is ``[start 1, end 1,
    start 2, end 2]`` per conversation, one conversation after another."""
    from agent_eval.judges._base import Judge

    mine: contextvars.ContextVar[list[float] | None] = contextvars.ContextVar("times")

    class Timed(Judge):
        model = judge.model

        async def ask(self, request: Any) -> Any:
            times = mine.get(None)
            if times is None:
                times = []
                mine.set(times)
                timeline.append(times)
            times.append(time.perf_counter())
            try:
                return await judge.ask(request)
            finally:
                times.append(time.perf_counter())

        async def aclose(self) -> None:
            await judge.aclose()

    return Timed()


def excess_parts(timeline: list[list[float]], concurrency: int, latency: float) -> dict[str, float]:
    """Where a run's wall time beyond ``2 x latency`` per conversation went, in seconds.

    From each conversation's ``[start 1, end 1, start 2, end 2]``: the mean of each judge call's
    time beyond ``latency`` (client CPU of the call, the server, the network, waiting for
    the loop), the mean gap between a conversation's two calls (stage 1's reply handled, stage
    2's request built), the mean hand-over (a conversation's end to the first request of the
    one that took its slot: its row and store work, the feeder, the next rendering; the
    ``k``-th start after the first ``concurrency`` is paired with the ``k``-th end, as the
    engine's semaphore is first come, first served), and the spread of the first
    ``concurrency`` starts.
    """
    convs = [times[i : i + 4] for times in timeline for i in range(0, len(times) - 3, 4)]
    starts = sorted(times[0] for times in convs)
    ends = sorted(times[3] for times in convs)
    handovers = [start - end for start, end in zip(starts[concurrency:], ends, strict=False)]
    mean = statistics.fmean
    return {
        "call beyond L": mean(t - latency for c in convs for t in (c[1] - c[0], c[3] - c[2])),
        "between the two calls": mean(c[2] - c[1] for c in convs),
        "hand-over to the next conversation": mean(handovers) if handovers else 0.0,
        "spread of the first starts": starts[min(concurrency, len(starts)) - 1] - starts[0],
        "conversations": float(len(convs)),
    }


# -- measured clients, each in a fresh process ---------------------------------------------


def _bodies(traces: list[Any]) -> list[bytes]:
    """The stage-1 request bodies of ``traces``, as the judge builds them (tools mode)."""
    import orjson

    from agent_eval.formatting import get_formatter
    from agent_eval.metrics._base import MetricInput
    from agent_eval.metrics._goal_accuracy import GoalAccuracy, GoalAndOutcome

    metric, formatter = GoalAccuracy(), get_formatter("ragas-pretty@1")
    schema = GoalAndOutcome.model_json_schema()
    tool = {"type": "function", "function": {"name": "GoalAndOutcome", "parameters": schema}}
    choice = {"type": "function", "function": {"name": "GoalAndOutcome"}}
    bodies = []
    for trace in traces:
        request = metric.infer_request(MetricInput(conversation=formatter.render(trace)))
        body = {"model": MODEL, "messages": list(request.messages), "tools": [tool],
                "tool_choice": choice, "temperature": 0}  # fmt: skip
        bodies.append(orjson.dumps(body))
    return bodies


def _check(reply: bytes) -> None:
    import orjson

    from agent_eval.metrics._goal_accuracy import GoalAndOutcome

    call = orjson.loads(reply)["choices"][0]["message"]["tool_calls"][0]
    GoalAndOutcome.model_validate_json(call["function"]["arguments"])


async def _aiohttp_calls(
    base_url: str,
    bodies: list[bytes],
    concurrency: int,
    sequential: int = 1,
    timeline: list[list[float]] | None = None,
) -> int:
    import aiohttp

    slots = asyncio.Semaphore(concurrency)
    headers = {"Authorization": "Bearer bench-key", "Content-Type": "application/json"}
    url = base_url + "/chat/completions"
    async with aiohttp.ClientSession(
        headers=headers, connector=aiohttp.TCPConnector(limit=0)
    ) as session:

        async def one(body: bytes) -> None:
            async with slots:
                times: list[float] = []
                if timeline is not None:
                    timeline.append(times)
                for _ in range(sequential):  # a conversation's calls, one after the other
                    if timeline is not None:
                        times.append(time.perf_counter())
                    async with session.post(url, data=body) as response:
                        reply = await response.read()
                    _check(reply)
                    if timeline is not None:
                        times.append(time.perf_counter())

        await asyncio.gather(*(one(body) for body in bodies))
    return len(bodies) * sequential


async def _judge_calls(base_url: str, traces: list[Any], concurrency: int) -> int:
    from agent_eval.formatting import get_formatter
    from agent_eval.judges._openai_judge import OpenAIJudge
    from agent_eval.metrics._base import MetricInput
    from agent_eval.metrics._goal_accuracy import GoalAccuracy

    metric, formatter = GoalAccuracy(), get_formatter("ragas-pretty@1")
    requests = [metric.infer_request(MetricInput(conversation=formatter.render(t))) for t in traces]
    slots = asyncio.Semaphore(concurrency)
    judge = OpenAIJudge(MODEL, base_url=base_url, api_key="bench-key", timeout=30)

    async def one(request: Any) -> None:
        async with slots:
            await judge.ask(request)

    await asyncio.gather(*(one(request) for request in requests))
    await judge.aclose()
    return len(requests)


async def _openai_calls(base_url: str, bodies: list[bytes], concurrency: int) -> int:
    import openai

    slots = asyncio.Semaphore(concurrency)
    client = openai.AsyncOpenAI(
        base_url=base_url, api_key="bench-key", http_client=openai.DefaultAioHttpClient()
    )

    async def one(body: bytes) -> None:
        async with slots:
            reply = await client.post("/chat/completions", content=body, cast_to=bytes)
        _check(reply)

    await asyncio.gather(*(one(body) for body in bodies))
    await client.close()
    return len(bodies)


def _store_rows(n: int) -> dict[str, float]:
    """Add ``n`` goal-accuracy result rows to a fresh store and close it; wall and CPU."""
    from agent_eval._result import MetricResult
    from agent_eval.run._store import ResultStore

    rows = [
        MetricResult(run_id="bench", conversation_id=f"conv-{i:06d}", trace_ids=(f"{i:032x}",),
                     metric="goal_accuracy@1", formatter="ragas-pretty@1",
                     formatter_fingerprint="f" * 64, prompt_sha256="p" * 64,
                     judge_model=MODEL, status="ok", verdict="1", score=1.0,
                     reason="The booking matches the request.", user_goal=f"Book table #{i}",
                     end_state=f"A table was booked at restaurant #{i}", attempts=2,
                     input_tokens=600, output_tokens=40, latency_ms=201.5,
                     started_at="2026-12-01T00:00:00.000+00:00")
        for i in range(n)
    ]  # fmt: skip
    with tempfile.TemporaryDirectory(dir=BENCH_DIR) as out:
        wall, cpu = time.perf_counter(), time.process_time()
        store = ResultStore(out)
        for result in rows:
            store.add(result)
        store.close()
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
    return {"wall": wall, "cpu": cpu, "requests": n, "scored": n}


def worker(
    kind: str, base_url: str, n: int, concurrency: int, cache: str | None, loop: str = "asyncio"
) -> None:
    """Measure one client in this process and print ``{"wall", "cpu", "requests", ...}``.

    ``engine``: agent-eval's engine, judge and store (and the judge-call cache when ``cache``
    names a file); ``judge``: ``OpenAIJudge.ask`` alone on the stage-1 requests;
    ``aiohttp`` / ``openai``: the floors, stage-1 bodies only; ``aiohttp-pairs``: the wall
    floor, two sequential posts per conversation; ``engine-timeline`` / ``aiohttp-timeline``:
    the engine / the wall floor with each call timed, the timeline written to the file
    ``cache`` names (see :func:`excess_parts`). ``loop``: ``asyncio`` or ``uvloop``.
    """
    CHOSEN["loop"] = loop
    import agent_eval

    if kind == "store":
        _store_rows(200)  # imports, first database
        result = _store_rows(n)
        print(json.dumps({**result, "agent_eval": str(Path(agent_eval.__file__).parent)}))
        return
    warm, traces = conversations(50), conversations(n)
    if kind == "engine":
        run_ours(base_url, warm, concurrency)
        result = run_ours(base_url, traces, concurrency, Path(cache) if cache else None)
    elif kind == "engine-timeline":
        timeline: list[list[float]] = []
        run_ours(base_url, warm, concurrency)
        result = run_ours(base_url, traces, concurrency, None, timeline)
        Path(cache or "timeline.json").write_bytes(json.dumps(timeline).encode())
    elif kind == "aiohttp-timeline":
        timeline = []
        bodies = _bodies(traces)
        run_loop(_aiohttp_calls(base_url, _bodies(warm), concurrency, 2))
        wall = time.perf_counter()
        requests = run_loop(_aiohttp_calls(base_url, bodies, concurrency, 2, timeline))
        wall = time.perf_counter() - wall
        result = {"wall": wall, "cpu": 0.0, "requests": requests, "scored": n}
        Path(cache or "timeline.json").write_bytes(json.dumps(timeline).encode())
    elif kind == "judge":
        run_loop(_judge_calls(base_url, warm, concurrency))
        wall, cpu = time.perf_counter(), time.process_time()
        requests = run_loop(_judge_calls(base_url, traces, concurrency))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        result = {"wall": wall, "cpu": cpu, "requests": requests, "scored": requests}
    elif kind == "aiohttp-pairs":
        bodies = _bodies(traces)
        run_loop(_aiohttp_calls(base_url, _bodies(warm), concurrency, 2))
        wall, cpu = time.perf_counter(), time.process_time()
        requests = run_loop(_aiohttp_calls(base_url, bodies, concurrency, 2))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        result = {"wall": wall, "cpu": cpu, "requests": requests, "scored": n}
    else:
        calls = _aiohttp_calls if kind == "aiohttp" else _openai_calls
        bodies = _bodies(traces)
        run_loop(calls(base_url, _bodies(warm), concurrency))
        wall, cpu = time.perf_counter(), time.process_time()
        requests = run_loop(calls(base_url, bodies, concurrency))
        wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
        result = {"wall": wall, "cpu": cpu, "requests": requests, "scored": requests}
    print(json.dumps({**result, "agent_eval": str(Path(agent_eval.__file__).parent)}))


def measure(
    kind: str,
    base_url: str,
    n: int,
    concurrency: int,
    tree: Path | None = None,
    cache: Path | None = None,
    loop: str = "asyncio",
) -> dict[str, Any]:
    """Run :func:`worker` in a fresh interpreter (importing agent-eval from ``tree`` if given)."""
    env = dict(os.environ)
    if tree is not None:
        env["PYTHONPATH"] = os.pathsep.join([str(tree), str(tree / "formatters")])
    command = [sys.executable, str(Path(__file__).resolve()), "--worker", kind, base_url,
               str(n), str(concurrency), str(cache or ""), loop]  # fmt: skip
    done = subprocess.run(command, check=False, capture_output=True, text=True, env=env)
    if done.returncode != 0:
        raise RuntimeError(f"{kind} worker failed:\n{done.stderr[-3000:]}")
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    expected = str((tree or ROOT) / "agent_eval")
    if result["agent_eval"] != expected:
        raise RuntimeError(f"worker imported {result['agent_eval']}, not {expected}")
    return result


def best(runs: list[dict[str, Any]]) -> dict[str, Any]:
    """The repetition with the least CPU (its wall too), plus the least wall of all."""
    chosen = dict(min(runs, key=lambda r: r["cpu"]))
    chosen["best_wall"] = min(r["wall"] for r in runs)
    return chosen


def baseline_tree(revision: str) -> Path:
    """``git archive`` of ``revision`` unpacked under ``.bench/`` (reused when present)."""
    sha = subprocess.run(["git", "-C", str(ROOT), "rev-parse", "--short", revision],
                         check=True, capture_output=True, text=True).stdout.strip()  # fmt: skip
    tree = BENCH_DIR / f"baseline-{sha}"
    if not (tree / "agent_eval").is_dir():
        tree.mkdir(parents=True, exist_ok=True)
        archive = subprocess.run(["git", "-C", str(ROOT), "archive", sha],
                                 check=True, capture_output=True).stdout  # fmt: skip
        subprocess.run(["tar", "-x", "-C", str(tree)], input=archive, check=True)
    return tree


def profile_ours(base_url: str, traces: list[Any], concurrency: int, top: int = 12) -> None:
    """Print where the client's CPU goes: self time by package and the top functions.

    Sampled with pyinstrument (wall clock, every 0.5 ms); the samples where the event loop sat
    in ``select``/``epoll`` waiting for the server are idle, not CPU, and are left out.
    """
    from pyinstrument import Profiler

    run_ours(base_url, traces[:50], concurrency)  # imports, SSL context: not per-call costs
    profiler = Profiler(interval=0.0005, async_mode="disabled")
    with profiler:
        run_ours(base_url, traces, concurrency)
    session = profiler.last_session
    assert session is not None
    by_function: dict[str, float] = defaultdict(float)
    by_package: dict[str, float] = defaultdict(float)
    stack: list[tuple[Any, Any]] = [(session.root_frame(), None)]
    while stack:
        frame, parent = stack.pop()
        if frame is None:
            continue
        stack.extend((child, frame) for child in frame.children)
        owner = parent if frame.function == "[self]" and parent is not None else frame
        if frame.total_self_time <= 0 or owner.function in _IDLE:
            continue
        by_function[f"{owner.function} ({owner.file_path_short or '?'})"] += frame.total_self_time
        by_package[_package(owner.file_path or "")] += frame.total_self_time
    total = sum(by_package.values()) or 1.0
    print("  CPU self time by package (share of busy samples):")
    for name, seconds in sorted(by_package.items(), key=lambda kv: -kv[1])[:10]:
        print(f"    {seconds / total:6.1%}  {name}")
    print(f"  top {top} functions by self time:")
    for name, seconds in sorted(by_function.items(), key=lambda kv: -kv[1])[:top]:
        print(f"    {seconds / total:6.1%}  {name}")


_IDLE = {"select", "poll", "epoll.poll", "select.epoll.poll", "EpollSelector.select"}


def _package(path: str) -> str:
    if "site-packages/" in path:
        return path.split("site-packages/", 1)[1].split("/", 1)[0]
    if "/agent_eval/" in path:
        return "agent_eval/" + path.split("/agent_eval/", 1)[1].split("/", 1)[0]
    if "/agent_eval_formatters/" in path:
        return "agent_eval_formatters"
    if "/lib/python" in path:
        return "stdlib/" + path.rsplit("/lib/python", 1)[1].split("/", 2)[1]
    return path or "<builtin>"


# -- Ragas, in its own virtualenv ----------------------------------------------------------

RAGAS_RUNNER = r"""
import asyncio, json, os, sys, time
from langchain_openai import ChatOpenAI
from ragas import EvaluationDataset, evaluate
from ragas.dataset_schema import MultiTurnSample
from ragas.llms import LangchainLLMWrapper
from ragas.messages import AIMessage, HumanMessage, ToolCall, ToolMessage
from ragas.metrics import AgentGoalAccuracyWithoutReference
from ragas.run_config import RunConfig

base_url, n, workers = sys.argv[1], int(sys.argv[2]), sys.argv[3]
samples = []
for i in range(n):
    samples.append(MultiTurnSample(user_input=[
        HumanMessage(content=f"Please book a table for {i % 8 + 1} at restaurant #{i}."),
        AIMessage(content="", tool_calls=[ToolCall(name="book_table",
                                                   args={"party": i % 8 + 1})]),
        ToolMessage(content=f'{{"status": "booked", "ref": "R{i:05d}"}}'),
        AIMessage(content=f"Done: your booking reference is R{i:05d}."),
        HumanMessage(content="Thanks!"),
    ]))
llm = LangchainLLMWrapper(ChatOpenAI(model="fake-model", base_url=base_url, api_key="bench-key"))
config = RunConfig() if workers == "default" else RunConfig(max_workers=int(workers))
wall, cpu = time.perf_counter(), time.process_time()
result = evaluate(dataset=EvaluationDataset(samples=samples),
                  metrics=[AgentGoalAccuracyWithoutReference(llm=llm)], llm=llm,
                  run_config=config, show_progress=False, raise_exceptions=False)
wall, cpu = time.perf_counter() - wall, time.process_time() - cpu
scores = result.to_pandas()["agent_goal_accuracy"].tolist()
print(json.dumps({"wall": wall, "cpu": cpu, "max_workers": config.max_workers,
                  "scored": sum(s == s for s in scores)}))
"""


def ragas_python() -> Path | None:
    """The Ragas virtualenv's python, created and installed on first use; ``None`` if not."""
    python = RAGAS_VENV / "bin" / "python"
    check = "import ragas, langchain_openai; assert ragas.__version__ == '0.4.3'"
    probe = [str(python), "-c", check]
    if python.exists() and subprocess.run(probe, check=False, capture_output=True).returncode == 0:
        return python
    print(f"  creating {RAGAS_VENV} and installing {' '.join(RAGAS_PINS)} ...", flush=True)
    steps = [[sys.executable, "-m", "venv", str(RAGAS_VENV)],
             [str(python), "-m", "pip", "install", "-q", *RAGAS_PINS]]  # fmt: skip
    for step in steps:
        done = subprocess.run(step, check=False, capture_output=True, text=True)
        if done.returncode != 0:
            print(f"  SKIPPED Ragas: {' '.join(step[:4])} failed: {done.stderr.strip()[-400:]}")
            return None
    return (
        python if subprocess.run(probe, check=False, capture_output=True).returncode == 0 else None
    )


def run_ragas(python: Path, base_url: str, n: int, workers: str) -> dict[str, float]:
    """Run the Ragas workload in its virtualenv; its wall and CPU seconds."""
    runner = BENCH_DIR / "ragas_runner.py"
    runner.write_text(RAGAS_RUNNER)
    env = {**os.environ, "RAGAS_DO_NOT_TRACK": "true", "OPENAI_API_KEY": "bench-key",
           "OPENAI_BASE_URL": base_url}  # fmt: skip
    done = subprocess.run([str(python), str(runner), base_url, str(n), workers],
                          check=False, capture_output=True, text=True, env=env)  # fmt: skip
    if done.returncode != 0:
        raise RuntimeError(f"ragas runner failed:\n{done.stderr[-2000:]}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


# -- the report -------------------------------------------------------------------------------


def _walls(ragas: dict[str, float], ours: dict[str, float], limit: float) -> str:
    return (
        f"wall {ragas['wall']:.3f} s = {ragas['wall'] / ours['wall']:.2f} x agent-eval's, "
        f"{ragas['wall'] / limit:.2f} x the limit ({ragas['scored']:.0f} scored)"
    )


FLOOR = "floor: bare aiohttp"
ONE_SERVER = "floor, 1 server process"
AIOHTTP_FLOOR = "floor: bare aiohttp post + orjson + pydantic"
OPENAI_FLOOR = "floor: openai 3 AsyncOpenAI.post on its aiohttp client"


Row = tuple[str, str, str, Path | None, str]
"""A wall row: (name, worker kind, server URL, tree, loop)."""


def wall_rows(
    rows: list[Row], n: int, concurrency: int, latency: float, reps: int, width: int
) -> dict[str, float]:
    """Measure and print each row's best wall of ``reps`` (repetitions alternate the rows),
    against the limit and against the same loop's bare-aiohttp floor; the best walls by name."""
    limit = 2 * latency * math.ceil(n / concurrency)
    runs: dict[str, list[dict[str, Any]]] = {row[0]: [] for row in rows}
    for _ in range(reps):
        for name, kind, url, tree, loop in rows:
            runs[name].append(measure(kind, url, n, concurrency, tree, loop=loop))
    walls = {name: min(r["wall"] for r in results) for name, results in runs.items()}
    for name, _kind, _url, _tree, loop in rows:
        wall, floor_wall = walls[name], walls[f"{FLOOR} [{loop}]"]
        print(f"    C={concurrency:<3} {name:<{width}}  wall {wall:.3f} s = "
              f"{wall / limit:.3f} x the limit {limit:.3f} s, "
              f"{wall / floor_wall:.3f} x the {loop} floor "
              f"({runs[name][0]['scored']:.0f} scored, {runs[name][0]['requests']:.0f} "
              f"requests)")  # fmt: skip
    return walls


def where_the_excess_goes(
    url: str, n: int, concurrency: int, latency_ms: float, loop: str, trees: dict[str, Path | None]
) -> None:
    """Print :func:`excess_parts` of one timed run of the engine (of each tree) and the floor."""
    latency = latency_ms / 1000
    waves = math.ceil(n / concurrency)
    limit = 2 * latency * waves
    print(f"  where the excess goes, C={concurrency}, L={latency_ms:g} ms, [{loop}], one timed "
          f"run each; per conversation, ms, and x the times it adds up on one slot's "
          f"chain ({waves} waves):")  # fmt: skip
    clients = [(f"agent-eval, {name}", "engine-timeline", tree) for name, tree in trees.items()]
    for name, kind, tree in [*clients, (FLOOR, "aiohttp-timeline", None)]:
        with tempfile.TemporaryDirectory(dir=BENCH_DIR) as out:  # the timeline, as JSON
            timeline = Path(out) / "timeline.json"
            result = measure(kind, url, n, concurrency, tree, cache=timeline, loop=loop)
            parts = excess_parts(json.loads(timeline.read_bytes()), concurrency, latency)
        count = parts.pop("conversations")
        print(f"    {name}: wall {result['wall']:.3f} s = {result['wall'] / limit:.3f} x the "
              f"limit, excess {(result['wall'] - limit) * 1000:.0f} ms; "
              f"{count:.0f} conversations timed")  # fmt: skip
        explained = 0.0
        for part, seconds in parts.items():
            times = {"call beyond L": 2 * waves, "spread of the first starts": 1}.get(part, waves)
            explained += seconds * times
            print(f"      {part:<36} {seconds * 1000:7.2f} ms x {times:<3} = "
                  f"{seconds * times * 1000:6.0f} ms")  # fmt: skip
        print(f"      {'sum':<36} {'':>16} {explained * 1000:6.0f} ms")


def available_loops(wanted: list[str]) -> list[str]:
    """The loops of ``wanted`` that can run here (uvloop only when it is installed)."""
    chosen = []
    for loop in wanted:
        if loop == "uvloop":
            try:
                import uvloop  # noqa: F401
            except ImportError:
                print("  (uvloop is not installed: its rows are left out)")
                continue
        elif loop != "asyncio":
            raise SystemExit(f"unknown event loop {loop!r}: asyncio or uvloop")
        chosen.append(loop)
    return chosen or ["asyncio"]


def _ms(result: dict[str, Any]) -> float:
    return float(result["cpu"]) / float(result["requests"]) * 1000


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--worker":
        kind, url, n, concurrency, cache, loop = sys.argv[2:8]
        worker(kind, url, int(n), int(concurrency), cache or None, loop)
        return 0
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--n", type=int, default=1000)
    parser.add_argument("--latency-ms", default="100",
                        help="comma-separated; the first with --n and every row, the others "
                        "(a sweep) with --sweep-waves waves per concurrency")  # fmt: skip
    parser.add_argument("--sweep-waves", type=int, default=4,
                        help="N = this x C for the sweep's latencies after the first")  # fmt: skip
    parser.add_argument("--concurrency", default="16,64", help="comma-separated, for walls")
    parser.add_argument("--cpu-n", type=int, default=1000, help="conversations for CPU runs")
    parser.add_argument("--cpu-concurrency", type=int, default=256)
    parser.add_argument("--ragas-cpu-n", type=int, default=300)
    parser.add_argument("--reps", type=int, default=3, help="repetitions; the best is shown")
    parser.add_argument("--baseline", metavar="REV", help="also measure git revision REV")
    parser.add_argument("--store-rows", type=int, default=20000, help="rows for [5]")
    parser.add_argument("--server-processes", type=int, default=2,
                        help="fake-server processes on one port, for [1]")  # fmt: skip
    parser.add_argument("--loops", default="asyncio,uvloop",
                        help="event loops the clients run on, comma-separated")  # fmt: skip
    parser.add_argument("--skip-ragas", action="store_true")
    args = parser.parse_args()
    BENCH_DIR.mkdir(exist_ok=True)
    loops = available_loops(args.loops.split(","))
    CHOSEN["loop"] = LOOP = loops[
        -1
    ]  # the cached re-run, the profile and Ragas' comparison use the last
    n = args.n
    latencies = [float(ms) for ms in args.latency_ms.split(",")]
    first_ms, sweep = latencies[0], latencies[1:]
    levels = [int(c) for c in args.concurrency.split(",")]
    trees: dict[str, Path | None] = {"this checkout": None}
    if args.baseline:
        trees[f"baseline {args.baseline}"] = baseline_tree(args.baseline)
    width = max(len(name) for name in [*trees, FLOOR, ONE_SERVER]) + len(" [uvloop]")
    print(f"N={n} conversations x 2 judge calls, latency {first_ms:g} ms; "
          f"best of {args.reps} repetitions, each client in its own process; event loops "
          f"{', '.join(loops)} (the fake server runs on agent-eval's default loop)")  # fmt: skip
    servers = args.server_processes
    with (
        fake_server(first_ms, servers) as slow_url,
        fake_server(first_ms) as single_url,
        fake_server(0) as fast_url,
    ):
        print(f"\n[1] wall against the limit 2 x L x ceil(N/C), {servers} fake-server "
              f"process(es) on one port; '{ONE_SERVER}': the same floor against a single "
              "server process (the server's own share of the excess):")  # fmt: skip
        first: dict[str, Any] = {}
        for concurrency in levels:
            rows = [(f"{name} [{loop}]", "engine", slow_url, tree, loop)
                    for loop in loops for name, tree in trees.items()]  # fmt: skip
            rows += [(f"{FLOOR} [{loop}]", "aiohttp-pairs", slow_url, None, loop) for loop in loops]
            if servers > 1:
                one = loops[0]  # asyncio, unless --loops leaves it out
                rows.append((f"{ONE_SERVER} [{one}]", "aiohttp-pairs", single_url, None, one))
            walls = wall_rows(rows, n, concurrency, first_ms / 1000, args.reps, width)
            first = {"wall": walls[f"this checkout [{LOOP}]"],
                     "limit": 2 * first_ms / 1000 * math.ceil(n / concurrency)}  # fmt: skip
        where_the_excess_goes(slow_url, n, levels[-1], first_ms, LOOP, trees)
        for ms in sweep:
            with fake_server(ms, servers) as url:
                print(f"\n[1] latency sweep, L={ms:g} ms, N={args.sweep_waves} x C "
                      f"(--sweep-waves; ceil(N/C) = {args.sweep_waves} waves), {LOOP} loop, "
                      f"best of {args.reps}:")  # fmt: skip
                for concurrency in levels:
                    rows = [(f"{name} [{LOOP}]", "engine", url, tree, LOOP)
                            for name, tree in trees.items()]  # fmt: skip
                    rows.append((f"{FLOOR} [{LOOP}]", "aiohttp-pairs", url, None, LOOP))
                    wall_rows(rows, args.sweep_waves * concurrency, concurrency, ms / 1000,
                              args.reps, width)  # fmt: skip
        concurrency = levels[-1]
        cache = Path(tempfile.mkdtemp(dir=BENCH_DIR)) / "judge-cache.db"
        filled = measure("engine", slow_url, n, concurrency, cache=cache, loop=LOOP)
        again = measure("engine", slow_url, n, concurrency, cache=cache, loop=LOOP)
        print(f"[4] cached re-run at C={concurrency} [{LOOP}]: wall {again['wall']:.3f} s = "
              f"{again['wall'] / filled['wall']:.4f} x the first run "
              f"({again['requests']:.0f} requests)")  # fmt: skip
        store_runs: dict[str, list[dict[str, Any]]] = {name: [] for name in trees}
        for _ in range(args.reps):
            for name, tree in trees.items():
                store_runs[name].append(measure("store", "", args.store_rows, 0, tree))
        print(f"[5] results store, {args.store_rows} rows added and closed:")
        for name, results in store_runs.items():
            chosen = best(results)
            per_row = chosen["cpu"] / args.store_rows * 1e6
            wall_row = chosen["best_wall"] / args.store_rows * 1e6
            print(f"    {name:<{width}}  {per_row:.1f} us CPU per row, {wall_row:.1f} us wall")

        cpu_c, cpu_n = args.cpu_concurrency, args.cpu_n
        print(f"\n[2] client CPU per judge call at latency 0, C={cpu_c}, "
              f"{cpu_n} conversations:")  # fmt: skip
        kinds: dict[str, tuple[str, Path | None, str]] = {}
        for loop in loops:
            for name, tree in trees.items():
                kinds[f"agent-eval, {name} [{loop}]"] = ("engine", tree, loop)
            kinds[f"OpenAIJudge.ask alone, this checkout [{loop}]"] = ("judge", None, loop)
            kinds[f"{AIOHTTP_FLOOR} [{loop}]"] = ("aiohttp", None, loop)
        kinds[f"{OPENAI_FLOOR} [asyncio]"] = ("openai", None, "asyncio")
        cpu_runs: dict[str, list[dict[str, Any]]] = {label: [] for label in kinds}
        for _ in range(args.reps):
            for label, (kind, tree, loop) in kinds.items():
                cpu_runs[label].append(measure(kind, fast_url, cpu_n, cpu_c, tree, loop=loop))
        cpu = {label: best(results) for label, results in cpu_runs.items()}
        ours_ms = _ms(cpu[f"agent-eval, this checkout [{LOOP}]"])
        floor_ms = _ms(cpu[f"{AIOHTTP_FLOOR} [{loops[0]}]"])  # asyncio's: one yardstick
        label_width = max(len(label) for label in kinds)
        for label, result in cpu.items():
            ms = _ms(result)
            print(f"    {label:<{label_width}}  {ms:.3f} ms = {1000 / ms:,.0f} calls/s of one "
                  f"core, {ms / floor_ms:.2f} x the aiohttp floor [{loops[0]}]")  # fmt: skip
        # asyncio's loop: its idle wait is a Python frame (select) that the profile can leave
        # out; uvloop waits inside C, where it cannot be told apart from the loop's work
        print("  profile of agent-eval, this checkout [asyncio]:")
        CHOSEN["loop"] = "asyncio"
        profile_ours(fast_url, conversations(cpu_n), cpu_c)
        if args.skip_ragas:
            print("\n[3] Ragas: skipped (--skip-ragas)")
            return 0
        python = ragas_python()
        if python is None:
            print("\n[3] Ragas: skipped (could not install it; see the message above)")
            return 0
        limit = first["limit"]
        ours = {"wall": first["wall"]}
        default = run_ragas(python, slow_url, n, "default")
        equal = run_ragas(python, slow_url, n, str(concurrency))
        ragas_cpu = run_ragas(python, fast_url, args.ragas_cpu_n, str(cpu_c))
        ragas_cpu_ms = ragas_cpu["cpu"] / (2 * args.ragas_cpu_n) * 1000
        workers = f"{default['max_workers']:.0f}"
        print(
            f"\n[3] Ragas 0.4.3 at its defaults (max_workers={workers}): "
            + _walls(default, ours, limit)
        )
        print(f"    Ragas at equal concurrency ({concurrency}): " + _walls(equal, ours, limit))
        print(f"    client CPU per judge call at latency 0 (C={cpu_c}): Ragas "
              f"{ragas_cpu_ms:.3f} ms; agent-eval {ours_ms:.3f} ms = "
              f"{ours_ms / ragas_cpu_ms:.3f} x Ragas")  # fmt: skip
        for name in trees:
            if name != "this checkout":
                base_ms = _ms(cpu[f"agent-eval, {name} [{LOOP}]"])
                print(f"    agent-eval {name}: {base_ms:.3f} ms = "
                      f"{base_ms / ragas_cpu_ms:.3f} x Ragas")  # fmt: skip
    return 0


if __name__ == "__main__":
    sys.exit(main())
