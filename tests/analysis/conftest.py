"""Types for the analysis tests (the ``make_result`` fixture is in ``tests/conftest.py``)."""

from __future__ import annotations

from collections.abc import Callable

from agent_eval._result import MetricResult

MakeResult = Callable[..., MetricResult]
