"""Tables keep ids and variant names whole at 80 columns (CI logs) and at 200.

Regression: rich cut every cell of a too-wide table ("raga…" for every variant) at 80 columns.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from rich.console import Console
from rich.markup import escape
from rich.table import Table
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.cli._tables import print_table
from agent_eval.testing import FakeModelServer

from ..analysis import judge_script

LONG_A = "transcript@1[max_tool_chars=4000,system=false]"  # a comma: --formatters keeps it
LONG_B = "json@1"
IDS = {
    "c0_a_rather_long_conversation_identifier_from_production": "DONE",
    "c1_another_rather_long_conversation_identifier_2026": "DONE FLIP",
    "c2_short": "",
}


def _words(text: str) -> set[str]:
    return set(text.split())


@pytest.mark.parametrize("width", [80, 200])
def test_compare_tables_keep_variants_and_ids_whole(
    fake_server: FakeModelServer, tmp_path: Path, width: int
) -> None:
    judge_script.script(fake_server)
    traces = judge_script.write_traces(tmp_path / "traces.jsonl", IDS)
    args = [
        "compare", str(traces), "--formatters", f"{LONG_A},{LONG_B}",
        "--judge", "fake-model", "--base-url", fake_server.base_url,
        "--out", str(tmp_path / "out"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env={"COLUMNS": str(width), "OPENAI_API_KEY": ""})
    assert result.exit_code == 0, result.output
    shown = _words(result.stdout)
    assert LONG_A in shown and LONG_B in shown, result.stdout
    flipped = "c1_another_rather_long_conversation_identifier_2026"
    assert flipped in shown or f"{flipped}," in shown or f"{flipped}." in shown, result.stdout
    assert "…" not in result.stdout
    assert max(len(line) for line in result.stdout.splitlines()) <= width or width == 80


def _wide_table() -> Table:
    table = Table(title="Variants")
    for name in ("variant", "ok", "error", "skipped", "mean [95% CI]", "tokens in/out", "cost"):
        table.add_column(name)
    table.add_row(escape(LONG_A), "3", "0", "0", "0.667 [0.208, 0.939]", "450/90", "n/a")
    table.add_row("ragas-pretty@1", "3", "0", "0", "0.333 [0.061, 0.792]", "450/90", "$0.0012")
    return table


def test_narrow_width_switches_to_the_stacked_layout() -> None:
    console = Console(width=80, record=True, color_system=None)
    print_table(console, _wide_table())
    text = console.export_text()
    assert f"  variant: {LONG_A}" in text
    assert "  mean [95% CI]: 0.667 [0.208, 0.939]" in text
    assert "  cost: $0.0012" in text and "…" not in text


def test_wide_console_keeps_the_table() -> None:
    console = Console(width=200, record=True, color_system=None)
    print_table(console, _wide_table())
    text = console.export_text()
    assert "variant: " not in text  # a real table: a header row, one line per variant
    row = next(line for line in text.splitlines() if LONG_A in line)
    assert "0.667 [0.208, 0.939]" in row and "450/90" in row


def test_key_value_table_stacks_one_line_per_row() -> None:
    table = Table(title="run r1", show_header=False)
    table.add_column("what")
    table.add_column("value")
    table.add_row("metric", "tool_call_accuracy@1\\[order=superset]")
    table.add_row("results", "/a/very/long/path/" + "x" * 90)
    console = Console(width=80, record=True, color_system=None)
    print_table(console, table)
    text = console.export_text()
    assert "  metric: tool_call_accuracy@1[order=superset]" in text  # markup escapes honoured
    assert "/a/very/long/path/" + "x" * 90 in text.replace("\n", "")


def test_cli_consoles_take_the_width_each_command_is_given(monkeypatch: pytest.MonkeyPatch) -> None:
    """Regression (``pytest -n 2`` only): a console made at import kept the ``COLUMNS`` of
    the process it was imported in (80 in an xdist worker), so compare's table at
    ``COLUMNS=250`` was printed stacked. Each console of the CLI follows ``COLUMNS``."""
    from agent_eval.cli._analysis_options import out_console
    from agent_eval.cli._app import err_console
    from agent_eval.cli._formatters_cmds import console as formatters_console
    from agent_eval.cli._runs_cmds import _console as runs_console

    for width in ("123", "250"):
        monkeypatch.setenv("COLUMNS", width)
        for console in (out_console, err_console, formatters_console, runs_console):
            assert console.width == int(width)
