"""``agent-eval score`` end to end: CLI -> ingest -> engine -> fake server over HTTP -> store."""

from __future__ import annotations

import logging
import os
import sqlite3
from pathlib import Path

import orjson
import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.cli._score_cmds import redact_argv
from agent_eval.run._store import load_results
from agent_eval.testing import FakeModelServer, InvalidVerdict

from ..run.goal_script import script_goal_judge, trace

SECRET = "sk-cli-SECRET-5f3a9c0e7d"
runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(judge_env_cleared: None, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MY_JUDGE_KEY", SECRET)


def traces_file(path: Path, *traces: object) -> Path:
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces))  # type: ignore[attr-defined]
    return path


def sample(tmp_path: Path) -> Path:
    return traces_file(
        tmp_path / "traces.jsonl",
        trace("a", done=True, reference="book a table"),
        trace("b", done=False, reference="book a table"),
        trace("c", done=True),
        trace("d", done=True, reference="IMPOSSIBLE"),
    )


def score(*args: str) -> tuple[int, str, str]:
    result = runner.invoke(app, ["score", *args])
    return result.exit_code, result.stdout, result.stderr


def judge_args(server: FakeModelServer, out: Path) -> list[str]:
    return [
        "--judge",
        "fake-model",
        "--base-url",
        server.base_url,
        "--api-key-env",
        "MY_JUDGE_KEY",
        "--out",
        str(out),
    ]


def test_no_judge_shows_the_plan_and_how_to_configure(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("MY_JUDGE_KEY")
    code, out, err = score(str(sample(tmp_path)))
    assert code == 2
    assert "scoring plan" in out and "goal_accuracy@2" in out and "transcript@2" in out
    assert "No judge is configured" in err and "OPENAI_API_KEY" in err and "--base-url" in err
    assert "Ollama" in err and "vLLM" in err and "llama.cpp" in err
    assert "Traceback" not in out + err


def cell(out: str, what: str) -> str:
    """The value next to ``what`` in a two-column rich table."""
    for line in out.splitlines():
        cells = [c.strip() for c in line.split("│") if c.strip()]
        if cells and cells[0] == what:
            return " ".join(cells[1:])
    raise AssertionError(f"no {what!r} row in:\n{out}")


def test_dry_run_plans_calls_tokens_and_cost(tmp_path: Path) -> None:
    code, out, _ = score(
        str(sample(tmp_path)), "--dry-run", "--judge", "gpt-4o-mini", "--with-reference"
    )
    assert code == 0
    assert (cell(out, "metric"), cell(out, "formatter"), cell(out, "judge")) == (
        "goal_accuracy@2",
        "transcript@2",
        "gpt-4o-mini",
    )
    assert (cell(out, "conversations"), cell(out, "to score")) == ("4", "3")
    assert cell(out, "skipped") == "1 (missing_reference: 1)"
    assert cell(out, "judge calls") == "6"  # 3 conversations x 2 stages
    assert int(cell(out, "prompt tokens").split()[0].replace(",", "")) > 3 * 400
    assert cell(out, "estimated cost").startswith("$0.0")
    assert not list(tmp_path.glob("runs/*")), "a dry run writes no results"


def test_full_run_writes_matching_stores_without_the_key(
    fake_server: FakeModelServer, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    caplog.set_level(logging.DEBUG)  # openai and httpx2 log requests at DEBUG
    fake_server.add_rule(InvalidVerdict("1.0"), contains="IMPOSSIBLE")
    script_goal_judge(fake_server)
    out_dir = tmp_path / "run"
    code, out, err = score(
        str(sample(tmp_path)), "--with-reference", *judge_args(fake_server, out_dir)
    )
    assert code == 0, err
    assert "scored + skipped + errored = units: 2 + 1 + 1 = 4" in out
    rows = load_results(out_dir / "results.db")
    assert rows == load_results(out_dir / "results.jsonl")
    assert {r.conversation_id: (r.status, r.verdict, r.error_type) for r in rows} == {
        "a": ("ok", "1", None),
        "b": ("ok", "0", None),
        "c": ("skipped", None, "missing_reference"),
        "d": ("error", None, "invalid_judge_output"),
    }
    jsonl_fields = set(orjson.loads((out_dir / "results.jsonl").read_bytes().splitlines()[0]))
    assert {
        "run_id",
        "trace_ids",
        "formatter_fingerprint",
        "prompt_sha256",
        "started_at",
        "raw_reply",
    } <= jsonl_fields
    with sqlite3.connect(out_dir / "results.db") as db:
        [(argv, config)] = db.execute("SELECT argv, config FROM runs").fetchall()
    assert orjson.loads(config)["judge_model"] == "fake-model"
    assert SECRET not in argv
    blobs = [out.encode(), err.encode(), caplog.text.encode()]
    blobs += [p.read_bytes() for p in out_dir.iterdir()]
    assert "chat/completions" in caplog.text  # the logs were captured
    assert not any(SECRET.encode() in blob for blob in blobs)
    assert not any(SECRET.encode() in orjson.dumps(r.body) for r in fake_server.requests)


def test_references_from_jsonl_and_csv_files(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    inputs = str(sample(tmp_path))
    (tmp_path / "refs.jsonl").write_text(
        '{"conversation_id": "a", "reference": "IMPOSSIBLE by file"}\n'
    )
    (tmp_path / "refs.csv").write_text('conversation_id,reference\nc,"from csv, quoted"\n')
    for name, expected in (
        ("refs.jsonl", {"a": "IMPOSSIBLE by file"}),
        ("refs.csv", {"c": "from csv, quoted"}),
    ):
        out_dir = tmp_path / f"out-{name}"
        code, _, err = score(
            inputs,
            "--with-reference",
            "--references",
            str(tmp_path / name),
            *judge_args(fake_server, out_dir),
        )
        assert code == 0, err
        rows = {r.conversation_id: r for r in load_results(out_dir)}
        for conversation_id, reference in expected.items():
            assert rows[conversation_id].reference == reference
        assert rows["b"].reference == "book a table"  # the trace's own, where the file has none
    by_jsonl = {r.conversation_id: r for r in load_results(tmp_path / "out-refs.jsonl")}
    by_csv = {r.conversation_id: r for r in load_results(tmp_path / "out-refs.csv")}
    assert (by_jsonl["a"].verdict, by_csv["c"].status) == ("0", "ok")


def test_config_file_with_flags_overriding(fake_server: FakeModelServer, tmp_path: Path) -> None:
    script_goal_judge(fake_server)
    (tmp_path / "agent-eval.toml").write_text(
        f'[score]\njudge = "fake-model"\nbase-url = "{fake_server.base_url}"\n'
        'api-key-env = "MY_JUDGE_KEY"\n'
        'out = "from-config"\nformatter = "transcript@1"\nwith_reference = true\n'
    )
    code, _, err = score(str(sample(tmp_path)), "--formatter", "ragas-pretty@1")
    assert code == 0, err
    rows = load_results(tmp_path / "from-config")
    assert {r.formatter for r in rows} == {"ragas-pretty@1"}
    assert {r.reference for r in rows if r.conversation_id == "a"} == {"book a table"}


def test_config_errors_exit_2_without_traceback(tmp_path: Path) -> None:
    inputs = str(sample(tmp_path))
    (tmp_path / "key.toml").write_text('[score]\napi-key = "sk-nope"\n')
    (tmp_path / "typo.toml").write_text("[score]\nconcurency = 3\n")
    for args, message in (
        (["--config", str(tmp_path / "key.toml")], "api-key-env"),
        (["--config", str(tmp_path / "typo.toml")], "concurency"),
        (["--metric", "nope"], "unknown metric 'nope'; available: "),
        (["--formatter", "nope@9"], "nope@9"),
        (["--concurrency", "0"], "concurrency"),
        (["--workers", "0", "--engine", "ray"], "workers: Input should be greater than or equal"),
    ):
        code, out, err = score(inputs, *args)
        assert code == 2, (args, out, err)
        assert message in err and "Traceback" not in out + err
        assert err.count("\n") == 1 and err.startswith("error: "), err  # one line, no usage
        assert "sk-nope" not in out + err
    code, _, err = score(str(tmp_path / "missing.jsonl"), "--dry-run")
    assert code == 3 and "missing.jsonl" in err


@pytest.mark.parametrize(("threshold", "expected"), [("0.9", 1), ("0.5", 0)])
def test_fail_under_gates_on_the_mean_score(
    fake_server: FakeModelServer, tmp_path: Path, threshold: str, expected: int
) -> None:
    script_goal_judge(fake_server)
    inputs = traces_file(tmp_path / "t.jsonl", trace("a", done=True), trace("b", done=False))
    code, out, err = score(
        str(inputs), "--fail-under", threshold, *judge_args(fake_server, tmp_path / threshold)
    )
    assert code == expected, out + err
    assert ("gate failed: goal_accuracy@2 mean score 0.500" in err) == (expected == 1)


def test_redact_argv_hides_secret_flags_and_values() -> None:
    argv = ["agent-eval", "score", "--api-key", "k1", "--token=k2", "x", f"--note={SECRET}"]
    assert redact_argv(argv, (SECRET,)) == (
        "agent-eval",
        "score",
        "--api-key",
        "***",
        "--token=***",
        "x",
        "--note=***",
    )


@pytest.mark.parametrize("dataset", ["tau-bench", "tau2-bench"])
def test_tau_datasets_with_instructions_as_references(
    shared_data: Path, fake_server: FakeModelServer, tmp_path: Path, dataset: str
) -> None:
    script_goal_judge(fake_server)
    out_dir = tmp_path / dataset
    code, out, err = score(
        str(shared_data / dataset),
        "--with-reference",
        "--concurrency",
        "8",
        "--no-cache",  # identical requests would be answered once from the judge-call cache
        *judge_args(fake_server, out_dir),
    )
    assert code == 0, err
    rows = load_results(out_dir)
    assert rows and all(r.status == "ok" and r.reference for r in rows)
    compare = [r for r in fake_server.requests if r.schema_name == "OutcomeComparison"]
    assert len(compare) == len(rows)
    assert any(rows[0].reference.splitlines()[0] in r.text for r in compare)  # type: ignore[union-attr]
    assert f"scored + skipped + errored = units: {len(rows)} + 0 + 0 = {len(rows)}" in out


def test_run_keeps_what_the_judge_saw_for_the_report(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: score runs kept no renderings, so `report` could not show the conversations
    # without re-ingesting the inputs
    from agent_eval.formatting import get_formatter
    from agent_eval.run._artifacts import read_renderings

    script_goal_judge(fake_server)
    out_dir = tmp_path / "run"
    code, _, err = score(
        str(sample(tmp_path)), "--formatter", "transcript@1", *judge_args(fake_server, out_dir)
    )
    assert code == 0, err
    expected = get_formatter("transcript@1").render(trace("a", done=True, reference="book a table"))
    renderings = read_renderings(out_dir)
    assert set(renderings) == {(cid, "transcript@1") for cid in "abcd"}
    assert renderings[("a", "transcript@1")] == expected


def test_help_shows_every_option_text_whole() -> None:
    # regression: rich markup swallowed "[gates.<name>]" from --gate's help ("...; also .")
    import typer.main

    result = runner.invoke(app, ["score", "--help"], env={"COLUMNS": "1000"}, terminal_width=1000)
    assert result.exit_code == 0
    command = typer.main.get_command(app).get_command(None, "score")  # type: ignore[arg-type]
    helps = [p.help for p in command.params if getattr(p, "help", None)]
    assert len(helps) > 20
    for text in helps:
        assert text.replace("\\[", "[") in result.stdout, text  # every character shown
    assert "also the [gates.<name>] tables" in result.stdout


COUNT_FORMATTER = """\
from agent_eval.formatting import Formatter, NoParams

class CountV1(Formatter[NoParams]):
    name = "count-f1"
    version = 1
    description = "the number of messages"

    def render(self, trace):
        return f"MESSAGES={len(trace.messages)}"
"""


@pytest.mark.parametrize("where", ["flag", "config"])
def test_formatter_path_loads_a_formatter_to_score_with(
    fake_server: FakeModelServer, tmp_path: Path, where: str
) -> None:
    from agent_eval.formatting import formatters

    plugins = tmp_path / "my_formatters"
    plugins.mkdir()
    (plugins / "count_v1.py").write_text(COUNT_FORMATTER)
    script_goal_judge(fake_server)
    args = [str(sample(tmp_path)), "--formatter", "count-f1@1"]
    if where == "flag":
        args += ["--formatter-path", str(plugins)]
    else:
        (tmp_path / "agent-eval.toml").write_text('[score]\nformatter-path = "my_formatters"\n')
    try:
        code, _, err = score(*args, *judge_args(fake_server, tmp_path / "out"))
    finally:
        formatters.unregister("count-f1@1")
    assert code == 0, err
    assert {r.formatter for r in load_results(tmp_path / "out")} == {"count-f1@1"}
    assert any("MESSAGES=2" in r.text for r in fake_server.requests)


def test_finished_run_leaves_no_sqlite_wal_or_shm_files(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: reading the results back read-only left results.db-wal and -shm behind
    script_goal_judge(fake_server)
    out_dir = tmp_path / "run"
    code, _, err = score(str(sample(tmp_path)), *judge_args(fake_server, out_dir))
    assert code == 0, err
    expected = {  # the judge-call cache is per user, not in OUT/
        "results.db",
        "results.jsonl",
        "renderings.jsonl",
        "conversations.jsonl",
    }
    assert {p.name for p in out_dir.iterdir()} == expected
    code, _, err = score(
        str(sample(tmp_path)), *judge_args(fake_server, out_dir), "--resume", "run"
    )
    assert code == 0, err
    assert runner.invoke(app, ["errors", str(out_dir)]).exit_code == 0
    assert {p.name for p in out_dir.iterdir()} == expected
    cache = Path(os.environ["AGENT_EVAL_CACHE_PATH"])
    assert cache.is_file()
    assert not [p for p in cache.parent.iterdir() if p.name.endswith(("-wal", "-shm"))]


def test_scoring_again_into_a_new_out_makes_no_judge_call(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: the cache lived in OUT/, so a new --out paid for every call again
    script_goal_judge(fake_server)
    code, _, err = score(str(sample(tmp_path)), *judge_args(fake_server, tmp_path / "first"))
    assert code == 0, err
    sent = len(fake_server.requests)
    assert sent > 0
    code, _, err = score(str(sample(tmp_path)), *judge_args(fake_server, tmp_path / "second"))
    assert code == 0, err
    assert len(fake_server.requests) == sent


def test_a_gate_score_cannot_measure_is_refused_before_any_judge_call(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    # regression: `score --gate accuracy>=0.7/15` scored everything, then printed
    # "not applicable" and exited 0 without enforcing the gate
    script_goal_judge(fake_server)
    code, _, err = score(
        str(sample(tmp_path)),
        "--gate",
        "accuracy>=0.7/15",
        *judge_args(fake_server, tmp_path / "g"),
    )
    assert code == 2
    assert "mean_score" in err
    assert fake_server.requests == []


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--metric", "goal_acuracy"], "metric 'goal_acuracy'; did you mean 'goal_accuracy'?"),
        (["--formatter", "transcrpt@1"], "formatter 'transcrpt@1'; did you mean 'transcript@1'?"),
        (["--config", "judge.toml"], "judge 'langchian'; did you mean 'langchain'?"),
    ],
)  # fmt: skip
def test_unknown_names_suggest_the_closest(tmp_path: Path, args: list[str], message: str) -> None:
    """Trial: a typo exits 2 with the list, and now the close match (difflib), input unread.

    (``--judge langchian:x`` is a model name, as any unregistered KIND; the kind of a
    ``[judge]`` table must be registered.)
    """
    (tmp_path / "judge.toml").write_text('[judge]\nkind = "langchian"\n')
    args = [str(tmp_path / a) if a.endswith(".toml") else a for a in args]
    code, out, err = score(str(sample(tmp_path)), "--dry-run", *args)
    flat = " ".join(err.split())
    assert code == 2, (out, err)
    assert f"unknown {message}" in flat and "available: " in flat
    assert "ingested" not in flat  # a usage error, reported before any input is read
