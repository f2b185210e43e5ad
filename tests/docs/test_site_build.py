"""The documentation site builds with warnings as errors, as CI builds it (``mkdocs build
--strict``).

A broken link or anchor between pages, a page missing from the nav (``validation.nav``), a
docstring the API reference cannot render, or a ``<!-- prompts: NAME -->`` marker naming a metric
with no prompts fails here.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def test_the_site_builds_strict(tmp_path: Path) -> None:
    site = tmp_path / "site"
    done = subprocess.run(
        [sys.executable, "-m", "mkdocs", "build", "--strict", "--site-dir", str(site)],
        cwd=ROOT, capture_output=True, text=True, timeout=600, check=False,
        env={"NO_MKDOCS_2_WARNING": "1", "PATH": str(Path(sys.executable).parent)},
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-4000:]
    assert "WARNING" not in done.stderr, done.stderr[-4000:]
    cli = (site / "cli" / "index.html").read_text(encoding="utf-8")
    assert "agent-eval score" in cli and "--max-cost" in cli  # generated from the help texts
    metrics = (site / "metrics" / "index.html").read_text(encoding="utf-8")
    assert "infer_goal_system.j2" in metrics  # the prompt templates, from the package
    api = (site / "api" / "index.html").read_text(encoding="utf-8")
    assert 'id="agent_eval.AgentTrace"' in api  # the reference, from the docstrings
    assert (site / "img" / "report-summary.png").is_file()
