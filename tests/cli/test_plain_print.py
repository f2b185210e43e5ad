"""A clean ``ingest`` summary is printed without rich, byte for byte as rich printed it (issue 15).

Regression: every ``ingest`` imported rich (42 modules, about a tenth of a small ingest's
start-up) to print plain summary lines through ``Console.print(escape(line))``.
:func:`agent_eval.cli._app.print_plain` writes a line rich prints unchanged straight to stderr and
hands every other line (markup characters, emoji codes, tabs, control characters, non-ASCII) to
rich, so what is printed is the same either way.
"""

from __future__ import annotations

import importlib
import io
import string
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from rich.console import Console
from rich.markup import escape

from agent_eval._terminal_text import escape_control
from agent_eval.cli._ingest_cmds import summary_lines
from agent_eval.ingest import ingest

app_module = importlib.import_module("agent_eval.cli._app")  # `agent_eval.cli.app` is the Typer

ROOT = Path(__file__).resolve().parents[2]
SMALL = ROOT / "fixtures" / "otel" / "openai-v2-latest-span.otlp.json"

_LINES = st.text(
    alphabet=st.sampled_from([*string.printable, ":", ":", "[", "]", "\\", " ", "é", "😄", "\t"]),
    max_size=60,
) | st.sampled_from(
    [":smile:", "a :smile: b", "x:y:z", "[bold]x[/]", "tab\there", "end\\", "  lead", "trail  "]
)


def _rich(text: str, **options: object) -> str:
    """What the stderr console prints for ``text`` (as the CLI printed every summary line)."""
    out = io.StringIO()
    Console(file=out, **options).print(escape(text), highlight=False, soft_wrap=True)  # type: ignore[arg-type]
    return out.getvalue()


@settings(max_examples=400, deadline=None)
@given(text=_LINES)
def test_a_line_passed_over_rich_is_one_rich_prints_unchanged(text: str) -> None:
    if app_module._printed_as_is(text):
        for options in (
            {},
            {"force_terminal": True, "color_system": "truecolor"},
            {"force_terminal": True, "width": 8},
            {"force_terminal": False, "width": 8},
        ):
            assert _rich(text, **options) == text + "\n"


def test_emoji_codes_markup_tabs_and_non_ascii_go_through_rich() -> None:
    assert _rich(":smile:.json") != ":smile:.json\n"  # rich prints an emoji: it must decide
    for text in (":smile:.json", "a\tb", "[x]", "a\\", "é", "\x1b", ""):
        assert not app_module._printed_as_is(text) or text == ""
    assert app_module._printed_as_is("spans: 4 used + 0 ignored = 4 read")
    assert app_module._printed_as_is("skipped: /tmp/a.jsonl:12 trace ab span cd: bad: detail")


def test_print_plain_writes_as_rich_would_while_no_console_is_made(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    monkeypatch.delitem(vars(app_module), "err_console", raising=False)  # as in a fresh process
    lines = ["spans: 4 used + 0 ignored = 4 read", "ingested 1 file(s): 2 spans"]
    for line in lines:
        app_module.print_plain(line)
    assert "err_console" not in vars(app_module)  # no console was made for them
    assert capsys.readouterr().err == "".join(_rich(line) for line in lines)
    app_module.print_plain(":smile: [x]")  # needs rich: printed on the (new) stderr console
    assert "err_console" in vars(app_module)
    assert capsys.readouterr().err == _rich(":smile: [x]")


def test_print_plain_uses_the_console_it_is_given() -> None:
    out = io.StringIO()
    app_module.print_plain("a [b] :smile:", Console(file=out))
    assert out.getvalue() == _rich("a [b] :smile:")


def test_a_small_ingest_prints_its_summary_without_rich(tmp_path: Path) -> None:
    code = (
        "import sys\nfrom agent_eval.cli import main\n"
        f"sys.argv = ['agent-eval', 'ingest', {str(SMALL)!r}, '-o', {str(tmp_path / 't')!r}]\n"
        "try:\n    main()\nexcept SystemExit as exc:\n    assert not exc.code\n"
        "print('rich' in sys.modules)\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout == "False\n"
    run = ingest([str(SMALL)])
    run.collect()
    expected = "".join(_rich(escape_control(line)) for line in summary_lines(run.report))
    assert done.stderr == expected
    assert expected.startswith("ingested 1 file(s)")
