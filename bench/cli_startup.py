"""CLI start-up: ``agent-eval --help`` and ``agent-eval ingest`` of a small file.

Each command runs in a fresh subprocess ``--repeats`` times; the best wall and CPU time
(user + system of the child, from ``getrusage``) are printed with the same-run baseline of
``python -c pass`` (interpreter start-up alone), and the net figure (command - baseline).
Goal (issue 15): each command under 0.3 s wall on a quiet machine; on a shared one read the
CPU column. ``--importtime`` also prints the slowest imports of ``ingest`` (``-X importtime``).

Child processes get a bytecode cache (``PYTHONPYCACHEPREFIX`` in the temporary directory, written
by one untimed run of each command), as an installed package has, even where
``PYTHONDONTWRITEBYTECODE`` is set: otherwise every run would compile the project's modules again.
They run in an empty directory of their own: ``python -c`` puts the working directory first on
``sys.path`` (the console script does not), and every import then lists it, so a crowded one (a
shared ``/tmp``) added its listing to every figure, and moved it as files came and went.

The ``typer + pydantic floor`` row is what the two libraries every command needs cost on their
own (``import typer``, one pydantic model, one ``TypeAdapter``, ``importlib.metadata``): the
part of the figures no change in agent-eval can remove.

    python bench/cli_startup.py [--repeats 7] [--importtime]
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
SMALL = REPO / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"
CLI = "from agent_eval.cli import main; main()"
FLOOR = (
    "import importlib.metadata, typer, typer.main\n"
    "from pydantic import BaseModel, TypeAdapter\n"
    "class A(BaseModel):\n    x: int\n"
    "A(x=1); TypeAdapter(list[str])\n"
)


def _env(pycache: str) -> dict[str, str]:
    """The environment of the children: bytecode written to and read from ``pycache``."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    return {**env, "PYTHONPYCACHEPREFIX": pycache}


def _run(args: list[str], env: dict[str, str]) -> tuple[float, float]:
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    wall = time.perf_counter()
    subprocess.run(args, check=True, capture_output=True, cwd=env["AGENT_EVAL_BENCH_CWD"], env=env)
    wall = time.perf_counter() - wall
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    return wall, cpu


def _best(args: list[str], repeats: int, env: dict[str, str]) -> tuple[float, float]:
    _run(args, env)  # writes the bytecode cache; not timed
    runs = [_run(args, env) for _ in range(repeats)]
    return min(w for w, _ in runs), min(c for _, c in runs)


def _importtime(args: list[str], env: dict[str, str]) -> None:
    proc = subprocess.run(
        [sys.executable, "-X", "importtime", *args],
        capture_output=True,
        text=True,
        check=True,
        cwd=env["AGENT_EVAL_BENCH_CWD"],
        env=env,
    )
    rows = []
    for line in proc.stderr.splitlines()[1:]:
        parts = line.split("|")
        if len(parts) == 3 and parts[0].startswith("import time:"):
            name = parts[2]
            if len(name) - len(name.lstrip()) <= 3:  # top-level imports of the command
                rows.append((int(parts[1]), name.strip()))
    for cumulative, name in sorted(rows, reverse=True)[:8]:
        print(f"    {cumulative / 1e6:6.3f} s  {name}")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=7)
    parser.add_argument("--importtime", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "traces.jsonl")
        env = _env(os.path.join(folder, "pycache"))
        env["AGENT_EVAL_BENCH_CWD"] = os.path.join(folder, "cwd")  # empty: see the docstring
        os.mkdir(env["AGENT_EVAL_BENCH_CWD"])
        commands = {
            "python -c pass (baseline)": [sys.executable, "-c", "pass"],
            "typer + pydantic floor": [sys.executable, "-c", FLOOR],
            "agent-eval --help": [sys.executable, "-c", CLI, "--help"],
            "agent-eval ingest SMALL": [sys.executable, "-c", CLI, "ingest", str(SMALL), "-o", out],
        }
        results = {name: _best(cmd, args.repeats, env) for name, cmd in commands.items()}
        base_wall, base_cpu = results["python -c pass (baseline)"]
        print(f"best of {args.repeats}; wall and CPU (user + sys) of the child process")
        for name, (wall, cpu) in results.items():
            print(
                f"{name:28} {wall:6.3f} s wall {cpu:6.3f} s CPU   net of baseline "
                f"{wall - base_wall:6.3f} s wall {cpu - base_cpu:6.3f} s CPU   "
                f"{cpu / base_cpu:5.1f}x baseline CPU"
            )
        if args.importtime:
            print("slowest top-level imports of `agent-eval ingest SMALL`:")
            _importtime(["-c", CLI, "ingest", str(SMALL), "-o", os.devnull], env)


if __name__ == "__main__":
    main()
