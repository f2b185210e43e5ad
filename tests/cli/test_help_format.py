"""``--help`` never breaks a name at its hyphen (trial6 #8: ``openai-`` / ``cassette``).

Click wraps help text with :class:`textwrap.TextWrapper`, which breaks after a hyphen inside a
word; a container, formatter or option name split over two lines cannot be copied.
"""

from __future__ import annotations

import re

import pytest
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.cli._help_format import NON_BREAKING_HYPHEN

from .test_cli_convention import COMMANDS

runner = CliRunner()
_BROKEN = re.compile(r"\w-\n")


@pytest.mark.parametrize("columns", ["80", "100"])
@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_never_breaks_a_word_at_a_hyphen(path: list[str], columns: str) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": columns})
    assert result.exit_code == 0, result.output
    assert _BROKEN.findall(result.stdout) == [], result.stdout
    assert NON_BREAKING_HYPHEN not in result.stdout  # written back as "-"


def test_ingest_help_lists_container_names_whole() -> None:
    result = runner.invoke(app, ["ingest", "--help"], env={"COLUMNS": "80"})
    words = set(re.findall(r"[\w@.-]+", result.stdout))
    assert {"openai-cassette", "openai-messages", "span-attributes", "otel-python-console"} <= words


@pytest.mark.parametrize(
    ("args", "suggested"),
    [
        (["ingest", "fixtures", "--bogus"], None),  # trial6 #7: click offered --out
        (["ingest", "fixtures", "--jsn"], "--json"),
        (["score", "--metirc", "loops"], "--metric"),
        (["score", "--no-cahce"], "--no-cache"),
    ],
)
def test_an_unknown_option_is_offered_only_names_like_it(
    args: list[str], suggested: str | None
) -> None:
    result = runner.invoke(app, args)
    assert result.exit_code == 2
    line = next(x for x in result.output.splitlines() if "No such option" in x)
    if suggested is None:
        assert "Possible options" not in line, line
    else:
        assert f"(Possible options: {suggested})" in line or f"(Did you mean {suggested}?)" in line
