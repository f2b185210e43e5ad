"""A fake-server script run in its own process, so that its CPU is not the measuring process's.

Benchmarks measure the client's CPU with ``time.process_time``; a fake server in the same
process would be counted with it. :func:`server_process` runs a Python script (source text)
that starts a :class:`~agent_eval.testing._server.FakeModelServer`, prints its base URL on the
first line of stdout and serves until it gets SIGTERM.
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager

__all__ = ["server_process"]


@contextmanager
def server_process(script: str, *args: str) -> Iterator[str]:
    """Run ``script`` (Python source) with ``args`` in a new interpreter; yield its base URL.

    Raises:
        RuntimeError: the script's first line of output is not an ``http`` URL.

    """
    process = subprocess.Popen(
        [sys.executable, "-c", script, *args], stdout=subprocess.PIPE, text=True
    )
    try:
        assert process.stdout is not None
        base_url = process.stdout.readline().strip()
        if not base_url.startswith("http"):
            raise RuntimeError(f"fake server did not start: {base_url!r}")
        yield base_url
    finally:
        process.terminate()
        process.wait(10)
