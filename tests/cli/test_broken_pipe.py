"""``agent-eval show ... | head``: the reader going away is not "a gate failed".

Regression: rich's console, on a broken pipe, points stdout at the null device and exits 1,
which in this CLI's exit-code table means a gate failed; ``ingest`` already stopped with 0.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

FIXTURES = Path(__file__).parents[2] / "fixtures" / "otel"
CLI = "from agent_eval.cli import main; main()"


def _closed_after_one_line(*argv: str) -> int:
    child = subprocess.Popen(
        [sys.executable, "-c", CLI, *argv], stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    assert child.stdout is not None
    assert child.stdout.readline()  # more than a pipe buffer follows (130 KB)
    child.stdout.close()
    _, stderr = child.communicate(timeout=120)
    assert b"Traceback" not in stderr, stderr
    return child.returncode


def test_show_piped_into_head_exits_0() -> None:
    assert _closed_after_one_line("show", str(FIXTURES)) == 0


def test_ingest_piped_into_head_exits_0() -> None:
    assert _closed_after_one_line("ingest", str(FIXTURES)) == 0


def test_a_real_failure_keeps_its_code() -> None:
    done = subprocess.run(
        [sys.executable, "-c", CLI, "show", "/nonexistent/x.json"], capture_output=True, check=False
    )
    assert done.returncode == 3, done.stderr
