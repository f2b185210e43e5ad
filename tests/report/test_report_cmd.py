"""``agent-eval report``: renderings from --inputs, --compare, --labels, errors."""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.cli._app import app

MakeResult = Callable[..., MetricResult]
WriteRun = Callable[[str, Sequence[MetricResult]], Path]


def _inputs(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    traces = [
        AgentTrace(
            conversation_id=cid,
            messages=(UserMessage(content=f"question {cid}"), AssistantMessage(content="answer")),
            labels={"reward": reward},
        )
        for cid, reward in [("c1", 1.0), ("c2", 0.0)]
    ]
    path.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    return path


def _report(*args: str) -> tuple[int, str]:
    result = CliRunner().invoke(app, ["report", *args])
    return result.exit_code, result.output


def test_inputs_rerender_and_carry_labels(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    run = write_run("run", [make_result("c1", "1"), make_result("c2", "1")])
    out = tmp_path / "r.html"
    code, output = _report(str(run), "--html", str(out), "--inputs", str(_inputs(tmp_path)))
    assert code == 0, output
    html = out.read_text()
    assert "[1] USER\nquestion c1" in html  # transcript@1, as the run's rows name it
    assert "No rendering stored" not in html
    assert html.count('<table class="calibration">') == 1  # rewards carried by the traces
    assert '<div class="msg role-user">' in html  # laid out from --inputs
    assert "(carried: reward=1.0)" in html
    assert "<th>Command</th>" not in html  # rows written without a runs record
    assert "1 of 2 (accuracy 0.500)" in html


def test_compare_two_runs_and_labels_file(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    run_a = write_run("a", [make_result("c1", "1"), make_result("c2", "1")])
    rows_b = [
        make_result(c, v, run_id="run-2", judge_model="gpt-4o")
        for c, v in [("c1", "1"), ("c2", "0")]
    ]
    run_b = write_run("b", rows_b)
    labels = tmp_path / "labels.csv"
    labels.write_text("conversation_id,label\nc1,pass\nc2,fail\n")
    out = tmp_path / "r.html"
    code, output = _report(
        str(run_a), "--compare", str(run_b), "--html", str(out), "--labels", str(labels)
    )
    assert code == 0, output
    html = out.read_text()
    assert "transcript@1 · gpt-4o-mini · run-1" in html
    assert "transcript@1 · gpt-4o · run-2" in html
    assert html.count('<table class="calibration">') == 2
    # list prices per 1M tokens, 2000 in and 100 out: gpt-4o-mini 0.15/0.60, gpt-4o 2.50/10.00
    assert "$0.0004" in html and "$0.0060" in html


def test_conversations_stored_with_the_run_are_laid_out(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    from agent_eval.run._artifacts import read_conversations, write_conversations

    run = write_run("run", [make_result("c1", "1"), make_result("c2", "0")])
    traces = [
        AgentTrace.model_validate_json(line) for line in _inputs(tmp_path).read_text().splitlines()
    ]
    write_conversations(run, traces)
    assert read_conversations(run, ["c2"]) == {"c2": traces[1]}
    out = tmp_path / "r.html"
    code, output = _report(str(run), "--html", str(out))
    assert code == 0, output
    html = out.read_text()
    assert html.count('<div class="msg role-user">') == 2
    assert "question c2" in html
    assert "No conversation stored" not in html


def test_missing_run_is_a_clean_error(tmp_path: Path) -> None:
    result = CliRunner().invoke(
        app, ["report", str(tmp_path / "nothing"), "--html", str(tmp_path / "r.html")]
    )
    assert result.exit_code == 3
    assert "no results at" in result.stderr
    assert not (tmp_path / "r.html").exists()


def test_an_ingest_output_is_named_as_such(tmp_path: Path) -> None:
    code, output = _report(str(_inputs(tmp_path)), "--html", str(tmp_path / "r.html"))
    assert code == 3
    assert output == (
        f"error: {tmp_path / 'traces.jsonl'}: this is an ingest output (AgentTrace lines), not a "
        "run: give a run directory or results.jsonl from `agent-eval score`\n"
    )


def test_an_invalid_row_is_one_line_naming_file_line_and_field(
    tmp_path: Path, make_result: MakeResult
) -> None:
    path = tmp_path / "results.jsonl"
    good = make_result("c1", "1").model_dump_json()
    path.write_text(good + "\n\n" + good.replace('"judge_model"', '"judge"') + "\n")
    code, output = _report(str(tmp_path), "--html", str(tmp_path / "r.html"))
    assert code == 3
    assert output == (  # the renamed key is also an extra field
        f"error: {path}:3: not a result row: judge_model: Field required (and 1 more problem(s))\n"
    )
    path.write_text('{"conversation_id": "c", "run_id": 3}\n')
    code, output = _report(str(path), "--html", str(tmp_path / "r.html"))
    assert output.startswith(f"error: {path}:1: not a result row: run_id: Input should be")
    assert output.endswith("more problem(s))\n") and output.count("\n") == 1


def test_rows_of_judge_free_metrics_are_not_rerendered_nor_cached(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    free = make_result(
        "c1", "1", metric="tool_match@1", formatter="none", judge_model="none", attempts=0
    )
    run = write_run("run", [free, make_result("c1", "1")])
    out = tmp_path / "r.html"
    code, output = _report(str(run), "--html", str(out), "--inputs", str(_inputs(tmp_path)))
    assert code == 0, output  # regression: re-rendering with formatter "none" raised
    html = out.read_text()
    assert '<span class="badge cached"' not in html  # no judge call is not a cache hit
    assert "As the judge saw it (transcript@1" in html
    assert "As the judge saw it (none" not in html


def test_report_of_one_run_without_labels_imports_no_statistics_library(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    run = write_run("run", [make_result("c1", "1"), make_result("c2", None)])
    args = ["report", str(run), "--html", str(tmp_path / "r.html")]
    code = (
        "import sys\n"
        "from typer.testing import CliRunner\n"
        "from agent_eval.cli import app\n"
        f"done = CliRunner().invoke(app, {args!r})\n"
        "assert done.exit_code == 0, done.output\n"
        "heavy = {'matplotlib', 'sklearn', 'scipy', 'statsmodels', 'numpy'}\n"
        "print(sorted({m.split('.')[0] for m in sys.modules} & heavy))\n"
    )
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
    assert (tmp_path / "r.html").is_file()


def test_the_output_file_is_named_with_o_like_other_commands(
    tmp_path: Path, make_result: MakeResult, write_run: WriteRun
) -> None:
    run = write_run("run", [make_result("c1", "1")])
    for flag in ("-o", "--output", "--html"):
        out = tmp_path / f"r{flag.strip('-')}.html"
        code, output = _report(str(run), flag, str(out))
        assert code == 0, output
        assert out.read_text().startswith("<!DOCTYPE html>")
