"""``--metric criteria:PATH``: a criteria file scored end to end by every CLI command.

``score`` (and its ``--dry-run`` plan), ``[metrics.NAME]`` tables of ``agent-eval.toml``,
``compare``, ``stability``, ``calibrate``, and the drift warning of ``runs diff`` and
``calibrate`` when the file changes under the same version. The judge is the fake server.
"""

from __future__ import annotations

import hashlib
import json
import shutil
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer

from ..metrics.criteria_script import CONFIRM, POLICY, script_criteria_judge
from ..run.goal_script import trace

ENV = {"COLUMNS": "200"}


@pytest.fixture(autouse=True)
def _env(judge_env_cleared: None) -> None:
    """No judge from the environment; the test's directory as the cwd."""


def _traces(tmp_path: Path) -> Path:
    path = tmp_path / "traces.jsonl"
    rows = [trace("a", done=True), trace("b", done=False), trace("c", done=True, extra="again")]
    path.write_text("".join(t.model_dump_json() + "\n" for t in rows))
    return path


def _judge(server: FakeModelServer) -> list[str]:
    return ["--judge", "fake-model", "--base-url", server.base_url]


def _invoke(*args: str) -> tuple[int, str, str]:
    result = CliRunner().invoke(app, list(args), env=ENV)
    return result.exit_code, result.stdout, result.stderr


def test_both_shipped_examples_score_end_to_end(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_criteria_judge(fake_server)
    out = tmp_path / "out"
    code, stdout, stderr = _invoke(
        "score", str(_traces(tmp_path)), "--metric", f"criteria:{POLICY},criteria:{CONFIRM}",
        *_judge(fake_server), "--out", str(out),
    )  # fmt: skip
    assert code == 0, stderr
    rows = load_results(out)
    verdicts = {(r.metric, r.conversation_id): r.verdict for r in rows}
    assert verdicts == {
        (metric, cid): verdict
        for metric in ("stayed_within_policy@1", "asked_confirmation_before_irreversible_action@1")
        for cid, verdict in (("a", "1"), ("b", "0"), ("c", "1"))
    }
    for row in rows:
        path = POLICY if row.metric.startswith("stayed") else CONFIRM
        digest = hashlib.sha256(path.read_bytes()).hexdigest()
        assert row.details["criteria_sha256"] == digest
        assert row.score == float(row.verdict or "nan") and row.reason == f"scripted {row.verdict}"
        assert row.formatter == "transcript@2" and len(row.prompt_sha256) == 64  # the default
    assert len({r.prompt_sha256 for r in rows}) == 2
    # the judge saw the question and the pass/fail rules, and the conversation as data
    policy_calls = [r for r in fake_server.requests if "Did the agent stay within" in r.text]
    assert len(policy_calls) == 3
    assert all("<data>" in r.text and "refunds only for orders" in r.text for r in policy_calls)
    with ResultStore(out) as store:
        [run] = store.runs()
    assert run.config["metric"] in {
        "stayed_within_policy@1",
        "asked_confirmation_before_irreversible_action@1",
    }
    assert run.record["criteria"] == [
        {"path": str(p), "sha256": hashlib.sha256(p.read_bytes()).hexdigest(),
         "bytes": p.stat().st_size, "metric": m}
        for p, m in ((POLICY, "stayed_within_policy@1"),
                     (CONFIRM, "asked_confirmation_before_irreversible_action@1"))
    ]  # fmt: skip
    assert "stayed_within_policy@1" in stdout


def test_dry_run_plans_the_criteria_calls_with_token_estimates(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    code, stdout, stderr = _invoke(
        "score", str(_traces(tmp_path)), "--metric", f"criteria:{POLICY}", *_judge(fake_server),
        "--dry-run", "--json",
    )  # fmt: skip
    assert code == 0, stderr
    plan = json.loads(stdout)
    assert fake_server.requests == []
    text = json.dumps(plan)
    assert "stayed_within_policy@1" in text
    [metric_plan] = plan["plans"]
    assert metric_plan["metric"] == "stayed_within_policy@1"
    assert metric_plan["judge_calls"] == 3 and metric_plan["prompt_tokens"] > 3 * 300


def test_a_metrics_table_in_the_config_names_a_criteria_file(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_criteria_judge(fake_server)
    (tmp_path / "criteria").mkdir()
    shutil.copy(POLICY, tmp_path / "criteria" / "policy.toml")
    (tmp_path / "agent-eval.toml").write_text(
        '[score]\nmetric = "policy"\n\n[metrics.policy]\ncriteria = "criteria/policy.toml"\n'
    )
    code, _, stderr = _invoke("score", str(_traces(tmp_path)), *_judge(fake_server), "--out", "o")
    assert code == 0, stderr
    assert {r.metric for r in load_results(tmp_path / "o")} == {"stayed_within_policy@1"}
    # --metric on the command line takes the table's name too
    code, _, stderr = _invoke(
        "score", str(_traces(tmp_path)), "--metric", "policy,tool_errors", *_judge(fake_server),
        "--out", "o2",
    )  # fmt: skip
    assert code == 0, stderr
    assert {r.metric for r in load_results(tmp_path / "o2")} == {
        "stayed_within_policy@1", "tool_errors@1",
    }  # fmt: skip


def test_a_bad_metrics_table_is_a_usage_error(tmp_path: Path) -> None:
    (tmp_path / "agent-eval.toml").write_text('[metrics.policy]\nfile = "p.toml"\n')
    code, _, stderr = _invoke("score", str(_traces(tmp_path)), "--metric", "policy", "--dry-run")
    assert code == 2
    assert (
        "[metrics.policy] must be one key" in stderr
        and 'criteria = "criteria/policy.toml"' in stderr
    )


def test_a_bad_criteria_file_exits_2_naming_file_key_and_fix(tmp_path: Path) -> None:
    bad = tmp_path / "bad.yaml"
    bad.write_text(CONFIRM.read_text().replace("unit: conversation", "unit: turn"))
    code, _, stderr = _invoke("score", str(_traces(tmp_path)), "--metric", f"criteria:{bad}")
    assert code == 2
    assert f"{bad}: key 'unit'" in stderr.replace("\n", "") and 'unit = "answer"' in stderr


def test_compare_and_stability_take_a_criteria_file(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_criteria_judge(fake_server)
    traces = _traces(tmp_path)
    code, stdout, stderr = _invoke(
        "compare", str(traces), "--formatters", "transcript@1,json@1", "--metric",
        f"criteria:{CONFIRM}", *_judge(fake_server), "--out", str(tmp_path / "cmp"), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    variants = json.loads(stdout)["comparison"]["variants"]
    assert [(v["variant"], v["n_pass"], v["n_ok"]) for v in variants] == [
        ("transcript@1", 2, 3), ("json@1", 2, 3),
    ]  # fmt: skip
    assert {r.metric for r in load_results(tmp_path / "cmp")} == {
        "asked_confirmation_before_irreversible_action@1"
    }
    code, stdout, stderr = _invoke(
        "stability", str(traces), "--repeats", "2", "--metric", f"criteria:{CONFIRM}",
        *_judge(fake_server), "--out", str(tmp_path / "st"), "--json",
    )  # fmt: skip
    assert code == 0, stderr
    stability = json.loads(stdout)["stability"]
    assert stability["flip_rate"] == 0.0 and stability["n_fleiss"] == 3
    assert {r.repeat for r in load_results(tmp_path / "st")} == {0, 1}


def test_a_file_changed_under_the_same_version_warns_in_runs_diff_and_calibrate(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    script_criteria_judge(fake_server)
    criteria = tmp_path / "policy.toml"
    shutil.copy(POLICY, criteria)
    traces = _traces(tmp_path)
    args = ["score", str(traces), "--metric", f"criteria:{criteria}", *_judge(fake_server)]
    assert _invoke(*args, "--out", str(tmp_path / "one"))[0] == 0
    criteria.write_text(criteria.read_text().replace("30 days", "60 days"))  # version kept
    assert _invoke(*args, "--out", str(tmp_path / "two"))[0] == 0
    # continuing the first run with the changed file is refused: its prompt hash differs
    code, _, stderr = _invoke(
        *args, "--out", str(tmp_path / "one"), "--resume", str(tmp_path / "one")
    )
    assert code == 2 and "prompt_sha256" in stderr
    code, _, stderr = _invoke("runs", "diff", str(tmp_path / "one"), str(tmp_path / "two"))
    assert code == 0, stderr
    flat = " ".join(stderr.split())
    assert "criteria stayed_within_policy@1 was recorded with 2 different files" in flat
    assert (
        "(stayed_within_policy@1 → " not in flat and "new version (stayed_within_policy@2)" in flat
    )
    # both runs' rows in one results file: calibrate warns too
    merged = tmp_path / "merged.jsonl"
    merged.write_text(
        (tmp_path / "one" / "results.jsonl").read_text()
        + (tmp_path / "two" / "results.jsonl").read_text()
    )
    labels = tmp_path / "labels.jsonl"
    labels.write_text("".join(json.dumps({"conversation_id": c, "label": 1}) + "\n" for c in "abc"))
    _, _, stderr = _invoke("calibrate", str(merged), "--labels", str(labels))
    assert "was recorded with 2 different files" in " ".join(stderr.split())
    # the same file again: no warning
    _, _, stderr = _invoke("runs", "diff", str(tmp_path / "two"), str(tmp_path / "two"))
    assert "different files" not in stderr
