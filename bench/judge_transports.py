"""Client CPU per judge call of each ``openai``-judge transport, against the built-in one, same run.

The fake OpenAI-compatible server (``python -m agent_eval.testing._fake_server``, latency 0) runs
in a process of its own; each transport is measured in a fresh interpreter of its own, warmed up
first, as ``time.process_time`` of that client process over ``--calls`` ``Judge.ask`` calls
with ``--concurrency`` in flight (the server's CPU is not counted). Transports:

- ``builtin``: ``OpenAIJudge(model, base_url=...)``, the aiohttp transport (the baseline);
- ``openai-client``: ``OpenAIJudge(model, client=openai.AsyncOpenAI(...))``;
- ``azure-client``: ``OpenAIJudge(model, client=openai.AsyncAzureOpenAI(...,
  azure_ad_token_provider=...))`` (Azure's deployment path on the fake server);
- ``instructor``: ``InstructorJudge(instructor.from_openai(AsyncOpenAI(...)))``, run by
  ``.venv-instructor/bin/python`` when that environment exists (``.ci/run`` makes it).

Each figure is the least CPU of ``--reps`` repetitions (the machine may be shared). Prints CPU
milliseconds per call, calls per second of one core, and the ratio to ``builtin``.

Usage::

    .venv/bin/python bench/judge_transports.py [--calls 2000] [--concurrency 32] [--reps 3]
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
INSTRUCTOR_PYTHON = ROOT / ".venv-instructor" / "bin" / "python"
RULES = {"rules": [{"reply": {"structured": {"reason": "r", "verdict": "1"}}}]}

CLIENT = r"""
import asyncio, sys, time
from agent_eval.judges._base import JudgeRequest
from agent_eval.metrics._goal_accuracy import OutcomeComparison

kind, base_url, calls, concurrency = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4])
root = base_url.removesuffix("/v1")
request = JudgeRequest(
    messages=({"role": "system", "content": "Judge the case." * 20},
              {"role": "user", "content": "Did the agent reach the goal? " * 40}),
    response_model=OutcomeComparison,
)


def build():
    if kind == "builtin":
        from agent_eval.judges._openai_judge import OpenAIJudge
        return OpenAIJudge("bench-model", base_url=base_url, api_key="bench-key"), None
    import openai
    if kind == "openai-client":
        from agent_eval.judges._openai_judge import OpenAIJudge
        client = openai.AsyncOpenAI(base_url=base_url, api_key="bench-key")
        return OpenAIJudge("bench-model", client=client), client
    if kind == "azure-client":
        from agent_eval.judges._openai_judge import OpenAIJudge
        async def token():
            return "ad-token"
        client = openai.AsyncAzureOpenAI(
            azure_endpoint=root, api_version="2024-10-21", azure_ad_token_provider=token
        )
        return OpenAIJudge("bench-model", client=client), client
    import instructor
    from agent_eval.judges._instructor_judge import InstructorJudge
    client = openai.AsyncOpenAI(base_url=base_url, api_key="bench-key", max_retries=0)
    return InstructorJudge(instructor.from_openai(client), model="bench-model"), client


async def run(judge, n):
    gate = asyncio.Semaphore(concurrency)

    async def one():
        async with gate:
            reply = await judge.ask(request)
            assert reply.output.verdict == "1"

    await asyncio.gather(*(one() for _ in range(n)))


async def main():
    judge, client = build()
    await run(judge, 200)  # warm-up: imports, connections, schema caches
    start = time.process_time()
    await run(judge, calls)
    cpu = time.process_time() - start
    await judge.aclose()
    if client is not None:
        await client.close()
    print(cpu / calls * 1000)


asyncio.run(main())
"""


def measure(python: Path, kind: str, base_url: str, calls: int, concurrency: int) -> float:
    """CPU milliseconds per call of ``kind`` in a fresh ``python`` process."""
    done = subprocess.run(
        [str(python), "-c", CLIENT, kind, base_url, str(calls), str(concurrency)],
        capture_output=True, text=True, check=False, cwd=ROOT, timeout=600,
    )  # fmt: skip
    if done.returncode != 0:
        raise SystemExit(f"{kind} failed:\n{done.stderr[-2000:]}")
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--concurrency", type=int, default=32)
    parser.add_argument("--reps", type=int, default=3)
    args = parser.parse_args()
    kinds = [("builtin", Path(sys.executable)), ("openai-client", Path(sys.executable))]
    kinds.append(("azure-client", Path(sys.executable)))
    if INSTRUCTOR_PYTHON.exists():
        kinds.append(("instructor", INSTRUCTOR_PYTHON))
    with tempfile.TemporaryDirectory() as scratch:
        script = Path(scratch) / "rules.json"
        script.write_text(json.dumps(RULES))
        server = subprocess.Popen(
            [sys.executable, "-m", "agent_eval.testing._fake_server", "--script", str(script)],
            stdout=subprocess.PIPE, text=True, cwd=ROOT,
        )  # fmt: skip
        try:
            assert server.stdout is not None
            base_url = server.stdout.readline().strip()
            best = {kind: float("inf") for kind, _ in kinds}
            for _ in range(args.reps):  # interleaved, so a busy moment hits every transport
                for kind, python in kinds:
                    cpu = measure(python, kind, base_url, args.calls, args.concurrency)
                    best[kind] = min(best[kind], cpu)
        finally:
            server.terminate()
            server.wait(timeout=30)
    print(f"client CPU per judge call, {args.calls} calls, concurrency {args.concurrency}, "
          f"best of {args.reps} (fake server at latency 0, in its own process)")  # fmt: skip
    baseline = best["builtin"]
    for kind, _ in kinds:
        ms = best[kind]
        print(f"  {kind:14s} {ms:7.3f} ms/call  {1000 / ms:7.0f} calls/s/core  "
              f"x{ms / baseline:5.2f} vs builtin")  # fmt: skip


if __name__ == "__main__":
    main()
