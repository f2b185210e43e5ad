"""``--dry-run`` builds (never calls) the judge, and every dry run prints its budget line.

Trial: a bad judge factory was only caught by the real run (a dry run built no judge), and
``compare``/``stability --dry-run`` printed no budget line where ``score --dry-run`` did.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.testing import FakeModelServer

FIXTURES = Path(__file__).parents[2] / "fixtures" / "otel"
runner = CliRunner()
COMMANDS = {
    "score": ["score", str(FIXTURES), "--formatter", "transcript@1", "--metric", "goal_accuracy@1"],
    "compare": [
        "compare",
        str(FIXTURES),
        "--formatters",
        "transcript@1,json@1",
        "--metric",
        "goal_accuracy@1",
    ],
    "stability": [
        "stability",
        str(FIXTURES),
        "--repeats",
        "3",
        "--formatter",
        "transcript@1",
        "--metric",
        "goal_accuracy@1",
    ],
}

pytestmark = pytest.mark.usefixtures("judge_env_cleared")


@pytest.mark.parametrize("command", list(COMMANDS))
def test_dry_run_reports_a_bad_judge_factory_before_reading_input(command: str) -> None:
    args = [*COMMANDS[command], "--judge", "langchain:no_such_pkg_x.judges:make", "--dry-run"]
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    flat = " ".join(result.stderr.split())
    assert "judge factory no_such_pkg_x.judges:make: cannot import no_such_pkg_x.judges" in flat
    assert "ingested" not in flat


@pytest.mark.parametrize("command", list(COMMANDS))
def test_every_dry_run_prints_the_budget_line(
    command: str, fake_server: FakeModelServer, tmp_path: Path
) -> None:
    config = tmp_path / "agent-eval.toml"
    config.write_text('[prices."priced-fake"]\ninput = 1.0\noutput = 2.0\n')
    args = [*COMMANDS[command], "--judge", "priced-fake", "--base-url", fake_server.base_url,
            "--config", str(config), "--max-cost", "0.01", "--dry-run"]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert not fake_server.requests  # built, never called
    lines = [line for line in result.stdout.splitlines() if line.startswith("budget: the plan")]
    assert len(lines) == 1, result.stdout
    # transcript@1 over fixtures/otel: 28,713 estimated tokens (score's plan), x3 for stability
    tokens = {"score": "28,713", "compare": "62,085", "stability": "86,139"}[command]
    assert lines[0] == (
        f"budget: the plan ({tokens} judge tokens estimated) does NOT fit ($0.0100 of $0.0100 left)"
    )


def test_compare_dry_run_refuses_max_cost_without_a_price(fake_server: FakeModelServer) -> None:
    args = [*COMMANDS["compare"], "--judge", "unpriced-fake", "--base-url", fake_server.base_url,
            "--max-cost", "0.01", "--dry-run"]  # fmt: skip
    result = runner.invoke(app, args, env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert "--max-cost needs a price for judge model 'unpriced-fake'" in result.stderr
