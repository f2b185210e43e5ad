"""The CLI: ``formatters list | diff | lock`` and ``show`` (typer's CliRunner, in process)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from agent_eval_formatters.ragas_pretty_v1 import RagasPrettyV1
from typer.testing import CliRunner

from agent_eval._tokens import count_tokens
from agent_eval._trace import AgentTrace, UserMessage
from agent_eval.cli import app
from agent_eval.formatting import default_lock_path, fingerprint, get_formatter, probe_set
from agent_eval.formatting._fingerprint import probe_renderings
from agent_eval.formatting._lock import read_lock

runner = CliRunner()


@pytest.fixture
def traces_file(tmp_path: Path) -> Path:
    """The probe set plus a markup-laden conversation, as AgentTrace JSON Lines."""
    markup = AgentTrace(
        conversation_id="markup", messages=[UserMessage(content="[red]x[/red] [bold]")]
    )
    path = tmp_path / "traces.jsonl"
    path.write_text("".join(t.model_dump_json() + "\n" for t in [*probe_set(), markup]))
    return path


def test_list_table() -> None:
    result = runner.invoke(app, ["formatters", "list"])
    assert result.exit_code == 0, result.output
    for identity in ("ragas-pretty@1", "transcript@1", "json@1", "xml@1"):
        assert identity in result.stdout
        assert fingerprint(get_formatter(identity))[:12] in result.stdout
    assert "max_tool_chars" in result.stdout


def test_list_json_numbers() -> None:
    result = runner.invoke(app, ["formatters", "list", "--json"])
    assert result.exit_code == 0, result.output
    rows = {row["formatter"]: row for row in json.loads(result.stdout)["formatters"]}
    formatter = get_formatter("transcript@1")
    row = rows["transcript@1"]
    assert row["fingerprint"] == fingerprint(formatter)
    assert row["probe_set_tokens"] == sum(count_tokens(t) for _, t in probe_renderings(formatter))
    assert row["lock"] == "locked"
    assert row["parameters"] == ["max_tool_chars: int | None = none", "system: bool = true"]


def test_lock_check_passes() -> None:
    result = runner.invoke(app, ["formatters", "lock", "--check"])
    assert result.exit_code == 0, result.output
    assert "lock OK: 11 formatter identities match" in result.stdout


def test_lock_check_fails_on_unversioned_change(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(RagasPrettyV1, "render", lambda self, trace: "changed")
    result = runner.invoke(app, ["formatters", "lock", "--check"])
    assert result.exit_code == 1
    assert "ragas-pretty@1" in result.stderr and "bump the version" in result.stderr
    listed = runner.invoke(app, ["formatters", "list", "--json"])
    rows = {r["formatter"]: r for r in json.loads(listed.stdout)["formatters"]}
    assert rows["ragas-pretty@1"]["lock"].startswith("CHANGED")


def test_lock_writes_new_entries_only(tmp_path: Path) -> None:
    lock = tmp_path / "formatters.lock"
    full = json.loads(default_lock_path().read_text())
    del full["formatters"]["xml@1"]
    del full["formatters"]["transcript@1[system=false]"]
    lock.write_text(json.dumps(full))
    check = runner.invoke(app, ["formatters", "lock", "--check", "--lock", str(lock)])
    assert check.exit_code == 1 and "not locked: xml@1" in check.stderr
    assert "not locked: transcript@1[system=false]" in check.stderr
    result = runner.invoke(app, ["formatters", "lock", "--lock", str(lock)])
    assert result.exit_code == 0, result.output
    assert result.stdout.split() == ["locked", "transcript@1[system=false]", "locked", "xml@1"]
    assert read_lock(lock).fingerprints == read_lock().fingerprints
    again = runner.invoke(app, ["formatters", "lock", "--lock", str(lock)])
    assert again.stdout.strip() == "lock is up to date"


def test_lock_refuses_to_rewrite_a_changed_release(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    lock = tmp_path / "formatters.lock"
    shutil.copy(default_lock_path(), lock)
    monkeypatch.setattr(RagasPrettyV1, "render", lambda self, trace: "changed")
    result = runner.invoke(app, ["formatters", "lock", "--lock", str(lock)])
    assert result.exit_code == 1 and "bump the version" in result.stderr
    assert lock.read_bytes() == default_lock_path().read_bytes()


def test_show_raw_is_exactly_the_rendering(traces_file: Path) -> None:
    for conversation in ("probe-injection", "probe-multiline", "probe-empty"):
        for identity in ("ragas-pretty@1", "xml@1", "transcript@1[max_tool_chars=5]"):
            args = ["show", str(traces_file), "--conversation", conversation]
            result = runner.invoke(app, [*args, "--formatter", identity, "--raw"])
            assert result.exit_code == 0, result.output
            trace = next(t for t in probe_set() if t.conversation_id == conversation)
            assert result.stdout_bytes == get_formatter(identity).render(trace).encode()


def test_show_raw_defaults_to_transcript(traces_file: Path) -> None:
    result = runner.invoke(
        app, ["show", str(traces_file), "--conversation", "probe-basic", "--raw"]
    )
    assert result.stdout == get_formatter("transcript@1").render(probe_set()[0])


def test_show_raw_refuses_several_conversations(traces_file: Path) -> None:
    result = runner.invoke(app, ["show", str(traces_file), "--raw"])
    assert result.exit_code == 2
    assert "--conversation" in result.stderr and "probe-basic" in result.stderr
    assert result.stdout == ""


def test_show_readable_view_prints_content_literally(traces_file: Path) -> None:
    result = runner.invoke(app, ["show", str(traces_file)])
    assert result.exit_code == 0, result.output
    assert "conversation probe-multi-agent" in result.stdout
    assert "assistant · booker" in result.stdout
    assert "[red]x[/red] [bold]" in result.stdout


def test_show_with_formatter_panel(traces_file: Path) -> None:
    args = ["show", str(traces_file), "--conversation", "probe-basic", "--formatter", "json@1"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    formatter = get_formatter("json@1")
    tokens = count_tokens(formatter.render(probe_set()[0]))
    assert f"json@1#{fingerprint(formatter)[:12]} · {tokens} tokens" in result.stdout


@pytest.mark.parametrize(
    ("option", "expected"),
    [
        (
            ["--formatter", "nope@1"],
            "available: json@1, json@2, ragas-pretty@1, transcript@1, transcript@2, xml@1, xml@2",
        ),
        (["--formatter", "transcript@1[bogus=1]"], "max_tool_chars: int | None = none"),
        (["--formatter", "transcript"], "needs a version"),
        (["--conversation", "missing"], "conversations: probe-basic, probe-empty-content"),
        (["--format", "no-such-container"], "no-such-container"),
    ],
)
def test_show_errors_exit_2_listing_what_exists(
    traces_file: Path, option: list[str], expected: str
) -> None:
    result = runner.invoke(app, ["show", str(traces_file), *option])
    assert result.exit_code == 2
    assert expected in " ".join(result.stderr.split())


def test_show_unreadable_input_exit_3(tmp_path: Path) -> None:
    # was 2 (show had its own error wrapper); the exit-code table says 3 for input unreadable
    empty = tmp_path / "empty.json"
    empty.write_text("")
    result = runner.invoke(app, ["show", str(empty)])
    assert result.exit_code == 3 and "empty" in result.stderr


def test_diff_between_formatters(traces_file: Path) -> None:
    args = ["formatters", "diff", "ragas-pretty@1", "transcript@1", str(traces_file)]
    result = runner.invoke(app, [*args, "--conversation", "probe-basic"])
    assert result.exit_code == 0, result.output
    trace = probe_set()[0]
    left = count_tokens(get_formatter("ragas-pretty@1").render(trace))
    right = count_tokens(get_formatter("transcript@1").render(trace))
    assert f"conversation probe-basic: differ ({left} vs {right} tokens)" in result.stdout
    assert "--- ragas-pretty@1" in result.stdout and "+++ transcript@1" in result.stdout
    assert "-Human: What's the weather in Paris?" in result.stdout
    assert "+[2] USER" in result.stdout
    assert result.stdout.rstrip().endswith("1 conversation, 1 rendered differently")


def test_diff_of_parameter_variants(traces_file: Path) -> None:
    args = ["formatters", "diff", "transcript@1", "transcript@1[system=off]", str(traces_file)]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "conversation probe-retrievals: identical" in result.stdout
    assert "-[1] SYSTEM" in result.stdout
    differing = sum(1 for t in probe_set() if any(m.role == "system" for m in t.messages))
    assert (
        f"{len(probe_set()) + 1} conversations, {differing} rendered differently" in result.stdout
    )


def test_diff_unknown_formatter_exit_2(traces_file: Path) -> None:
    result = runner.invoke(app, ["formatters", "diff", "json@1", "json@7", str(traces_file)])
    assert result.exit_code == 2 and "json@7" in result.stderr


def test_formatter_path_option(traces_file: Path, tmp_path: Path) -> None:
    plugin = tmp_path / "plugins"
    plugin.mkdir()
    (plugin / "count_v1.py").write_text(
        "from agent_eval.formatting import Formatter, NoParams\n"
        "class CountV1(Formatter[NoParams]):\n"
        "    name = 'count'\n    version = 1\n"
        "    def render(self, trace):\n        return str(len(trace.messages))\n"
    )
    from agent_eval.formatting import formatters

    try:
        args = ["show", str(traces_file), "--conversation", "probe-basic", "--raw"]
        result = runner.invoke(
            app, [*args, "--formatter", "count@1", "--formatter-path", str(plugin)]
        )
        assert result.exit_code == 0, result.output
        assert result.stdout == "5"
    finally:
        formatters.unregister("count@1")


def test_unreadable_file_beside_good_ones_is_reported_not_fatal(traces_file: Path) -> None:
    (traces_file.parent / "junk.json").write_text("{not json")
    args = ["show", str(traces_file.parent), "--conversation", "probe-basic", "--raw"]
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    assert result.stdout == get_formatter("transcript@1").render(probe_set()[0])
    assert "skipped" in result.stderr and "junk.json" in result.stderr


def test_show_unknown_conversation_suggests_the_closest_id(traces_file: Path) -> None:
    # regression (trial5 #15): `show --conversation lc/flihgt` listed ids but no "did you mean"
    result = runner.invoke(app, ["show", str(traces_file), "--conversation", "probe-mulit-agent"])
    assert result.exit_code == 2
    err = " ".join(result.stderr.split())
    assert (
        "no conversation 'probe-mulit-agent' in the input; did you mean 'probe-multi-agent'?" in err
    )
    far = runner.invoke(app, ["show", str(traces_file), "--conversation", "zzzz"])
    assert far.exit_code == 2 and "did you mean" not in far.stderr


def test_show_fixture_conversation_typo_suggests_it() -> None:
    fixtures = Path(__file__).parents[2] / "fixtures" / "otel"
    result = runner.invoke(app, ["show", str(fixtures), "--conversation", "lc/flihgt"])
    assert result.exit_code == 2
    assert "did you mean 'lc/flight'?" in " ".join(result.stderr.split())
