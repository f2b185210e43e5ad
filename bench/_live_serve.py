"""Starting ``agent-eval serve`` in a child process and waiting for it, for the live benchmarks.

Shared by ``bench/live_kill9.py`` and ``bench/live_soak.py`` (run as scripts, so this folder is
on ``sys.path``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import requests

CLI = "from agent_eval.cli import main; main()"


def start_serve(
    tmp: Path,
    base_url: str,
    *flags: str,
    idle: float,
    after_root: float,
    src: str | None = None,
) -> tuple[subprocess.Popen[str], int]:
    """``agent-eval serve`` on a free port with the fake judge at ``base_url``; (process, port).

    The judge-call cache is ``tmp/judge-cache.db``; ``OPENAI_*``/``OTEL_*`` variables are not
    passed on; ``src`` (another checkout) goes first on ``PYTHONPATH``. Returns once serve says
    it listens; its stderr is drained in a thread from then on.

    Raises:
        SystemExit: serve exited before it listened.
    """
    env = {k: v for k, v in os.environ.items() if not k.startswith(("OPENAI_", "OTEL_"))}
    env["AGENT_EVAL_CACHE_PATH"] = str(tmp / "judge-cache.db")
    if src is not None:  # another checkout's package first on the path
        env["PYTHONPATH"] = src
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    process = subprocess.Popen(
        [sys.executable, "-c", CLI, "serve", "--port", "0", "--judge", "fake-model",
         "--base-url", base_url, "--idle", str(idle), "--after-root", str(after_root), *flags],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env, cwd=tmp,
    )  # fmt: skip
    assert process.stderr is not None
    while True:
        line = process.stderr.readline()
        found = re.search(r"listening on http://127\.0\.0\.1:(\d+)", line)
        if found:
            threading.Thread(target=process.stderr.read, daemon=True).start()
            return process, int(found.group(1))
        if not line and process.poll() is not None:
            raise SystemExit("serve did not start")


def health(port: int) -> dict[str, Any]:
    """serve's ``/healthz`` document."""
    reply: dict[str, Any] = requests.get(f"http://127.0.0.1:{port}/healthz", timeout=10).json()
    return reply


def wait_idle(port: int, *, poll: float, timeout: float = 300) -> None:
    """Until serve holds no trace and no backlog for 10 polls in a row (or ``timeout`` s)."""
    deadline, quiet = time.monotonic() + timeout, 0
    while time.monotonic() < deadline and quiet < 10:
        now = health(port)
        quiet = 0 if now["pending_traces"] or now["backlog"] else quiet + 1
        time.sleep(poll)
