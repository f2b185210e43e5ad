"""The lazily re-exported public names of ``agent_eval.analysis`` and ``agent_eval.report``."""

from __future__ import annotations

import importlib
import subprocess
import sys

import pytest


@pytest.mark.parametrize("package", ["agent_eval.analysis", "agent_eval.report"])
def test_every_public_name_resolves_from_its_module(package: str) -> None:
    module = importlib.import_module(package)
    assert sorted(module.__all__) == sorted(module._HOME)
    for name in module.__all__:
        assert getattr(module, name) is getattr(importlib.import_module(module._HOME[name]), name)
    with pytest.raises(AttributeError):
        module.no_such_name  # noqa: B018


def test_cli_startup_does_not_import_statistics_or_plotting() -> None:
    code = (
        "import sys, agent_eval.cli\n"
        "print(sorted(m for m in ('scipy', 'statsmodels', 'matplotlib') if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
