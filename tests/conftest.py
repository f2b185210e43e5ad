"""Shared pytest fixtures.

``fake_server``: a started fake OpenAI-compatible model server (``agent_eval.testing``).

``shared_dir``: the read-only ``shared/`` folder that CI places beside the checkout; tests that
read it skip cleanly when it is absent.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_eval.testing import FakeModelServer

REPO_ROOT = Path(__file__).resolve().parents[1]
SHARED_DIR = REPO_ROOT.parent / "shared"


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


@pytest.fixture
def fake_server() -> Iterator[FakeModelServer]:
    """A started :class:`~agent_eval.testing.FakeModelServer` (no latency, no faults, no rules)."""
    with FakeModelServer() as server:
        yield server
