"""Result rows and run directories for the report tests."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import pytest

from agent_eval.result import MetricResult
from agent_eval.store import ResultStore

SCRIPT_TITLE = "<script>document.title='pwned-by-script'</script>"
IMG_ONERROR = "<img src=x onerror=\"document.body.setAttribute('data-pwned-img','1')\">"
SVG_ONLOAD = "<svg onload=\"document.body.setAttribute('data-pwned-svg','1')\"></svg>"


@pytest.fixture
def make_result() -> Callable[..., MetricResult]:
    """One result row; ``verdict`` ``"0"``/``"1"`` gives ``ok``, ``None`` an ``error`` row."""

    def make(conversation_id: str, verdict: str | None, **extra: Any) -> MetricResult:
        fields: dict[str, Any] = {
            "run_id": "run-1",
            "conversation_id": conversation_id,
            "metric": "goal_accuracy@1",
            "formatter": "transcript@1",
            "formatter_fingerprint": "f" * 64,
            "prompt_sha256": "a" * 64,
            "judge_model": "gpt-4o-mini",
            "started_at": "2026-01-01T00:00:00Z",
            "input_tokens": 1000,
            "output_tokens": 50,
            "user_goal": f"goal of {conversation_id}",
            "end_state": f"end of {conversation_id}",
        }
        if verdict is None:
            fields.update(status="error", error_type="judge_unavailable", error_message="down")
        else:
            fields.update(status="ok", verdict=verdict, score=float(verdict), reason="because")
        fields.update(extra)
        return MetricResult(**fields)

    return make


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
