"""``score --metric faithfulness,groundedness,goal_accuracy`` on RAG JSON Lines: one run."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval.cli import app
from agent_eval.metrics._evidence import find_quote
from agent_eval.run._artifacts import read_units
from agent_eval.run._store import load_results
from agent_eval.testing import ClaimScript, FakeModelServer

from ..run.goal_script import script_goal_judge

runner = CliRunner()

POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
ANSWER = "You can return it within 14 days, and return shipping is free."
S14 = "You can return the product within 14 days."
SFREE = "Return shipping is free."
QUOTE = "within 14 calendar days of receipt"


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def _inputs(tmp_path: Path) -> Path:
    path = tmp_path / "rag.jsonl"
    records = [
        {"id": "returns", "question": "Can I return it?", "contexts": [{"id": "p", "text": POLICY}],
         "answer": ANSWER},
        {"id": "refusal", "question": "Is it waterproof?", "contexts": [{"text": POLICY}],
         "answer": "I don't know."},
        {"id": "nothing", "question": "Hello?", "answer": "Hi! How can I help?"},
    ]  # fmt: skip
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _score(fake_server: FakeModelServer, tmp_path: Path, *extra: str) -> tuple[int, str, str]:
    result = runner.invoke(
        app,
        [
            "score",
            str(_inputs(tmp_path)),
            "--judge",
            "fake-model",
            "--base-url",
            fake_server.base_url,
            "--out",
            str(tmp_path / "out"),
            *extra,
        ],
    )
    return result.exit_code, result.stdout, " ".join(result.stderr.split())


def _install(server: FakeModelServer) -> None:
    ClaimScript(
        statements={ANSWER: [S14, SFREE], "I don't know.": []},
        labels={S14: ("SUPPORTED", QUOTE)},
    ).install(server)
    script_goal_judge(server)


def test_three_metrics_in_one_run_one_row_per_unit_per_metric(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _install(fake_server)
    code, out, err = _score(
        fake_server, tmp_path, "--metric", "faithfulness,groundedness,goal_accuracy"
    )
    assert code == 0, err
    rows = load_results(tmp_path / "out")
    by = {(r.metric, r.conversation_id): r for r in rows}
    assert len(rows) == 9 and len({r.run_id for r in rows}) == 1
    assert by[("faithfulness@2", "returns")].score == 0.5
    assert by[("groundedness@2", "returns")].score == 0.5
    assert by[("faithfulness@2", "refusal")].error_type == "no_statements"
    assert by[("groundedness@2", "nothing")].error_type == "no_context"
    assert by[("goal_accuracy@2", "returns")].unit_id == "conversation"
    assert out.count("scored + skipped + errored = units: 1 + 2 + 0 = 3") == 2
    assert "atoms passed" in out and "1 of 2 over 1 scored units" in out
    assert "stage decompose" in out and "stage verify" in out
    assert "judge tokens and cost by stage" in out
    # per metric (trial5 #11: "0 of 2" summed rows over faithfulness and groundedness)
    assert "units with every atom passed: faithfulness@2 0 of 1; groundedness@2 0 of 1" in out
    assert "faithfulness@2 returns/turn:1: 1 of 2 passed" in out
    assert (tmp_path / "out" / "decompositions.db").is_file()
    # the report can find each verified quote in the unit's stored context
    units = read_units(tmp_path / "out")
    unit = units[("returns", "turn:1")]
    assert unit["answer"] == ANSWER and unit["contexts"][0]["text"] == POLICY
    atom = (by[("groundedness@2", "returns")].atoms or ())[0]
    assert atom.evidence_verified
    assert find_quote(atom.evidence, [c["text"] for c in unit["contexts"]]) == 0


def test_a_second_run_reuses_the_pinned_statements_unless_redecompose(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _install(fake_server)
    common = ("--metric", "faithfulness", "--no-cache")
    assert _score(fake_server, tmp_path, *common)[0] == 0
    decomposed = sum(r.schema_name == "Statements" for r in fake_server.requests)
    assert decomposed == 2
    assert _score(fake_server, tmp_path, *common)[0] == 0
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 2
    assert _score(fake_server, tmp_path, *common, "--redecompose")[0] == 0
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 4
    details = [r.details.get("decomposition") for r in load_results(tmp_path / "out")]
    assert details.count("pinned") == 2 and details.count("new") == 4


def test_a_decomposition_answered_from_the_judge_cache_says_cached(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial9 #4: a row decomposed from a cache hit said ``decomposition: new``."""
    _install(fake_server)
    cache = ("--cache-path", str(tmp_path / "cache.db"), "--metric", "faithfulness")
    assert _score(fake_server, tmp_path, *cache)[0] == 0
    first = {r.conversation_id: r.details for r in load_results(tmp_path / "out")}
    assert first["returns"]["decomposition"] == "new"
    assert _decompose_cached(first["returns"]) == 0
    (tmp_path / "out").rename(tmp_path / "first")  # a new --out: nothing pinned there
    assert _score(fake_server, tmp_path, *cache)[0] == 0
    again = {r.conversation_id: r.details for r in load_results(tmp_path / "out")}
    for cid in ("returns", "refusal"):  # "refusal" holds no statement: skipped, still cached
        assert again[cid]["decomposition"] == "cached"
        assert _decompose_cached(again[cid]) == 1
    assert _score(fake_server, tmp_path, *cache)[0] == 0  # the same --out: pinned
    third = [r.details.get("decomposition") for r in load_results(tmp_path / "out")]
    assert third.count("pinned") == 2 and third.count("cached") == 2  # the two runs in out


def _decompose_cached(details: dict[str, Any]) -> Any:
    """``details["stages"]["decompose"]["cached_calls"]`` of a row."""
    return details["stages"]["decompose"]["cached_calls"]


def test_an_atoms_gate_declares_its_atom_count_and_says_what_it_means(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _install(fake_server)
    code, _, err = _score(fake_server, tmp_path, "--metric", "faithfulness",
                          "--gate", "faith=atoms>=0.5/2")  # fmt: skip
    assert code == 0, err
    assert "1 of 2, needs 1 of 2 (at most 1 of 2 atoms may fail)" in err
    code, _, err = _score(fake_server, tmp_path, "--metric", "faithfulness",
                          "--gate", "faith=atoms>=0.8/2")  # fmt: skip
    assert code == 1 and "FAILED" in err
    code, _, err = _score(fake_server, tmp_path, "--metric", "faithfulness",
                          "--gate", "faith=atoms>=0.5/20")  # fmt: skip
    assert code == 1 and "declared over 20 items but measured over 2" in err


def test_cold_and_warm_runs_count_the_same_calls(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """Trial: a cold and a warm faithfulness run over the same inputs with one cache counted
    71 and 54 calls (decompose rows 26 and 9): units that share question, answer and contexts
    (one conversation in several files) each asked the decompose stage when they ran at once,
    as judge-cache hits, but took the pinned atoms when they ran later. Now the first asks and
    the others wait for its atoms: the same totals both times, only the cached share differs."""
    _install(fake_server)
    record = {"question": "Can I return it?", "contexts": [{"id": "p", "text": POLICY}],
              "answer": ANSWER}  # fmt: skip
    inputs = tmp_path / "in"
    inputs.mkdir()
    for name in ("a", "b"):  # the same 8 answers under 8 ids, in two files: 16 units
        lines = [json.dumps({"id": f"{name}{i}", **record}) for i in range(8)]
        (inputs / f"{name}.jsonl").write_text("".join(line + "\n" for line in lines))
    args = ["score", str(inputs), "--metric", "faithfulness", "--judge", "fake-model",
            "--base-url", fake_server.base_url, "--concurrency", "16"]  # fmt: skip
    totals = []
    for out in ("cold", "warm"):
        result = runner.invoke(app, [*args, "--out", str(tmp_path / out), "--json"])
        assert result.exit_code == 0, result.output
        rows = load_results(tmp_path / out)
        stages = [
            r.details["stages"]["decompose"]
            for r in rows
            if "decompose" in r.details.get("stages", {})
        ]
        (metric,) = json.loads(result.stdout)["metrics"]
        totals.append(
            (
                len(rows),
                sum(r.judge_calls for r in rows),
                len(stages),
                sum(s["calls"] for s in stages),
                metric["judge_calls"],
            )
        )
        if out == "cold":
            decompose_requests = sum(s["attempts"] for s in stages)
            assert decompose_requests == 1  # one distinct thing to decompose, asked once
    # 16 units: 1 decompose call + 16 verify calls (one per unit) = 17, in both runs
    assert totals[0] == totals[1] == (16, 17, 1, 1, 17)
