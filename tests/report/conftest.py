"""Run directories and hostile strings for the report tests (rows: ``make_result`` in
``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

import pytest

from agent_eval._result import MetricResult
from agent_eval.run._store import ResultStore

SCRIPT_TITLE = "<script>document.title='pwned-by-script'</script>"
IMG_ONERROR = "<img src=x onerror=\"document.body.setAttribute('data-pwned-img','1')\">"
SVG_ONLOAD = "<svg onload=\"document.body.setAttribute('data-pwned-svg','1')\"></svg>"


@pytest.fixture
def write_run(tmp_path: Path) -> Callable[[str, Sequence[MetricResult]], Path]:
    """Write rows to ``tmp_path/<name>`` through the results store; returns the directory."""

    def write(name: str, rows: Sequence[MetricResult]) -> Path:
        directory = tmp_path / name
        with ResultStore(directory) as store:
            for row in rows:
                store.add(row)
        return directory

    return write
