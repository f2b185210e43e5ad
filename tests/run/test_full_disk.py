"""A full disk is one line and exit 5, before the first row and during scoring (issue 32).

The disk is filled for real, in a child process: ``RLIMIT_FSIZE`` caps the size of every file
it writes (``SIGXFSZ`` ignored, so a write past it fails with ``EFBIG``, and SQLite reports a
``disk I/O error``), as a full disk makes the same writes fail. Before, a store that opened and
then could not record the run ended in a raw ``sqlite3.OperationalError`` traceback, and a
failure during scoring printed one traceback per unit in flight before the one-line error.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from agent_eval.errors import OutputError
from agent_eval.run._store import ResultStore, RunRecord
from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]
CHILD = """
import resource, signal, sys
limit = int(sys.argv[1])
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
from agent_eval.cli._app import main
sys.argv = ["agent-eval", *sys.argv[2:]]
main()
"""


def score_with_file_limit(limit: int, base_url: str, out: Path) -> subprocess.CompletedProcess[str]:
    command = [
        "score", str(ROOT / "fixtures" / "otel"), "--metric", "goal_accuracy,faithfulness",
        "--formatter", "transcript@1", "--judge", "fake", "--base-url", base_url,
        "--no-cache", "--out", str(out),
    ]  # fmt: skip
    return subprocess.run(
        [sys.executable, "-c", CHILD, str(limit), *command],
        check=False,
        capture_output=True,  # pipes: not limited, unlike a file the child writes
        text=True,
        timeout=300,
        cwd=out.parent,
        stdin=subprocess.DEVNULL,
    )


@pytest.mark.parametrize("limit", [0, 20_000, 60_000, 80_000])
def test_a_full_disk_is_one_line_and_exit_5(tmp_path: Path, limit: int) -> None:
    with FakeModelServer(latency=0.02) as server:
        load_script(str(ROOT / "fixtures" / "fake-judge.json"), server)
        done = score_with_file_limit(limit, server.base_url, tmp_path / "out")
    output = done.stdout + done.stderr
    assert done.returncode == 5, output
    assert "Traceback" not in output
    errors = [line for line in output.splitlines() if line.startswith("error:")]
    assert len(errors) == 1 and "cannot" in errors[0] and str(tmp_path / "out") in errors[0]


def test_recording_the_run_on_a_store_that_cannot_write_is_an_output_error(
    tmp_path: Path,
) -> None:
    store = ResultStore(tmp_path / "out")
    try:
        store._db.execute("PRAGMA query_only=ON")  # every write now fails, as on a full disk
        with pytest.raises(OutputError, match="cannot record the run"):
            store.start_run(RunRecord(run_id="r", started_at="2026-01-01T00:00:00Z", config={}))
    finally:
        store._db.execute("PRAGMA query_only=OFF")
        store.close()
