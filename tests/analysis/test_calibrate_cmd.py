"""``agent-eval calibrate``: external verdicts (the tau2 PR #103 baseline), runs, gates, errors."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest
from rich.console import Console
from typer.testing import CliRunner

from agent_eval.analysis._calibration import calibrate
from agent_eval.cli._app import app
from agent_eval.report._terminal import calibration_table
from agent_eval.run._store import ResultStore

from .conftest import MakeResult

PROMPTS = {"customer_outcome_v1": 20, "quick_triage_v1": 25, "policy_conversation_v1": 34}


def kappa_by_formula(a: list[int], b: list[int]) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), computed by hand as the test's oracle."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(k) / n) * (b.count(k) / n) for k in (0, 1))
    return (observed - expected) / (1 - expected)


def _tau2_files(shared_data: Path, prompt: str, tmp: Path) -> tuple[Path, Path, list, list]:
    summary = (
        shared_data / "tau2-judge-pr103" / f"airline-multi-judge-full.json.summary_{prompt}.json"
    )
    entries = json.loads(summary.read_text())["entries"]
    predictions, labels = tmp / f"{prompt}.predictions.jsonl", tmp / f"{prompt}.labels.csv"
    predictions.write_text(
        "".join(
            json.dumps({"conversation_id": e["simulation_id"], "verdict": e["judge_verdict"]})
            + "\n"
            for e in entries
        )
    )
    labels.write_text(
        "conversation_id,reward\n"
        + "".join(f"{e['simulation_id']},{e['tau2_reward']}\n" for e in entries)
    )
    truth = [int(float(e["tau2_reward"]) == 1.0) for e in entries]
    verdicts = [int(e["judge_verdict"] == "pass") for e in entries]
    return predictions, labels, truth, verdicts


@pytest.mark.parametrize(("prompt", "agree"), PROMPTS.items())
def test_reproduces_tau2_pr103_baseline(
    shared_data: Path, tmp_path: Path, prompt: str, agree: int
) -> None:
    predictions, labels, truth, verdicts = _tau2_files(shared_data, prompt, tmp_path)
    args = ["calibrate", "--predictions", str(predictions), "--labels", str(labels), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["n_agree"], summary["n"]) == (agree, 50)
    assert summary["kappa"] == pytest.approx(kappa_by_formula(truth, verdicts))
    assert summary["kappa_ci_low"] < summary["kappa"] < summary["kappa_ci_high"]
    assert len(summary["disagreements"]) == 50 - agree
    assert sum(map(sum, summary["confusion"])) == 50


def test_gate_fails_with_exit_1_naming_the_gate(shared_data: Path, tmp_path: Path) -> None:
    predictions, labels, _, _ = _tau2_files(shared_data, "policy_conversation_v1", tmp_path)
    base = ["calibrate", "--predictions", str(predictions), "--labels", str(labels)]
    failed = CliRunner().invoke(app, [*base, "--gate", "human=accuracy>=0.8/50"])
    assert failed.exit_code == 1
    assert "gate 'human' (labels) FAILED: accuracy 34 of 50, needs 40 of 50" in failed.output
    passed = CliRunner().invoke(app, [*base, "--gate", "human=accuracy>=0.68/50"])
    assert passed.exit_code == 0, passed.output


def test_calibrate_a_run_with_config_gate(tmp_path: Path, make_result: MakeResult) -> None:
    run = tmp_path / "run"
    with ResultStore(run) as store:
        for cid, verdict in [("a", "1"), ("b", "0"), ("c", "1"), ("d", None)]:
            store.add(make_result(cid, verdict))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        "".join(
            json.dumps({"conversation_id": c, "label": v}) + "\n"
            for c, v in [("a", "pass"), ("b", "fail"), ("c", "pass"), ("d", "fail")]
        )
    )
    config = tmp_path / "agent-eval.toml"
    config.write_text('[gates.three]\nstatistic = "accuracy"\nthreshold = 0.8\nitems = 3\n')
    args = ["calibrate", str(run), "--labels", str(labels), "--config", str(config), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert summary["n_agree"] == summary["n"] == 3
    assert summary["unpredicted"] == ["d"]
    assert summary["identity"]["formatter"] == "transcript@1"
    assert "gate 'three' (labels) passed: accuracy 3 of 3" in result.stderr


def test_bad_labels_file_exits_2_naming_file_and_line(tmp_path: Path) -> None:
    predictions = tmp_path / "p.csv"
    predictions.write_text("conversation_id,verdict\na,pass\n")
    labels = tmp_path / "l.csv"
    labels.write_text("conversation_id,label\na,maybe\n")
    done = subprocess.run(
        [
            sys.executable,
            "-c",
            "from agent_eval.cli import main; main()",
            "calibrate",
            "--predictions",
            str(predictions),
            "--labels",
            str(labels),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert done.returncode == 3
    assert "l.csv:2" in done.stderr and "'maybe'" in done.stderr
    assert "Traceback" not in done.stderr


def test_labels_carried_by_ingested_tau2_traces(shared_data: Path, tmp_path: Path) -> None:
    """The same baseline with the labels read from the tau2 run itself (rewards at ingest)."""
    predictions, _, _, _ = _tau2_files(shared_data, "quick_triage_v1", tmp_path)
    run = shared_data / "tau2-judge-pr103" / "azure-airline-full.json"
    args = ["calibrate", "--predictions", str(predictions), "--inputs", str(run), "--json"]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    summary = json.loads(result.stdout)
    assert (summary["n_agree"], summary["n"]) == (25, 50)
    assert summary["confusion"][1][0] + summary["confusion"][1][1] == 23  # 23 rewards of 1


def _verdicts_and_labels(tmp_path: Path, verdicts: str, labels: str) -> list[str]:
    predictions, truth = tmp_path / "p.csv", tmp_path / "l.csv"
    predictions.write_text("conversation_id,verdict\n" + verdicts)
    truth.write_text("conversation_id,label\n" + labels)
    return ["calibrate", "--predictions", str(predictions), "--labels", str(truth)]


def test_no_shared_ids_exits_2_showing_ids_of_both_sides(tmp_path: Path) -> None:
    args = _verdicts_and_labels(tmp_path, "a,1\nb,0\nc,1\n", "x,1\ny,0\n")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3, result.output
    message = " ".join(result.stderr.split())
    assert f"the predictions ({tmp_path / 'p.csv'}) and the labels share no conversation ids" in (
        message
    )
    assert "the verdicts are for 'a', 'b', ... (3 in all); the labels for 'x', 'y'." in message


def test_no_ok_verdict_in_a_run_exits_2(tmp_path: Path, make_result: MakeResult) -> None:
    run = tmp_path / "run"
    with ResultStore(run) as store:
        store.add(make_result("a", None))
    labels = tmp_path / "l.csv"
    labels.write_text("conversation_id,label\na,1\n")
    result = CliRunner().invoke(app, ["calibrate", str(run), "--labels", str(labels)])
    assert result.exit_code == 3
    assert f"the run ({run}) holds no ok verdicts to calibrate" in " ".join(result.stderr.split())


def test_partial_overlap_reports_unmatched_on_each_side(tmp_path: Path) -> None:
    args = _verdicts_and_labels(tmp_path, "a,1\nb,0\nc,1\n", "a,1\nb,1\nx,0\ny,1\nz,1\n")
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 0, result.output
    err = " ".join(result.stderr.split())
    assert "1 verdict(s) have no label (e.g. 'c') and 3 label(s) have no verdict" in err
    assert "(e.g. 'x', 'y', ... (3 in all)); calibrated on the 2 conversations with both" in err
    assert "1 of 2 (accuracy 0.500)" in result.stdout
    console = Console(record=True, width=200)
    console.print(calibration_table(calibrate({"a": 1, "b": 0, "c": 1}, {"a": 1, "b": 1, "x": 0})))
    assert (
        "unmatched                  │ 1 verdict(s) without a label, 1 label(s) without a verdict"
        in (console.export_text())
    )


def test_labels_with_no_label_say_so(tmp_path: Path) -> None:
    # regression: an empty labels file printed "the labels for . Label the conversations..."
    predictions = tmp_path / "p.csv"
    predictions.write_text("conversation_id,verdict\na,1\nb,0\n")
    empty = tmp_path / "empty.jsonl"
    empty.write_text("")
    args = ["calibrate", "--predictions", str(predictions), "--labels", str(empty)]
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 3  # input error (agent_eval.cli._exit_codes)
    assert "the labels hold no label" in result.stderr
    assert "the labels for ." not in result.stderr


def test_calibrate_takes_the_metric_spelled_as_score_takes_it(
    tmp_path: Path, make_result: Any
) -> None:
    # regression: --metric 'tool_call_accuracy[order=superset]' matched nothing (only @1[...] did)
    from agent_eval.run._store import ResultStore

    with ResultStore(tmp_path / "run") as store:
        for cid, verdict in (("a", "1"), ("b", "0")):
            store.add(make_result(cid, verdict, metric="tool_call_accuracy@1[order=superset]"))
            store.add(make_result(cid, "1", metric="trajectory_match@1"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"conversation_id": "a", "label": 1}\n{"conversation_id": "b", "label": 1}\n'
    )
    for spelling in ("tool_call_accuracy[order=superset]", "tool_call_accuracy@1[order=superset]",
                     "tool_call_accuracy"):  # fmt: skip
        args = ["calibrate", str(tmp_path / "run"), "--labels", str(labels), "--metric", spelling,
                "--json"]  # fmt: skip
        result = CliRunner().invoke(app, args)
        assert result.exit_code == 0, (spelling, result.output)
        assert json.loads(result.stdout)["n_agree"] == 1
    wrong = CliRunner().invoke(
        app, ["calibrate", str(tmp_path / "run"), "--labels", str(labels),
              "--metric", "tool_call_accuracy[order=any]"],
    )  # fmt: skip
    assert wrong.exit_code == 2 and "no results match --metric" in wrong.stderr


def test_bare_metric_name_means_the_default_identity(tmp_path: Path, make_result: Any) -> None:
    # regression (trial5 #7): a run of tool_call_accuracy and tool_call_accuracy[order=superset]
    # gave "the results mix 2 configurations" for --metric tool_call_accuracy
    with ResultStore(tmp_path / "run") as store:
        for cid, strict, superset in (("a", "0", "1"), ("b", "0", "1"), ("c", "1", "1")):
            store.add(make_result(cid, strict, metric="tool_call_accuracy@1"))
            store.add(make_result(cid, superset, metric="tool_call_accuracy@1[order=superset]"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(f'{{"conversation_id": "{c}", "label": 1}}\n' for c in "abc"))
    base = ["calibrate", str(tmp_path / "run"), "--labels", str(labels), "--json", "--metric"]
    agree = {}
    for spelling in ("tool_call_accuracy", "tool_call_accuracy@1",
                     "tool_call_accuracy[order=superset]"):  # fmt: skip
        result = CliRunner().invoke(app, [*base, spelling])
        assert result.exit_code == 0, (spelling, result.output)
        agree[spelling] = (json.loads(result.stdout)["n_agree"], json.loads(result.stdout)["n"])
    assert agree == {
        "tool_call_accuracy": (1, 3),  # only c: the strict default, as @1 names it
        "tool_call_accuracy@1": (1, 3),
        "tool_call_accuracy[order=superset]": (3, 3),
    }


def test_bare_metric_name_with_no_default_variant_lists_the_variants(
    tmp_path: Path, make_result: Any
) -> None:
    with ResultStore(tmp_path / "run") as store:
        for order in ("any", "in_order"):
            store.add(make_result("a", "1", metric=f"trajectory_match@1[order={order}]"))
    labels = tmp_path / "labels.jsonl"
    labels.write_text('{"conversation_id": "a", "label": 1}\n')
    args = ["calibrate", str(tmp_path / "run"), "--labels", str(labels),
            "--metric", "trajectory_match"]  # fmt: skip
    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2
    assert "the run scored 2 variants of trajectory_match" in result.stderr
    assert "trajectory_match@1[order=any], trajectory_match@1[order=in_order]" in result.stderr


def test_judge_free_configuration_shows_no_formatter_no_prompt(
    tmp_path: Path, make_result: Any
) -> None:
    # regression (trial5 #13): "applies to" read "tool_call_accuracy@1 | none# | prompt  | ..."
    judge_free = {"formatter": "none", "formatter_fingerprint": "", "prompt_sha256": "",
                  "judge_model": "none", "input_tokens": 0, "output_tokens": 0}  # fmt: skip
    with ResultStore(tmp_path / "run") as store:
        for cid, verdict in (("a", "1"), ("b", "0")):
            store.add(make_result(cid, verdict, metric="tool_call_accuracy@1", **judge_free))
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"conversation_id": "a", "label": 1}\n{"conversation_id": "b", "label": 1}\n'
    )
    args = ["calibrate", str(tmp_path / "run"), "--labels", str(labels)]
    result = CliRunner(env={"COLUMNS": "200"}).invoke(app, args)
    assert result.exit_code == 0, result.output
    assert "tool_call_accuracy@1 | no formatter, no prompt (judge-free)" in result.stdout
    assert "none#" not in result.stdout and "prompt  " not in result.stdout


def test_configuration_identity_text_of_judged_rows(make_result: Any) -> None:
    from agent_eval.analysis._selection import ConfigurationIdentity

    judged = ConfigurationIdentity.of(make_result("a", "1"))
    assert str(judged) == (
        "goal_accuracy@1 | transcript@1#ffffffffffff | prompt aaaaaaaaaaaa | judge gpt-4o-mini"
    )
    no_rendering = ConfigurationIdentity.of(
        make_result(
            "a", "1", metric="context_precision@1", formatter="none", formatter_fingerprint=""
        )
    )
    assert str(no_rendering) == (
        "context_precision@1 | no formatter | prompt aaaaaaaaaaaa | judge gpt-4o-mini"
    )


def test_disagreements_and_one_sided_ids_are_in_natural_order(tmp_path: Path) -> None:
    """trial9 #10: ``disagreements: c1, c10, c16, ..., c9`` was string order."""
    ids = [f"c{i}" for i in (1, 2, 9, 10, 16, 23)]
    predictions, labels = tmp_path / "verdicts.jsonl", tmp_path / "labels.csv"
    predictions.write_text(
        "".join(json.dumps({"conversation_id": c, "verdict": 0}) + "\n" for c in [*ids, "x11"])
        + "".join(json.dumps({"conversation_id": c, "verdict": 1}) + "\n" for c in ("x2", "x100"))
    )
    labels.write_text("conversation_id,label\n" + "".join(f"{c},1\n" for c in [*ids, "y10", "y9"]))
    args = ["calibrate", "--predictions", str(predictions), "--labels", str(labels)]
    shown = CliRunner().invoke(app, args, env={"COLUMNS": "300"})
    assert shown.exit_code == 0, shown.output
    (row,) = [line for line in shown.stdout.splitlines() if "disagreements" in line]
    assert row.split("│")[2].strip() == "c1, c2, c9, c10, c16, c23"
    summary = json.loads(CliRunner().invoke(app, [*args, "--json"]).stdout)
    assert summary["disagreements"] == ids
    assert summary["unlabelled"] == ["x2", "x11", "x100"]
    assert summary["unpredicted"] == ["y9", "y10"]
