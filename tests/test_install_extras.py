"""The dev and phoenix extras co-install cleanly (trial7 #21).

``opentelemetry-exporter-otlp-json-http`` (dev: the SDK's OTLP/HTTP JSON exporter for the live
receiver's tests) pins the OTel exporter betas of its own release; Phoenix's client requires
``opentelemetry-exporter-otlp`` unpinned, so ``pip install arize-phoenix-client`` into a dev
environment used to upgrade those betas past the JSON exporter and leave ``pip check`` failing.
The dev extra therefore pulls the phoenix extra in, so one resolution covers both.
"""

from __future__ import annotations

import subprocess
import sys
import tomllib
from pathlib import Path

PYPROJECT = Path(__file__).resolve().parents[1] / "pyproject.toml"


def test_the_dev_extra_resolves_the_phoenix_extra_with_it() -> None:
    project = tomllib.loads(PYPROJECT.read_text(encoding="utf-8"))["project"]
    dev = project["optional-dependencies"]["dev"]
    assert f"{project['name']}[phoenix]" in dev
    assert any(r.startswith("opentelemetry-exporter-otlp-json-http") for r in dev)


def test_the_test_environment_has_no_broken_requirements() -> None:
    check = [sys.executable, "-m", "pip", "check"]
    done = subprocess.run(check, check=False, capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stdout + done.stderr
