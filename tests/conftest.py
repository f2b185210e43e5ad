"""Shared pytest fixtures.

``fake_server``: a started fake OpenAI-compatible model server (``agent_eval.testing``).

``shared_dir``: the read-only ``shared/`` folder that CI places beside the checkout; tests that
read it skip cleanly when it is absent.

``make_result``: a factory of result rows (``MetricResult``) for the analysis and report tests.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest

from agent_eval._result import MetricResult
from agent_eval.testing import FakeModelServer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


def pytest_configure(config: pytest.Config) -> None:
    """Import every CLI command module before any test runs.

    The CLI imports a command's module when the command is first used, and rich's ``Console``
    takes ``COLUMNS`` from the environment when it is made. A module first imported inside a
    ``CliRunner.invoke(..., env={"COLUMNS": "80"})`` would keep that width for every later test
    in the process; one process runs one command outside the tests, so only tests need this.

    The modules are imported with ``COLUMNS`` and ``LINES`` unset, so that their consoles
    read the width each test gives: a pytest-xdist worker starts with ``COLUMNS=80`` in its
    environment, and the CLI's module consoles (``out_console`` of compare/stability and
    calibrate, ``err_console``...) kept 80 columns for every test of that worker, so a test
    that gives ``COLUMNS=250`` saw its tables stacked under ``-n 2`` only.
    """
    saved = {name: os.environ.pop(name) for name in ("COLUMNS", "LINES") if name in os.environ}
    try:
        from agent_eval.cli._commands import load_all  # agent_eval.cli makes err_console

        load_all()
    finally:
        os.environ.update(saved)


@pytest.fixture
def judge_env_cleared(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """No judge configured from the environment, and the test's own directory as the cwd.

    Unsets ``OPENAI_API_KEY``, ``OPENAI_BASE_URL`` and ``AGENT_EVAL_CONFIG`` (a developer's
    settings must not reach a CLI test) and changes into ``tmp_path`` (``runs/``, configs).
    """
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)


@pytest.fixture(scope="session")
def shared_dir() -> Path:
    """The ``shared/`` folder beside the checkout (skips the test when it is absent)."""
    if not (SHARED_DIR / "data").is_dir():
        pytest.skip(f"shared data not found at {SHARED_DIR}")
    return SHARED_DIR


@pytest.fixture(scope="session")
def shared_data(shared_dir: Path) -> Path:
    """``shared/data``."""
    return shared_dir / "data"


@pytest.fixture(autouse=True)
def _judge_cache_in_tmp(
    tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Each test's default judge-call cache is its own file, never the user's cache."""
    cache = tmp_path_factory.mktemp("user-cache") / "judge-cache.db"
    monkeypatch.setenv("AGENT_EVAL_CACHE_PATH", str(cache))


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    """A started :class:`~agent_eval.testing.FakeModelServer` (no latency, no faults, no rules)."""
    with FakeModelServer() as server:
        yield server


@pytest.fixture
def make_result() -> Callable[..., MetricResult]:
    """One result row of run ``run-1``; ``verdict`` ``"0"``/``"1"`` gives an ``ok`` row with a
    reason, ``None`` an ``error`` row; keyword arguments override any field."""

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
            "attempts": 1,  # one judge request (0 would mean answered from the cache)
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
