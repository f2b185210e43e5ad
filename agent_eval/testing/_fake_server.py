"""The fake OpenAI-compatible model server, and its command line for benchmarks.

The server is :class:`~agent_eval.testing._server.FakeModelServer` (re-exported here). Run it as
a process (it prints its base URL as the first line of stdout, then serves until SIGINT or
SIGTERM)::

    python -m agent_eval.testing --port 0 --latency-ms 100
    # options: --jitter-ms 20  --script rules.json  --fault-rate 0.3  --seed 0

The script format is documented in :mod:`agent_eval.testing._script`.
"""

from __future__ import annotations

import argparse
import signal
import sys
import threading
from collections.abc import Sequence

from agent_eval.testing._script import load_script
from agent_eval.testing._server import FakeModelServer

__all__ = ["FakeModelServer", "main"]


def main(argv: Sequence[str] | None = None) -> int:
    """Run the server as a process until SIGINT/SIGTERM; prints the base URL first.

    Returns 0 after a stop, 1 (with a one-line error on stderr) when the port cannot be bound.
    """
    parser = argparse.ArgumentParser(prog="python -m agent_eval.testing")
    parser.add_argument("--port", type=int, default=0, help="port to bind (0: a free one)")
    parser.add_argument("--latency-ms", type=float, default=0.0)
    parser.add_argument("--jitter-ms", type=float, default=0.0)
    parser.add_argument("--script", help="JSON file of rules (see agent_eval.testing._script)")
    parser.add_argument("--fault-rate", type=float, default=0.0)
    parser.add_argument("--seed", type=int, default=0)
    args = parser.parse_args(argv)
    server = FakeModelServer(
        args.latency_ms / 1000, args.seed, jitter=args.jitter_ms / 1000,
        fault_rate=args.fault_rate, port=args.port,
    )  # fmt: skip
    if args.script:
        load_script(args.script, server)
    stopped = threading.Event()
    for signum in (signal.SIGINT, signal.SIGTERM):
        signal.signal(signum, lambda *_: stopped.set())
    try:
        server.start()
    except OSError as exc:  # the port is taken (or not ours to bind): one line, no traceback
        print(
            f"error: cannot listen on 127.0.0.1:{args.port}: {exc.strerror or exc}; choose "
            "another --port, or --port 0 for a free one (the base URL is printed first)",
            file=sys.stderr,
        )
        return 1
    try:
        print(server.base_url, flush=True)
        while not stopped.wait(0.5):
            pass
    finally:
        server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
