"""The RAG example of docs/rag.md end to end (bundled fixtures, no judge), the per-turn view, its
failure classes, the [rag] policy and reviewer agreement."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval.cli import app
from agent_eval.errors import ConfigError
from agent_eval.rag._agreement import reviewer_agreement
from agent_eval.rag._policy import RagPolicy, apply_policy, load_policy
from agent_eval.run._turns import TurnRecord, failure_counts, turn_rows

REPO = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def test_docs_rag_example_scores_retrieval_with_no_judge(tmp_path: Path) -> None:
    score = runner.invoke(
        app,
        [
            "score",
            str(REPO / "fixtures" / "rag"),
            "--metric",
            "context_precision,context_recall",
            "--turn-labels",
            str(REPO / "fixtures" / "rag-turn-labels.jsonl"),
            "--out",
            "runs/rag",
        ],
    )
    assert score.exit_code == 0, score.output
    assert "scored + skipped + errored = units: 4 + 0 + 0 = 4" in score.output
    assert "scored + skipped + errored = units: 3 + 1 + 0 = 4" in score.output
    rows = [json.loads(line) for line in Path("runs/rag/results.jsonl").read_text().splitlines()]
    precision = {
        r["conversation_id"] + "/" + r["unit_id"]: r["score"]
        for r in rows
        if r["metric"] == "context_precision@1"
    }
    # from fixtures/rag_scenarios.py: 1 of 3, 1 of 3, 0 of 2, 0 of 2 relevant
    assert precision == pytest.approx(
        {
            "rag/returns/turn:1": 1 / 3,
            "rag/returns/turn:2": 1 / 3,
            "rag/warranty/turn:1": 0.0,
            "rag/price-match/turn:1": 0.0,
        }
    )
    assert {r["judge_model"] for r in rows} == {"none"}
    report = runner.invoke(app, ["rag", "runs/rag", "--json"])
    assert report.exit_code == 0, report.output
    payload = json.loads(report.output)
    assert payload["failures"] == {
        "retrieval": {"noisy_context": 2, "retrieval_miss": 1},
        "generation": {},
    }
    turns = {t["conversation_id"] + "/" + t["unit_id"]: t for t in payload["turns"]}
    first = turns["rag/returns/turn:1"]
    assert first["question"] == "How long do I have to return a blender?"
    assert [(p["id"], p["relevant"]) for p in first["passages"]] == [
        ("returns-policy", True),
        ("store-hours", False),
        ("return-shipping", False),
    ]
    # the answer span is the LLM span that produced it: one per turn
    assert first["span_id"] != turns["rag/returns/turn:2"]["span_id"]
    text = runner.invoke(app, ["rag", "runs/rag"]).output
    assert "retrieval failures: noisy_context: 2, retrieval_miss: 1" in text
    assert "no [rag] policy configured" in text


def test_unknown_passage_in_turn_labels_is_an_input_error_naming_file_and_line(
    tmp_path: Path,
) -> None:
    labels = tmp_path / "labels.jsonl"
    labels.write_text(
        '{"conversation_id": "rag/warranty", "turn": 1, "relevance": {"warranty-terms": 1}}\n'
    )
    result = runner.invoke(
        app,
        ["score", str(REPO / "fixtures" / "rag"), "--metric", "context_precision",
         "--turn-labels", str(labels), "--out", "runs/x"],
    )  # fmt: skip
    assert result.exit_code == 3  # input error (agent_eval.cli._exit_codes)
    assert "labels.jsonl:1" in result.output and "'warranty-terms'" in result.output


def test_rag_exit_codes_are_those_of_every_command(tmp_path: Path) -> None:
    """A run without turns is an unusable run (3), a missing or table-less policy a usage error
    (2); ``rag`` mapped all three to 2 (s5-fixes, "looks wrong")."""
    score = runner.invoke(
        app, ["score", str(REPO / "fixtures" / "otel"), "--metric", "loops", "--out", "runs/l"]
    )
    assert score.exit_code == 0, score.output
    no_turns = runner.invoke(app, ["rag", "runs/l", "--json"])
    assert no_turns.exit_code == 3
    assert "has no turns.jsonl" in no_turns.output
    rag = runner.invoke(
        app, ["score", str(REPO / "fixtures" / "rag"), "--metric", "context_precision",
              "--turn-labels", str(REPO / "fixtures" / "rag-turn-labels.jsonl"),
              "--out", "runs/rag"],
    )  # fmt: skip
    assert rag.exit_code == 0, rag.output
    missing = runner.invoke(app, ["rag", "runs/rag", "--policy", "none.toml"])
    assert missing.exit_code == 2
    assert "policy file none.toml not found" in missing.output
    (tmp_path / "empty.toml").write_text("[gates]\n")
    empty = runner.invoke(app, ["rag", "runs/rag", "--policy", "empty.toml"])
    assert empty.exit_code == 2
    assert "empty.toml has no [rag] table" in empty.output


def _row(subject: str, metric: str, score: float | None, **extra: Any) -> MetricResult:
    conversation, unit = subject.split("/", 1)
    fields: dict[str, Any] = {
        "run_id": "r",
        "conversation_id": conversation,
        "unit_id": unit,
        "metric": metric,
        "formatter": "none",
        "formatter_fingerprint": "",
        "prompt_sha256": "",
        "judge_model": "j",
        "started_at": "t",
    }
    if score is None:
        fields.update(status="skipped", error_type=extra.pop("error_type", "no_statements"))
    else:
        fields.update(status="ok", score=score)
    return MetricResult(**{**fields, **extra})


def _records(*subjects: str, tag: str = "ANSWERABLE") -> list[TurnRecord]:
    return [
        TurnRecord(
            conversation_id=s.split("/")[0],
            unit_id=s.split("/")[1],
            question="q",
            answer="a",
            labels={"answerability": tag, "human_ratings": {"faithfulness": i % 4 + 1}},
        )
        for i, s in enumerate(subjects)
    ]


def test_policy_filter_fails_a_relevant_invented_answer_and_weights_are_a_trend() -> None:
    records = _records("c/turn:1", "c/turn:2", "c/turn:3")
    results = [
        _row("c/turn:1", "faithfulness@1", 1.0),
        _row("c/turn:1", "answer_relevance@1", 1.0, verdict="5"),
        _row("c/turn:2", "faithfulness@1", 0.0),  # wholly invented ...
        _row("c/turn:2", "answer_relevance@1", 1.0, verdict="5"),  # ... and very relevant
        _row("c/turn:3", "faithfulness@1", None),  # a refusal: nothing to check
        _row("c/turn:3", "answer_relevance@1", 0.5, verdict="3"),
    ]
    rows = turn_rows(records, results)
    assert [r.failures for r in rows] == [[], ["hallucination"], []]
    policy = RagPolicy.model_validate(
        {
            "filter": {"metric": "faithfulness", "threshold": 1.0, "statements": 4},
            "thresholds": {"answer_relevance": {"threshold": 0.75, "turns": 3, "share": 0.6}},
            "weights": {"answer_relevance": 1.0, "faithfulness": 1.0},
        }
    )
    outcome = apply_policy(rows, policy)
    assert [t.passed for t in outcome.turns] == [True, False, False]
    assert outcome.turns[1].reasons == ["faithfulness 0 < 1 (filter)"]
    assert outcome.turns[2].reasons == ["answer_relevance 0.5 < 0.75"]
    (quality,) = outcome.qualities
    assert (quality.passing, quality.measured, quality.declared.required) == (1, 3, 2)
    assert not outcome.passed
    lines = outcome.lines()
    assert lines[0].startswith("filter: faithfulness >= 1 (4 of 4 statements); 1 of 3")
    assert "needs 2 of 3: FAILED" in lines[1]
    # the trend: turn 1 (1+1)/2 = 1; turn 2 filtered -> 0; turn 3 has no faithfulness score
    assert outcome.trend == 0.5 and outcome.trend_turns == 2
    assert (
        "trend indicator (weighted mean, weights: answer_relevance=1, faithfulness=1" in lines[-1]
    )
    no_weights = apply_policy(rows, policy.model_copy(update={"weights": None}))
    assert not any("trend" in line for line in no_weights.lines())


def test_policy_declared_over_other_turns_fails_and_missing_filter_never_passes() -> None:
    rows = turn_rows(_records("c/turn:1"), [_row("c/turn:1", "answer_relevance@1", 1.0)])
    policy = RagPolicy.model_validate(
        {"thresholds": {"answer_relevance": {"threshold": 0.5, "turns": 5}}}
    )
    outcome = apply_policy(rows, policy)
    assert outcome.turns[0].reasons == ["faithfulness not measured"]
    assert "declared over 5 turns but measured over 1: FAILED" in outcome.lines()[1]


def test_load_policy_names_the_bad_field(tmp_path: Path) -> None:
    path = tmp_path / "agent-eval.toml"
    path.write_text("[rag.filter]\nthreshold = 2\n")
    with pytest.raises(ConfigError, match=r"rag\.filter\.threshold"):
        load_policy(path)
    path.write_text("[other]\nx = 1\n")
    assert load_policy(path) is None


def test_failure_classes_split_retrieval_from_generation() -> None:
    records = _records("c/turn:1", "c/turn:2") + _records("u/turn:1", tag="UNANSWERABLE")
    results = [
        _row("c/turn:1", "context_precision@1", 0.0),
        _row("c/turn:1", "refusal@1", 1.0, verdict="1"),  # answerable, refused
        _row("c/turn:2", "context_precision@1", 1.0),
        _row("c/turn:2", "answer_relevance@1", 0.0, verdict="1", details={"rubric": 1}),
        _row("u/turn:1", "context_precision@1", 0.0),  # nothing relevant: right for it
        _row("u/turn:1", "refusal@1", 0.0, verdict="0"),  # answered an unanswerable turn
    ]
    rows = turn_rows(records, results)
    assert [r.failures for r in rows] == [
        ["retrieval_miss", "unanswered"],
        ["unanswered"],
        ["hallucination"],
    ]
    assert failure_counts(rows) == {
        "retrieval": {"retrieval_miss": 1},
        "generation": {"unanswered": 2, "hallucination": 1},
    }
    agreement = {a.reviewer: a for a in reviewer_agreement(rows)}
    refusal = agreement["refusal"]
    # judge says refused [1, 0]; the labels expect [0 (answer), 1 (decline)]
    assert (refusal.kind, refusal.n, refusal.agreement) == ("binary", 2, 0.0)
    assert agreement["context_precision"].kind == "ground_truth"
    assert "never checked" in agreement["answer_relevance"].describe()


def test_a_conversational_turn_needs_no_retrieval_so_it_is_no_retrieval_miss() -> None:
    """trial7 #18: MTRAG's CONVERSATIONAL turns ("thanks") with precision 0 were counted as
    retrieval_miss; an answerable turn with the same scores still is one."""
    records = _records("m/turn:1", tag="CONVERSATIONAL") + _records("m/turn:2")
    results = [
        _row("m/turn:1", "context_precision@1", 0.0),
        _row("m/turn:1", "context_recall@1", 0.0),
        _row("m/turn:2", "context_precision@1", 0.0),
    ]
    rows = turn_rows(records, results)
    assert [r.failures for r in rows] == [[], ["retrieval_miss"]]
    assert failure_counts(rows)["retrieval"] == {"retrieval_miss": 1}


def test_rag_fixture_ingests_to_exactly_the_scripted_conversations() -> None:
    import sys

    sys.path.insert(0, str(REPO / "fixtures"))
    from rag_scenarios import CORPUS, SCENARIOS, SYSTEM_PROMPT

    from agent_eval.ingest import ingest
    from agent_eval.metrics._units import answer_units

    expected = json.loads((REPO / "fixtures" / "expected.json").read_text())["rag"]
    traces = {t.conversation_id: t for t in ingest([str(REPO / "fixtures" / expected["file"])])}
    assert (
        sorted(traces)
        == sorted(expected["conversations"])
        == sorted(f"rag/{s.key}" for s in SCENARIOS)
    )
    for scenario in SCENARIOS:
        trace = traces[f"rag/{scenario.key}"]
        roles = [m.role for m in trace.messages]
        assert roles == ["system"] + ["system", "user", "assistant"] * len(scenario.turns)
        assert trace.messages[0].content == SYSTEM_PROMPT
        for unit, turn in zip(answer_units(trace), scenario.turns, strict=True):
            assert unit.question == turn.question and unit.answer == turn.answer
            assert [(c.metadata["id"], c.text) for c in unit.contexts] == [
                (i, CORPUS[i]) for i in turn.retrieved
            ]


def test_rag_and_formatters_list_fit_80_columns(tmp_path: Path) -> None:
    """Trial: the stacked layout printed lines of 100+ columns (``formatters list``) and a
    multi-line cell's later lines at column 0 (``rag``: "recall 1.00"). Now every line fits 80
    columns, wrapped at spaces, and a cell's later lines are indented under it."""
    env = {"COLUMNS": "80"}
    labels = str(REPO / "fixtures" / "rag-turn-labels.jsonl")
    args = ["score", str(REPO / "fixtures" / "rag"), "--metric", "context_precision,context_recall",
            "--turn-labels", labels, "--out", "runs/rag"]  # fmt: skip
    assert runner.invoke(app, args).exit_code == 0
    rag = runner.invoke(app, ["rag", "runs/rag"], env=env)
    formatters = runner.invoke(app, ["formatters", "list"], env=env)
    for result in (rag, formatters):
        assert result.exit_code == 0, result.output
        lines = result.stdout.splitlines()
        assert max(len(line) for line in lines) <= 80, max(lines, key=len)
    rag_lines = rag.stdout.splitlines()
    assert "  turn: rag/returns/turn:1" in rag_lines  # the stacked layout at 80 columns
    assert not any(line.startswith(("recall", "precision", "?", "A:")) for line in rag_lines)
    described = formatters.stdout.split("formatter: ragas-pretty@1", 1)[1]
    flat = " ".join(described.split())
    assert "Ragas MultiTurnSample.pretty_repr(), byte-identical (Ragas 0.2.15-0.4.3)" in flat


def _stored_run(directory: Path, records: list[TurnRecord], results: list[MetricResult]) -> Path:
    """A run directory as ``score`` leaves it for ``rag``: its turns and its result rows."""
    from agent_eval.run._store import ResultStore, RunRecord

    directory.mkdir(parents=True)
    (directory / "turns.jsonl").write_text("".join(r.model_dump_json() + "\n" for r in records))
    with ResultStore(directory) as store:
        store.start_run(RunRecord(run_id="r", started_at="2026-01-01T00:00:00Z", config={}))
        for row in results:
            store.add(row)
    return directory


def test_rag_shows_groundedness_per_turn_and_counts_its_failures(tmp_path: Path) -> None:
    """trial7 #4: groundedness 0 on every turn was never shown, and the view said
    "generation failures: none"."""
    records = _records("c/turn:1", "c/turn:2")
    results = [
        _row("c/turn:1", "groundedness@1", 0.0),
        _row("c/turn:2", "groundedness@1", 1.0),
    ]
    assert [r.failures for r in turn_rows(records, results)] == [["hallucination"], []]
    run = _stored_run(tmp_path / "run", records, results)
    result = runner.invoke(app, ["rag", str(run)], env={"COLUMNS": "200"})
    assert result.exit_code == 0, result.output
    assert "groundedness 0.00" in result.output and "groundedness 1.00" in result.output
    assert "generation failures: hallucination: 1" in result.output


def test_policy_never_counts_a_turn_not_measured_as_passing() -> None:
    """trial7 #11: a turn skipped by a quality (no_context, no_statements) passed its
    threshold, so "0 of 3 turns pass" sat beside "turns passing ...: 2 of 6"."""
    subjects = [f"c/turn:{i}" for i in range(1, 6)]
    records = _records(*subjects)
    results = [
        _row("c/turn:1", "faithfulness@1", 1.0),
        _row("c/turn:1", "groundedness@1", 1.0),
        _row("c/turn:2", "faithfulness@1", 1.0),
        _row("c/turn:2", "groundedness@1", 0.2),
        _row("c/turn:3", "faithfulness@1", None, error_type="no_context"),
        _row("c/turn:3", "groundedness@1", None, error_type="no_context"),
        _row("c/turn:4", "faithfulness@1", None, error_type="no_statements"),
        _row("c/turn:4", "groundedness@1", None, error_type="no_statements"),
        _row("c/turn:5", "faithfulness@1", 1.0),  # groundedness has no row at all
    ]
    policy = RagPolicy.model_validate(
        {
            "filter": {"metric": "faithfulness", "threshold": 1.0},
            "thresholds": {"groundedness": {"threshold": 0.5, "turns": 2, "share": 0.5}},
        }
    )
    outcome = apply_policy(turn_rows(records, results), policy)
    assert [t.passed for t in outcome.turns] == [True, False, False, False, False]
    assert outcome.turns[2].unmeasured == [
        "faithfulness skipped (no_context)",
        "groundedness skipped (no_context)",
    ]
    assert outcome.turns[4].unmeasured == ["groundedness not measured"]
    lines = outcome.lines()
    assert "groundedness >= 0.5: 1 of 2 turns pass, needs 1 of 2: passed" in lines
    assert "turns passing the filter and every threshold: 1 of 5" in lines
    assert lines[-1] == (
        "turns not measured by the filter or a threshold (never counted as passing): 3 of 5: "
        "faithfulness skipped (no_context) 1, faithfulness skipped (no_statements) 1, "
        "groundedness not measured 1, groundedness skipped (no_context) 1, "
        "groundedness skipped (no_statements) 1"
    )


def test_claim_metrics_are_checked_against_binary_faithful_labels() -> None:
    """trial7 #12: RAG JSON Lines labels ``{"faithful": 0/1}`` (the README's key) were
    "never checked against human labels"; calibrate's convention: 1 when every atom passed."""
    records = [
        TurnRecord(
            conversation_id="c", unit_id=f"turn:{i}", question="q", answer="a",
            labels={"faithful": label},
        )
        for i, label in enumerate([0, 1, 1, 0], 1)
    ]  # fmt: skip
    results = [
        _row(f"c/turn:{i}", "faithfulness@1", score)
        for i, score in enumerate([0.5, 1.0, 0.0, 0.0], 1)
    ]
    (agreement,) = reviewer_agreement(turn_rows(records, results))
    # judge [0, 1, 0, 0] vs human [0, 1, 1, 0]: 3 of 4 agree; kappa (0.75 - 0.5) / 0.5
    assert (agreement.kind, agreement.against, agreement.n) == ("binary", "human faithful", 4)
    assert agreement.agreement == 0.75
    assert agreement.kappa == pytest.approx(0.5)
    assert agreement.describe() == (
        "faithfulness vs human faithful: agreement 0.750, Cohen's kappa 0.500 over 4"
    )
