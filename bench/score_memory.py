"""``score`` peak memory against the input size: bounded by the conversations in flight?

Generates Collector-style OTLP/JSON Lines files (``bench/ingest.py``'s traffic: ``--turns``
per conversation, ``--inflight`` conversations interleaved) of each ``--sizes`` MiB and runs,
each in a fresh process of the CLI, ``agent-eval ingest`` (the same-run baseline: ingest
streams), ``agent-eval score --dry-run`` and a real ``agent-eval score`` (goal accuracy,
``transcript@1``, against the fake OpenAI-compatible judge of :mod:`agent_eval.testing`,
started here in its own process, cache off). Prints each one's peak RSS (``ru_maxrss`` of the
child, from :func:`os.wait4`) and CPU time, then per command the growth from the smallest to
the largest input: RSS growth / file growth (issue 15's goal for ingest: < 0.15), and the
ratio of its peak to ``ingest``'s on the largest file.

Run it with the tree to measure (the package its Python imports):

    python bench/score_memory.py [--sizes 100 1000] [--quick] [--commands ingest dry score]
    cd /tmp && /work/base6/.venv/bin/python /path/to/bench/score_memory.py ...  # baseline
"""

from __future__ import annotations

import argparse
import os
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))

from ingest import generate  # bench/ingest.py

ROOT = Path(__file__).resolve().parents[1]
SPANS_PER_MIB = 955
"""About how many spans of this traffic make a MiB (5 turns; measured, ``ingest_memory.py``)."""

CLI = "import sys; from agent_eval.cli import main; sys.argv[0] = 'agent-eval'; main()"


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port: int = sock.getsockname()[1]
        return port


def _run(args: list[str], cwd: Path) -> dict[str, Any]:
    """Run the CLI with ``args`` in a child; its peak RSS (MiB), CPU seconds and exit code."""
    start = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-c", CLI, *args],
        cwd=cwd,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        env=os.environ | {"AGENT_EVAL_CACHE_PATH": str(cwd / "cache.db"), "COLUMNS": "120"},
    )
    assert proc.stderr is not None
    err = proc.stderr.read()
    _, status, usage = os.wait4(proc.pid, 0)
    proc.returncode = os.waitstatus_to_exitcode(status)
    if proc.returncode != 0:
        raise SystemExit(f"{args[0]} exited {proc.returncode}: {err.decode()[-2000:]}")
    return {
        "peak_mib": usage.ru_maxrss / 1024,
        "cpu": usage.ru_utime + usage.ru_stime,
        "wall": time.perf_counter() - start,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--sizes", type=int, nargs="+", default=[100, 1000], help="MiB")
    parser.add_argument("--quick", action="store_true", help="sizes 5 and 50 MiB")
    parser.add_argument("--turns", type=int, default=6)
    parser.add_argument("--inflight", type=int, default=40)
    kinds = ["ingest", "dry", "score"]
    parser.add_argument("--commands", nargs="+", default=kinds, choices=kinds)
    args = parser.parse_args()
    sizes = [5, 50] if args.quick else args.sizes
    import agent_eval

    print(f"tree: {Path(agent_eval.__file__).parent.parent}", flush=True)
    port = _free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "agent_eval.testing._fake_server", "--port", str(port),
         "--script", str(ROOT / "fixtures" / "fake-judge.json")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
    )  # fmt: skip
    judge = ["--judge", "fake", "--base-url", f"http://127.0.0.1:{port}/v1"]
    rows: list[tuple[float, dict[str, dict[str, Any]]]] = []
    try:
        time.sleep(2.0)  # the server binds its port
        with tempfile.TemporaryDirectory() as folder:
            work = Path(folder)
            for size in sizes:
                path = work / f"spans-{size}.otlp.jsonl"
                spans = size * SPANS_PER_MIB * 5 // args.turns
                n = generate(path, spans, args.turns, args.inflight)
                mib = path.stat().st_size / 2**20
                common = [str(path), "--formatter", "transcript@1", *judge]
                commands = {
                    "ingest": ["ingest", str(path), "--out", str(work / "out.jsonl")],
                    "dry": ["score", *common, "--dry-run", "--out", str(work / "dry")],
                    "score": ["score", *common, "--no-cache", "--out", str(work / f"run-{size}")],
                }
                measured = {}
                for command in args.commands:  # each one as it ends (a 1 GiB run is long)
                    measured[command] = m = _run(commands[command], work)
                    print(f"  {command}: {m['peak_mib']:.0f} MiB, {m['wall']:.0f} s", flush=True)
                path.unlink()
                rows.append((mib, measured))
                shown = "; ".join(
                    f"{c} {m['peak_mib']:6.0f} MiB, CPU {m['cpu']:6.1f} s"
                    for c, m in measured.items()
                )
                print(f"{mib:7.0f} MiB, {n:>9,} spans: peak RSS {shown}", flush=True)
    finally:
        server.terminate()
        server.wait()
    (small, *_, large) = rows
    for command in args.commands:
        growth = (large[1][command]["peak_mib"] - small[1][command]["peak_mib"]) / (
            large[0] - small[0]
        )
        versus = ""
        if "ingest" in large[1]:
            ratio = large[1][command]["peak_mib"] / large[1]["ingest"]["peak_mib"]
            versus = f"; peak = {ratio:.2f}x ingest's on {large[0]:.0f} MiB"
        print(
            f"{command}: RSS growth / file growth from {small[0]:.0f} to {large[0]:.0f} MiB: "
            f"{growth:.3f} (goal < 0.15){versus}"
        )


if __name__ == "__main__":
    main()
