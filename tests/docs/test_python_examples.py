"""The Python scoring example of docs/scoring.md runs clean with warnings as errors (no unclosed
session), and the container example of docs/plugins.md reads a gzip'd file."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

from agent_eval.testing import FakeModelServer
from agent_eval.testing._script import load_script

ROOT = Path(__file__).resolve().parents[2]


def _python_example(page: str, after: str) -> str:
    text = (ROOT / "docs" / page).read_text(encoding="utf-8")
    start = text.index(after)
    block = re.search(r"```python\n(.*?)```", text[start:], re.DOTALL)
    assert block is not None, f"no python block after {after!r} in docs/{page}"
    return block.group(1)


def test_score_example_runs_with_warnings_as_errors(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    code = _python_example("scoring.md", "The same from Python (`ascore` inside an event loop):")
    assert "agent_eval.score(" in code and "OpenAIJudge(" in code
    load_script(ROOT / "fixtures" / "fake-judge.json", fake_server)
    shutil.copytree(ROOT / "fixtures" / "otel", tmp_path / "traces")
    shutil.copy(ROOT / "fixtures" / "references.jsonl", tmp_path / "references.jsonl")
    env = {
        **os.environ,
        "OPENAI_BASE_URL": fake_server.base_url,
        "OPENAI_API_KEY": "sk-readme-example",
        "PYTHONDEVMODE": "1",  # unclosed sessions and sockets warn (ResourceWarning)
    }
    # the GC runs before exit, so a leaked aiohttp session warns while -W error is in force
    code += "\nimport gc\ngc.collect()\n"
    done = subprocess.run(
        [sys.executable, "-W", "error", "-c", code],
        cwd=tmp_path,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-3000:]
    assert "Unclosed" not in done.stderr and "Warning" not in done.stderr, done.stderr[-3000:]
    counts = re.search(r"= units: (\d+) \+ 0 \+ 0 = (\d+)", done.stdout)
    assert counts is not None and counts.group(1) == counts.group(2) != "0", done.stdout
    assert fake_server.requests, "the example called no judge"
    assert (tmp_path / "runs" / "py" / "results.jsonl").is_file()


def test_container_example_reads_a_gzipd_file(tmp_path: Path) -> None:
    """The docs' third-party container (docs/plugins.md) opens its file with ``open_input``: a
    gzip'd ticket log is read decompressed and named without ``.gz`` (s7-gz #4)."""
    import gzip

    code = _python_example("plugins.md", "A container of our own help desk's ticket log")
    assert "open_input(path)" in code and "open(path" not in code.replace("open_input(path", "")
    lines = (b'{"ticket": 7, "question": "Refund?", "reply": "Done."}\n'
             b'{"ticket": 8, "question": "Invoice?", "reply": "Sent."}\n')  # fmt: skip
    (tmp_path / "tickets.jsonl.gz").write_bytes(gzip.compress(lines))
    done = subprocess.run(
        [sys.executable, "-c", code], cwd=tmp_path, capture_output=True, text=True,
        timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert done.stdout.splitlines() == ["tickets/7 2", "tickets/8 2"]
