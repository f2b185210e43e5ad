"""One CLI convention: flags shown as flags, ``--json`` documents, usage errors first.

Regressions from a fresh user's first hour: every boolean was shown as ``<bool>``; ``score``
had no ``--json``; a bad ``--metric`` was reported only after every input was ingested;
``export phoenix`` exited 1 (the gate code) when Phoenix was unreachable; the ``--gate``
syntax error's example named ``accuracy``, which ``score`` does not measure; the summary
heading dropped a metric's parameters (rich read ``[order=superset]`` as markup).
"""

from __future__ import annotations

import json
import re
import socket
from pathlib import Path
from typing import Any

import pytest
import typer.main
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.cli._json_output import PAYLOADS, SCHEMA_VERSION
from agent_eval.testing import FakeModelServer

from ..run.goal_script import script_goal_judge, trace
from .test_score_cli import traces_file

runner = CliRunner()
FIXTURE = Path(__file__).parents[2] / "fixtures" / "otel" / "openai-agents-openinference.otlp.json"


def _commands() -> list[tuple[list[str], Any]]:
    """Every leaf command of the CLI, with the words that name it (typer's public objects)."""
    found: list[tuple[list[str], Any]] = []

    def walk(path: list[str], command: Any) -> None:
        if hasattr(command, "commands"):  # a group: looked up as the CLI does (lazily)
            for name in command.list_commands(None):
                walk([*path, name], command.get_command(None, name))
        else:
            found.append((path, command))

    walk([], typer.main.get_command(app))
    return found


COMMANDS = _commands()


def test_the_walk_finds_every_command() -> None:
    names = {" ".join(path) for path, _ in COMMANDS}
    assert {"score", "compare", "stability", "calibrate", "rag", "errors", "ingest"} <= names
    assert {"runs list", "runs show", "runs diff", "cache info", "export phoenix"} <= names


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_shows_flags_as_flags(path: list[str]) -> None:
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    assert "<bool>" not in result.stdout
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    for param in command.params:
        if _is_option(param) and param.is_flag and not param.hidden:
            assert param.opts[0] in result.stdout, param.opts  # every flag is listed


def _is_option(param: Any) -> bool:
    return bool(param.param_type_name == "option")


def _value(param: Any) -> list[str]:
    return [] if param.is_flag else ["1"]  # values are converted after --help exits


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_every_option_parses(path: list[str]) -> None:
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    args: list[str] = []
    for param in command.params:
        if _is_option(param) and not param.hidden and param.name != "help":
            for opt in (*param.opts, *param.secondary_opts):
                if opt.startswith("--") and opt not in ("--install-completion",):
                    args += [opt, *_value(param)]
    result = runner.invoke(app, [*path, *args, "--help"])  # parsed, then --help: no work
    assert result.exit_code == 0, result.output


def test_a_flag_takes_no_value() -> None:
    result = runner.invoke(app, ["cache", "info", "--json", "true"])
    assert result.exit_code == 2 and "unexpected extra argument" in result.output.lower()


def _envelope(stdout: str, command: str) -> dict[str, Any]:
    document = json.loads(stdout)  # the whole of stdout is one JSON document
    assert (document["schema_version"], document["command"]) == (SCHEMA_VERSION, command)
    model = PAYLOADS[command]
    if model is not None:
        payload = {k: v for k, v in document.items() if k not in ("schema_version", "command")}
        model.model_validate(payload)  # the documented shape, exactly (extra keys forbidden)
    return document


@pytest.fixture
def scored(fake_server: FakeModelServer, tmp_path: Path) -> tuple[Path, dict[str, Any]]:
    """A ``score --json`` run of two conversations through the fake judge."""
    script_goal_judge(fake_server)
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=False))
    out = tmp_path / "out"
    args = ["score", str(inputs), "--judge", "fake-model", "--base-url", fake_server.base_url]
    result = runner.invoke(app, [*args, "--out", str(out), "--json"])
    assert result.exit_code == 0, result.output
    return out, _envelope(result.stdout, "score")


def test_score_json(scored: tuple[Path, dict[str, Any]]) -> None:
    out, document = scored
    assert document["out"] == str(out) and document["exit_code"] == 0
    assert document["dry_run"] is False and document["not_scored"] == []
    (metric,) = document["metrics"]
    assert (metric["metric"], metric["scored"], metric["units"]) == ("goal_accuracy@2", 2, 2)
    assert metric["mean_score"] == 0.5 and metric["judge_requests"] == 4
    assert (metric["judge_calls"], metric["cached_calls"], metric["usage_unknown"]) == (4, 0, 0)
    (plan,) = document["plans"]
    assert (plan["to_score"], plan["judge_calls"]) == (2, 4)


def test_score_json_dry_run_and_gate_exit_code(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=False))
    base = ["score", str(inputs), "--judge", "fake-model", "--base-url", fake_server.base_url]
    dry = runner.invoke(app, [*base, "--dry-run", "--json"])
    assert dry.exit_code == 0, dry.output
    document = _envelope(dry.stdout, "score")
    assert document["dry_run"] is True and document["metrics"] == [] and document["run_id"] is None
    script_goal_judge(fake_server)
    gated = runner.invoke(app, [*base, "--out", str(tmp_path / "o"), "--json", "--fail-under", "1"])
    assert gated.exit_code == 1
    assert _envelope(gated.stdout, "score")["exit_code"] == 1  # nothing but JSON on stdout
    assert "gate failed" in gated.stderr


def test_run_and_cache_commands_print_their_documents(
    scored: tuple[Path, dict[str, Any]],
) -> None:
    out, document = scored
    listed = _envelope(runner.invoke(app, ["runs", "list", str(out), "--json"]).stdout, "runs list")
    assert [r["run_id"] for r in listed["runs"]] == [document["run_id"]]
    shown = _envelope(runner.invoke(app, ["runs", "show", str(out), "--json"]).stdout, "runs show")
    assert shown["run_id"] == document["run_id"] and "record" in shown
    diff = runner.invoke(app, ["runs", "diff", str(out), str(out), "--json"])
    assert _envelope(diff.stdout, "runs diff")["unchanged"] == 2
    info = _envelope(runner.invoke(app, ["cache", "info", "--json"]).stdout, "cache info")
    assert info["entries"] == 4 and info["models"] == {"fake-model": 4}
    errors = _envelope(runner.invoke(app, ["errors", str(out), "--json"]).stdout, "errors")
    assert errors == {**errors, "run_id": document["run_id"], "errors": []}


@pytest.mark.parametrize(
    ("flags", "message"),
    [
        (["--metric", "no_such_metric"], "no_such_metric"),
        (["--formatter", "nope@9"], "nope@9"),
        (["--gate", "mean_score>=2/3"], "threshold"),
        (["--config", "judge.toml"], "no_such_judge_kind"),
    ],
)
@pytest.mark.parametrize("command", ["score", "stability"])
def test_usage_errors_come_before_reading_inputs(
    tmp_path: Path, command: str, flags: list[str], message: str
) -> None:
    missing = str(tmp_path / "no-such-input.jsonl")  # reading it would exit 3
    (tmp_path / "judge.toml").write_text('[judge]\nkind = "no_such_judge_kind"\n')
    flags = [str(tmp_path / f) if f == "judge.toml" else f for f in flags]
    result = runner.invoke(app, [command, missing, *flags])
    assert result.exit_code == 2, result.output
    assert message in result.stderr and "no-such-input" not in result.stderr


def test_compare_usage_errors_come_before_reading_inputs(tmp_path: Path) -> None:
    missing = str(tmp_path / "no-such-input.jsonl")
    bad_formatter = runner.invoke(app, ["compare", missing, "--formatters", "json@1,nope@9"])
    assert bad_formatter.exit_code == 2 and "nope@9" in bad_formatter.stderr
    bad_metric = runner.invoke(
        app, ["compare", missing, "--formatters", "json@1,xml@1", "--metric", "zzz"]
    )
    assert bad_metric.exit_code == 2 and "zzz" in bad_metric.stderr


def test_gate_syntax_error_example_is_measured_by_the_command(tmp_path: Path) -> None:
    result = runner.invoke(app, ["score", str(tmp_path), "--gate", "mean_score>0.8"])
    assert result.exit_code == 2
    assert "e.g. mean_score>=0.8/3" in result.stderr and "accuracy" not in result.stderr
    stability = runner.invoke(app, ["stability", str(tmp_path), "--gate", "oops"])
    assert "e.g. unanimity>=0.8/3" in stability.stderr


def test_summary_heading_keeps_metric_params(tmp_path: Path) -> None:
    out = tmp_path / "o"
    args = ["score", str(FIXTURE), "--metric", "tool_call_accuracy[order=superset]"]
    result = runner.invoke(app, [*args, "--out", str(out)], env={"COLUMNS": "80"})
    assert result.exit_code == 4, result.output  # no reference calls: skipped, said so
    assert "tool_call_accuracy@1[order=superset]" in result.stdout


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _agent_workflow_spans() -> list[str]:
    """The root spans of :data:`FIXTURE` (the OpenAI Agents SDK's ``Agent workflow``), by start."""
    document = json.loads(FIXTURE.read_bytes())
    roots = [
        span
        for resource in document["resourceSpans"]
        for scope in resource["scopeSpans"]
        for span in scope["spans"]
        if not span.get("parentSpanId")
    ]
    assert {span["name"] for span in roots} == {"Agent workflow"}
    return [s["spanId"] for s in sorted(roots, key=lambda s: int(s["startTimeUnixNano"]))]


def test_export_phoenix_unreachable_exits_5(fake_server: FakeModelServer, tmp_path: Path) -> None:
    pytest.importorskip("phoenix.client", reason="the phoenix extra is not installed")
    script_goal_judge(fake_server)
    out = tmp_path / "o"
    args = ["score", str(FIXTURE), "--judge", "fake-model", "--base-url", fake_server.base_url]
    assert runner.invoke(app, [*args, "--out", str(out)]).exit_code == 0
    endpoint = f"http://127.0.0.1:{_closed_port()}"
    result = runner.invoke(app, ["export", "phoenix", str(out), "--endpoint", endpoint])
    assert result.exit_code == 5, result.output  # output not written (the table's code)
    # one conversation (a session id of its own) over two traces: its session and 2 root spans
    assert "not written 3" in result.stdout and "run the same command again" in result.stderr
    as_json = runner.invoke(app, ["export", "phoenix", str(out), "--endpoint", endpoint, "--json"])
    assert as_json.exit_code == 5
    document = _envelope(as_json.stdout, "export phoenix")
    assert (document["written"], len(document["not_written"])) == (0, 3)
    cid = document["not_written"][0]
    roots = _agent_workflow_spans()
    named = {"conversation_id": cid, "unit_id": "conversation", "metric": "goal_accuracy@2"}
    assert document["not_written_annotations"] == [
        {**named, "target": "session"},
        *({**named, "target": f"span {span_id}"} for span_id in roots),
    ]  # trial7 #21: each unwritten annotation names its metric, not only the conversation
    assert f"not written: {cid} goal_accuracy@2 (session)" in " ".join(result.stderr.split())
    # --quiet keeps only the errors: what was not written is an error, so it stays (it was dropped)
    quiet = runner.invoke(app, ["export", "phoenix", str(out), "--endpoint", endpoint, "-q"])
    assert quiet.exit_code == 5 and quiet.stdout == ""
    kept = " ".join(quiet.stderr.split())
    assert f"error: not written: {cid} goal_accuracy@2 (session)" in kept
    assert "error: 3 annotation(s) not written; run the same command again" in kept
    missing = runner.invoke(app, ["export", "phoenix", str(tmp_path / "no-run")])
    same = runner.invoke(app, ["runs", "show", str(tmp_path / "no-run")])
    assert missing.exit_code == same.exit_code != 0  # no such run: as every command says it


def test_calibrate_a_multi_metric_run_asks_for_one_metric(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_goal_judge(fake_server)
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=False))
    out = tmp_path / "out"
    args = ["score", str(inputs), "--judge", "fake-model", "--base-url", fake_server.base_url]
    scored = runner.invoke(app, [*args, "--metric", "goal_accuracy,tool_errors", "--out", str(out)])
    assert scored.exit_code == 0, scored.output
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"conversation_id": "a", "label": 1}\n{"conversation_id": "b", "label": 1}\n'
    )
    asked = runner.invoke(app, ["calibrate", str(out), "--labels", str(labels)])
    assert asked.exit_code == 2
    assert "the run scored 2 metrics (goal_accuracy@2, tool_errors@1)" in asked.stderr
    assert "--metric goal_accuracy@2" in asked.stderr
    one = runner.invoke(
        app, ["calibrate", str(out), "--labels", str(labels), "--metric", "goal_accuracy", "--json"]
    )
    assert one.exit_code == 0, one.output
    document = _envelope(one.stdout, "calibrate")
    assert (document["kind"], document["n"], document["n_agree"]) == ("binary", 2, 1)


def test_compare_and_stability_dry_run_json(fake_server: FakeModelServer, tmp_path: Path) -> None:
    inputs = str(traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=True)))
    judge = ["--judge", "fake-model", "--base-url", fake_server.base_url, "--dry-run", "--json"]
    compare = runner.invoke(app, ["compare", inputs, "--formatters", "json@1,xml@1", *judge])
    assert compare.exit_code == 0, compare.output
    document = _envelope(compare.stdout, "compare")
    assert document["dry_run"] is True and document["comparison"] is None
    assert [p["formatter"] for p in document["plans"]] == ["json@1", "xml@1"]
    assert all(p["judge_calls"] == 4 for p in document["plans"])
    stability = runner.invoke(app, ["stability", inputs, "--repeats", "3", *judge])
    assert stability.exit_code == 0, stability.output
    document = _envelope(stability.stdout, "stability")
    assert document["repeats"] == 3 and len(document["plans"]) == 1
    assert fake_server.requests == []


def test_plan_payload_follows_the_plan() -> None:
    # a field added to RunPlan must be added to its JSON payload (score --json would fail)
    import dataclasses

    from agent_eval.cli._json_output import PlanSummary
    from agent_eval.run._plan import RunPlan

    assert {f.name for f in dataclasses.fields(RunPlan)} == set(PlanSummary.model_fields)


PYTHON_TYPE = re.compile(r"<(?:list\[\w+\]|\w+ range|str|int|float|path|Path|bool|text)>")


def _columns(help_text: str) -> list[str]:
    """The first column of each row of the Arguments/Options sections (names and metavars)."""
    rows = []
    for line in help_text.splitlines():
        if line.startswith("  ") and not line.startswith("   ") and line.strip():
            rows.append(re.split(r"\s{2,}", line.strip())[0])
    return rows


@pytest.mark.parametrize("path", [p for p, _ in COMMANDS], ids=" ".join)
def test_help_names_values_in_upper_case(path: list[str]) -> None:
    """Uniform metavars (fresh-user trial): no ``<list[str]>``, ``{PATH}...``, ``--resume <str>``,
    and no reStructuredText markup (``errors --help`` printed double back-ticks)."""
    result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "80"})
    assert result.exit_code == 0, result.output
    text = result.stdout
    usage = text.splitlines()[0]
    assert usage.startswith("Usage: agent-eval ") and not re.search(r"[<{}>]", usage), usage
    assert "]..." not in usage and "......" not in usage, usage
    assert not PYTHON_TYPE.search(text), PYTHON_TYPE.search(text)
    assert "``" not in text
    for column in _columns(text):
        assert not re.search(r"[<{}>]", column), column
    command = dict((" ".join(p), c) for p, c in COMMANDS)[" ".join(path)]
    for param in command.params:
        if param.param_type_name == "argument":
            assert f" {param.metavar or param.name.upper()}" in usage.replace("[", " "), usage


def test_help_metavars_of_the_trial() -> None:
    """The values the trial saw as Python types now have names a person types."""
    score = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "80"}).stdout
    assert score.startswith("Usage: agent-eval score [OPTIONS] [PATH...]\n")
    for shown in ("--resume RUN", "--fail-under X", "--tool-references FILE", "--retry-errors RUN"):
        assert shown in score
    compare = runner.invoke(app, ["compare", "--help"], env={"COLUMNS": "80"}).stdout
    assert compare.startswith("Usage: agent-eval compare [OPTIONS] PATH...\n")
    report = runner.invoke(app, ["report", "--help"], env={"COLUMNS": "80"}).stdout
    assert report.startswith("Usage: agent-eval report [OPTIONS] RUN\n")
    assert "--inputs PATH" in report and "-o, --html, --output FILE" in report
    errors = runner.invoke(app, ["errors", "--help"], env={"COLUMNS": "80"}).stdout
    assert "turn:K" in errors and "``" not in errors
