"""Factories for MetricResult rows used by the analysis tests."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

import pytest

from agent_eval.result import MetricResult

MakeResult = Callable[..., MetricResult]


@pytest.fixture
def make_result() -> MakeResult:
    """Build one result row; ``verdict`` ``"0"``/``"1"`` gives an ok row, ``None`` an error row."""

    def make(conversation_id: str, verdict: str | None, **extra: Any) -> MetricResult:
        fields: dict[str, Any] = {
            "run_id": "run-1",
            "conversation_id": conversation_id,
            "metric": "goal_accuracy@1",
            "formatter": "transcript@1",
            "formatter_fingerprint": "f" * 64,
            "prompt_sha256": "a" * 64,
            "judge_model": "judge-model",
            "started_at": "2026-01-01T00:00:00Z",
            "input_tokens": 100,
            "output_tokens": 10,
        }
        if verdict is None:
            fields.update(status="error", error_type="judge_unavailable", error_message="x")
        else:
            fields.update(status="ok", verdict=verdict, score=float(verdict))
        fields.update(extra)
        return MetricResult(**fields)

    return make
