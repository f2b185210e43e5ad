"""``score`` without repeated work: ingest alone vs a first score run vs a fully cached re-run.

Writes a Collector-style OTLP/JSON Lines file of ``--conversations`` GenAI v1.37 agent
conversations (each: ``--turns`` user turns, a tool call and its result per turn, a final text
answer), starts the fake OpenAI-compatible judge (``agent_eval.testing``, latency 0) answering
goal accuracy, then runs, each as its own ``agent-eval`` process (best of ``--repeats``):

- baseline: ``agent-eval ingest FILE --out traces.jsonl`` (the same input, ingest alone);
- first: ``agent-eval score FILE --metric goal_accuracy ... --out DIR`` with an empty judge-call
  cache (every call reaches the fake judge);
- cached: the same command into a new ``--out`` (every answer comes from the judge-call cache).

Child processes get a bytecode cache (``PYTHONPYCACHEPREFIX`` in the temporary directory), as
an installed package has, even where ``PYTHONDONTWRITEBYTECODE`` is set. The script prints wall
and CPU seconds of each process (CPU = user + system of the child, so other
load on the machine skews it less than wall), each ratio to the ingest baseline measured in the
same run (goal: cached re-run < 1.5x ingest), and whether the cached re-run imported openai.

    python bench/score_rerun.py [--conversations 1000] [--turns 3] [--repeats 3]
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

import orjson

from agent_eval.testing import FakeModelServer
from agent_eval.testing._otlp import export_request, span
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[1]
BATCH = 512
SENTENCE = "the flight to paris was rebooked because the customer asked for an aisle seat"
WORDS = SENTENCE.split()


def _text(seed: int, words: int) -> str:
    return " ".join(WORDS[(seed * 7 + i) % len(WORDS)] for i in range(words))


def _parts(role: str, text: str) -> dict[str, Any]:
    return {"role": role, "parts": [{"type": "text", "content": text}]}


def _conversation(conv: int, turns: int) -> list[dict[str, Any]]:
    """One conversation as one trace: per turn a chat span calling a tool, its tool span, and a
    final chat span answering in text."""
    trace_id = f"{conv + 1:032x}"
    t0 = 1_700_000_000_000_000_000 + conv * 10**12
    history: list[dict[str, Any]] = [_parts("system", _text(conv, 20))]
    spans = []
    for turn in range(turns):
        history.append(_parts("user", _text(turn + conv, 18)))
        call_id = f"call_{conv}_{turn}"
        call = {
            "role": "assistant",
            "parts": [{"type": "tool_call", "id": call_id, "name": "lookup",
                       "arguments": {"booking": conv, "turn": turn}}],
        }  # fmt: skip
        answer = _parts("assistant", _text(turn * 3 + conv, 22))
        for step, output in enumerate((call, answer)):
            spans.append(
                span(
                    trace_id,
                    f"{conv + 1:08x}{turn + 1:04x}{step + 1:04x}",
                    "chat gpt-4o",
                    kind=3,
                    start=t0 + (turn * 3 + step * 2) * 10**9,
                    attributes={
                        "gen_ai.operation.name": "chat",
                        "gen_ai.request.model": "gpt-4o",
                        "gen_ai.conversation.id": f"conv-{conv}",
                        "gen_ai.usage.input_tokens": 100 + turn,
                        "gen_ai.usage.output_tokens": 20,
                        "gen_ai.input.messages": json.dumps(history),
                        "gen_ai.output.messages": json.dumps([output]),
                    },
                )
            )
            if step == 0:
                result = _text(turn + conv * 5, 15)
                history += [
                    call,
                    {"role": "tool", "parts": [{"type": "tool_call_response", "id": call_id,
                                                "response": result}]},
                ]  # fmt: skip
        history.append(answer)
    return spans


def generate(path: Path, conversations: int, turns: int) -> int:
    """Write the OTLP/JSON Lines file; returns its size in bytes."""
    spans = [s for c in range(conversations) for s in _conversation(c, turns)]
    with path.open("wb") as handle:
        for i in range(0, len(spans), BATCH):
            handle.write(orjson.dumps(export_request(spans[i : i + BATCH])) + b"\n")
    return path.stat().st_size


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, float]:
    """Run ``argv``; (wall, CPU) seconds of that child process."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, check=False)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} failed ({done.returncode}):\n{done.stderr.decode()[-2000:]}")
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _best(runs: list[tuple[float, float]]) -> tuple[float, float]:
    return min(w for w, _ in runs), min(c for _, c in runs)


_CLI = "import sys; from agent_eval.cli import main; sys.argv[0] = 'agent-eval'; main()"
"""``agent-eval`` as its console script runs it (from the ``agent_eval`` on ``sys.path``)."""

_PROBE = (
    "import atexit, sys\n"
    "atexit.register(lambda: print('openai imported:', 'openai' in sys.modules, file=sys.stderr))\n"
    "from agent_eval.cli import main\n"
    "sys.argv = ['agent-eval', *sys.argv[1:]]\n"
    "main()\n"
)
"""Runs the command and says, as the process exits, whether it imported openai."""


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--conversations", type=int, default=1000)
    parser.add_argument("--turns", type=int, default=3)
    parser.add_argument("--repeats", type=int, default=3)
    args = parser.parse_args()
    cli = [sys.executable, "-c", _CLI]
    with tempfile.TemporaryDirectory() as tmp, FakeModelServer() as server:
        work = Path(tmp)
        load_script(ROOT / "fixtures" / "fake-judge.json", server)
        data = work / "spans.otlp.jsonl"
        size = generate(data, args.conversations, args.turns)
        env = {
            **{k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"},
            "AGENT_EVAL_CACHE_PATH": str(work / "judge-cache.db"),
            "PYTHONPYCACHEPREFIX": str(work / "pycache"),  # bytecode cached, as installed
        }
        score = [*cli, "score", str(data), "--metric", "goal_accuracy", "--judge", "fake",
                 "--base-url", server.base_url]  # fmt: skip
        _run([*cli, "--help"], env)  # writes the bytecode cache once
        ingest, first, cached = [], [], []
        for k in range(args.repeats):
            ingest.append(_run([*cli, "ingest", str(data), "--out", str(work / "t.jsonl")], env))
            (work / "judge-cache.db").unlink(missing_ok=True)
            first.append(_run([*score, "--out", str(work / f"first{k}")], env))
            cached.append(_run([*score, "--out", str(work / f"cached{k}")], env))
            shutil.rmtree(work / f"first{k}")
            shutil.rmtree(work / f"cached{k}")
        probe = subprocess.run(
            [sys.executable, "-c", _PROBE, *score[3:], "--out", str(work / "probe")],
            env=env, capture_output=True, check=False,
        )  # fmt: skip
        openai_line = [
            line for line in probe.stderr.decode().splitlines() if "openai imported" in line
        ]
    base_wall, base_cpu = _best(ingest)
    print(
        f"{args.conversations} conversations x {args.turns} turns, OTLP/JSON Lines "
        f"{size / 1e6:.1f} MB; best of {args.repeats}; fake judge, latency 0"
    )
    print(f"{'':28} {'wall s':>7} {'CPU s':>7} {'wall x':>7} {'CPU x':>7}")
    for name, runs in (
        ("ingest alone (baseline)", ingest),
        ("score, first run", first),
        ("score, fully cached re-run", cached),
    ):
        wall, cpu = _best(runs)
        print(f"{name:28} {wall:7.2f} {cpu:7.2f} {wall / base_wall:7.2f} {cpu / base_cpu:7.2f}")
    print(f"cached re-run (goal < 1.5x ingest): {(openai_line or ['openai imported: ?'])[0]}")


if __name__ == "__main__":
    main()
