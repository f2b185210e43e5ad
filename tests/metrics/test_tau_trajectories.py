"""Trajectory metrics on real tau-bench and tau2-bench records (``../shared/data``).

Every expected figure is computed here, independently, from the raw JSON records: the gold
actions (tau-bench ``info.task.actions``, tau2-bench ``evaluation_criteria.actions``) and the
calls in the transcripts, compared with plain Python equality. tau2-bench's own evaluator
result (``reward_info.action_checks[].action_match``) is a second, external oracle.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from sklearn.metrics import confusion_matrix
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.cli import app
from agent_eval.ingest.containers._tau2_bench import Tau2BenchContainer
from agent_eval.ingest.containers._tau_bench import TauBenchContainer

from .trajectory_cases import score

TAU = ("tau-bench", "gpt-4o-airline.sample.json")
TAU2 = (
    ("tau2-bench", "gpt-4.1_airline_default_gpt-4.1_1trials.json"),
    ("tau2-bench", "gpt-4.1_retail_default_gpt-4.1_1trials.subset.json"),
)

Call = tuple[str, Any]


def _tau_records(shared: Path) -> Iterator[tuple[str, list[Call], list[Call], float]]:
    """(conversation id, gold calls, agent calls, reward) of each tau-bench record."""
    for record in json.loads(shared.joinpath(*TAU).read_text()):
        gold = [(a["name"], a["kwargs"]) for a in record["info"]["task"]["actions"]]
        made = [
            (c["function"]["name"], json.loads(c["function"]["arguments"]))
            for m in record["traj"]
            if m["role"] == "assistant"
            for c in m.get("tool_calls") or []
        ]
        yield f"tau-bench/{record['task_id']}/{record['trial']}", gold, made, record["reward"]


def _tau2_records(shared: Path) -> Iterator[tuple[str, list[Call], list[Call], dict[str, Any]]]:
    """(simulation id, gold calls, agent calls, simulation) of each tau2-bench simulation."""
    for parts in TAU2:
        data = json.loads(shared.joinpath(*parts).read_text())
        tasks = {t["id"]: t for t in data["tasks"]}
        for sim in data["simulations"]:
            actions = tasks[sim["task_id"]]["evaluation_criteria"]["actions"] or []
            gold = [(a["name"], a["arguments"]) for a in actions if a["requestor"] == "assistant"]
            made = [
                (c["name"], c["arguments"])
                for m in sim["messages"]
                if m["role"] == "assistant"
                for c in m.get("tool_calls") or []
            ]
            yield sim["id"], gold, made, sim


def _matched_any(gold: list[Call], made: list[Call]) -> int:
    """One-to-one matches in any order (equality is an equivalence: greedy is optimal)."""
    left = list(made)
    count = 0
    for call in gold:
        if call in left:
            left.remove(call)
            count += 1
    return count


def _matched_in_order(gold: list[Call], made: list[Call]) -> int:
    """Longest common subsequence of the two call lists (textbook DP)."""
    table = [[0] * (len(made) + 1) for _ in range(len(gold) + 1)]
    for i, g in enumerate(gold):
        for j, m in enumerate(made):
            table[i + 1][j + 1] = (
                table[i][j] + 1 if g == m else max(table[i][j + 1], table[i + 1][j])
            )
    return table[len(gold)][len(made)]


def _prf(matched: int, n_gold: int, n_made: int) -> tuple[float, float, float]:
    precision = matched / n_made if n_made else 1.0
    recall = matched / n_gold if n_gold else 1.0
    f1 = 2 * precision * recall / (precision + recall) if precision + recall else 0.0
    return precision, recall, f1


def _traces(shared: Path) -> dict[str, AgentTrace]:
    traces = list(TauBenchContainer().read(str(shared.joinpath(*TAU))))
    for parts in TAU2:
        traces += Tau2BenchContainer().read(str(shared.joinpath(*parts)))
    assert all(isinstance(t, AgentTrace) for t in traces)
    return {t.conversation_id: t for t in traces}  # type: ignore[union-attr]


def _details(row: MetricResult) -> tuple[float, float, float]:
    return row.details["precision"], row.details["recall"], row.details["f1"]  # type: ignore[return-value]


def test_tau_bench_figures_follow_from_the_gold_actions(shared_data: Path) -> None:
    traces = _traces(shared_data)
    seen = 0
    for cid, gold, made, _reward in _tau_records(shared_data):
        trace = traces[cid]
        assert [(c.name, c.arguments) for c in trace.reference_tool_calls or ()] == gold
        free = score("tool_call_accuracy[order=any]", trace)
        assert _details(free) == pytest.approx(_prf(_matched_any(gold, made), len(gold), len(made)))
        strict = score("tool_call_accuracy", trace)
        expected = _prf(_matched_in_order(gold, made), len(gold), len(made))
        assert _details(strict) == pytest.approx(expected), cid
        superset = score("tool_call_accuracy[order=superset]", trace)
        assert superset.verdict == str(int(_matched_any(gold, made) == len(gold)))
        names = score("trajectory_match", trace)
        assert names.verdict == str(int([g[0] for g in gold] == [m[0] for m in made]))
        seen += 1
    assert seen == 26


def test_tau_bench_error_observations_are_tool_errors(shared_data: Path) -> None:
    traces = _traces(shared_data)
    for record in json.loads(shared_data.joinpath(*TAU).read_text()):
        cid = f"tau-bench/{record['task_id']}/{record['trial']}"
        results = [m for m in record["traj"] if m["role"] == "tool"]
        if not results:
            continue
        failed = sum(m["content"].startswith("Error: ") for m in results)
        row = score("tool_errors", traces[cid])
        assert row.details["errors"] == failed, cid
        assert row.score == pytest.approx(1 - failed / len(results))


def test_tau2_bench_figures_and_its_own_action_checks(shared_data: Path) -> None:
    traces = _traces(shared_data)
    checked = 0
    for cid, gold, made, sim in _tau2_records(shared_data):
        trace = traces[cid]
        assert [(c.name, c.arguments) for c in trace.reference_tool_calls or ()] == gold
        free = score("tool_call_accuracy[order=any]", trace)
        assert _details(free) == pytest.approx(_prf(_matched_any(gold, made), len(gold), len(made)))
        errors = sum(bool(m.get("error")) for m in sim["messages"] if m["role"] == "tool")
        if made:
            assert score("tool_errors", trace).details["errors"] == errors
        # tau2-bench's evaluator: each gold action matched by some call of the same name and
        # arguments; with distinct gold actions that is our one-to-one superset matching
        checks = sim["reward_info"].get("action_checks") or []
        distinct = len({json.dumps(g, sort_keys=True) for g in gold}) == len(gold)
        if checks and distinct:
            superset = score("tool_call_accuracy[order=superset]", trace)
            ours = [a.label == "match" for a in superset.atoms or ()][: len(gold)]
            assert ours == [c["action_match"] for c in checks], cid
            checked += 1
    assert checked >= 20


def test_calibrate_tool_call_accuracy_against_the_tau_rewards(
    shared_data: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """How well tool-call accuracy alone predicts task success (reward 1)."""
    monkeypatch.chdir(tmp_path)
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    inputs = [str(shared_data / "tau-bench"), str(shared_data / "tau2-bench")]
    runner = CliRunner()
    out = tmp_path / "run"
    scored = runner.invoke(
        app, ["score", *inputs, "--metric", "tool_call_accuracy[order=superset]", "--out", str(out)]
    )
    assert scored.exit_code == 0, scored.stderr
    calibrated = runner.invoke(
        app, ["calibrate", str(out), *[f"--inputs={p}" for p in inputs], "--json"]
    )
    assert calibrated.exit_code == 0, calibrated.stderr
    result = json.loads(calibrated.stdout)
    truth, predicted = [], []
    for _cid, gold, made, reward in _tau_records(shared_data):
        truth.append(int(reward == 1))
        predicted.append(int(_matched_any(gold, made) == len(gold)))
    for _cid, gold, made, sim in _tau2_records(shared_data):
        truth.append(int(sim["reward_info"]["reward"] == 1))
        predicted.append(int(_matched_any(gold, made) == len(gold)))
    assert result["n"] == len(truth) == 58
    assert result["confusion"] == confusion_matrix(truth, predicted, labels=[0, 1]).tolist()
    assert result["accuracy"] == pytest.approx(
        sum(t == p for t, p in zip(truth, predicted, strict=True)) / 58
    )
