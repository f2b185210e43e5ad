"""score, compare and stability share one option set: same flags, same help, same config keys."""

from __future__ import annotations

from pathlib import Path

import typer
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._scoring_options import SCORING_FLAGS, config_overrides
from agent_eval.testing import FakeModelServer

runner = CliRunner()
SHARED = {
    "--metric", "--judge", "--base-url", "--api-key-env", "--mode", "--concurrency", "--timeout",
    "--max-retries", "--max-context-tokens", "--with-reference", "--references", "--temperature",
    "--formatter-path", "--out", "--config", "--dry-run", "--format", "--no-cache",
    "--refresh-cache", "--cache-path", "--rpm", "--tpm", "--gate", "--max-judge-tokens",
    "--max-cost", "--json",
}  # fmt: skip
PAGE = Path(__file__).resolve().parents[2] / "docs" / "scoring.md"


def _options(name: str) -> dict[str, str | None]:
    command = typer.main.get_command(app).get_command(None, name)  # type: ignore[arg-type]
    return {
        opt: param.help
        for param in command.params
        if param.param_type_name == "option"
        for opt in param.opts
    }


def test_the_three_commands_share_every_scoring_option_with_the_same_help() -> None:
    score, compare, stability = _options("score"), _options("compare"), _options("stability")
    for flag in SHARED:
        assert flag in score and flag in compare and flag in stability, flag
        assert score[flag] == compare[flag] == stability[flag], flag


def test_each_option_is_the_config_key_of_its_name() -> None:
    params = dict.fromkeys(SCORING_FLAGS, 1) | {"paths": ["x"], "no_cache": True}
    overrides = config_overrides(params)
    assert all(overrides[name] == 1 for name in SCORING_FLAGS)
    assert overrides["paths"] == ("x",) and overrides["cache"] == "off"


def test_compare_and_stability_dry_run_call_no_judge(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    fixtures = str(Path(__file__).resolve().parents[2] / "fixtures" / "otel")
    judge = ["--judge", "m", "--base-url", fake_server.base_url, "--out", str(tmp_path / "o")]
    compare = runner.invoke(
        app, ["compare", fixtures, "--formatters", "json@1,xml@1", "--dry-run", *judge]
    )
    assert compare.exit_code == 0, compare.output
    assert "json@1" in compare.stdout and "xml@1" in compare.stdout
    stability = runner.invoke(app, ["stability", fixtures, "--repeats", "3", "--dry-run", *judge])
    assert stability.exit_code == 0, stability.output
    assert "x 3 repeats" in stability.stdout
    assert fake_server.requests == []


def _docs_options() -> dict[str, tuple[str, str]]:
    """The scoring-option table of docs/scoring.md: flag -> (config key cell, help)."""
    text = PAGE.read_text(encoding="utf-8")
    table = text.split("<!-- scoring-options:start -->")[1].split("<!-- scoring-options:end -->")[0]
    rows: dict[str, tuple[str, str]] = {}
    for line in table.strip().splitlines()[2:]:
        flag, key, help_text = (cell.strip() for cell in line.strip("|").split(" | "))
        rows[flag.split("`")[1]] = (key, help_text.replace("\\|", "|").replace("\\[", "["))
    return rows


def test_score_and_stability_share_the_formatter_option() -> None:
    # compare takes --formatters (two or more) instead
    assert _options("score")["--formatter"] == _options("stability")["--formatter"]


def test_docs_option_table_matches_help() -> None:
    rows = _docs_options()
    assert set(rows) == SHARED  # every shared option, nothing else
    for name in ("score", "compare", "stability"):
        options = _options(name)
        for flag, (_, help_text) in rows.items():
            assert options[flag] == help_text, (name, flag)
    for flag, (key, _) in rows.items():  # the config key is the flag's name, where there is one
        if key.startswith("`") and not key.startswith("`cache =") and not key.startswith("`["):
            assert key == f"`{flag[2:]}`", flag
