"""``agent-eval --version`` and shell completion."""

from __future__ import annotations

from importlib.metadata import version

from typer.testing import CliRunner

from agent_eval.cli import app

runner = CliRunner()


def test_version_prints_the_distribution_version() -> None:
    result = runner.invoke(app, ["--version"])
    assert result.exit_code == 0
    assert result.stdout.strip() == f"agent-eval {version('otel-agent-eval')}"


def test_shell_completion_is_offered() -> None:
    result = runner.invoke(app, ["--help"])
    assert "--install-completion" in result.stdout and "--show-completion" in result.stdout
