"""trial9 #6 and #7: ``rag`` lists every turn a gate did not measure (any skip reason, an error)
apart and never as passing, gives each gate as data in ``--json``, and shows which statements
failed under each turn's score (text, label, the quote and whether it was verified)."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from agent_eval._result import MetricResult
from agent_eval.cli import app
from agent_eval.rag._policy import RagPolicy, apply_policy
from agent_eval.run._turns import TurnRecord, turn_rows
from agent_eval.testing import ClaimScript, FakeModelServer, HttpError

runner = CliRunner()

WARRANTY = "All kettles carry a 2-year limited warranty covering manufacturing defects."
SHIPPING = "We ship to the EU and the UK only. Standard shipping takes 3-5 business days."
W_ANSWER = "The kettle has a 2-year warranty. It covers accidental damage. Repairs take 10 days."
W1, W2, W3 = (
    "The kettle has a 2-year warranty.",
    "It covers accidental damage.",
    "Repairs take 10 days.",
)
M_ANSWER = "Yes, we ship to Mars."
BROKEN = "The BROKEN answer the judge cannot take."
POLICY = """\
[rag.filter]
metric = "faithfulness"
threshold = 1.0

[rag.thresholds.groundedness]
threshold = 0.5
turns = 2
share = 0.5
"""


@pytest.fixture(autouse=True)
def _env(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> Iterator[None]:
    for name in ("OPENAI_API_KEY", "OPENAI_BASE_URL", "AGENT_EVAL_CONFIG"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.chdir(tmp_path)
    yield


def _scored_run(server: FakeModelServer, tmp_path: Path) -> Path:
    """Four one-turn RAG conversations scored for faithfulness and groundedness by the fake
    judge: a partly invented answer, a contradicted one, one the judge errors on (HTTP 400),
    and a refusal (``no_statements``)."""
    records = [
        {"id": "warranty", "question": "What about the warranty?",
         "contexts": [{"id": "warranty", "text": WARRANTY}], "answer": W_ANSWER},
        {"id": "mars", "question": "Do you ship to Mars?",
         "contexts": [{"id": "shipping", "text": SHIPPING}], "answer": M_ANSWER},
        {"id": "broken", "question": "And this?",
         "contexts": [{"id": "shipping", "text": SHIPPING}], "answer": BROKEN},
        {"id": "refusal", "question": "Is it waterproof?",
         "contexts": [{"id": "warranty", "text": WARRANTY}], "answer": "I don't know."},
    ]  # fmt: skip
    path = tmp_path / "rag.jsonl"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    server.add_rule(HttpError(400, message="this request is refused"), contains="BROKEN")
    ClaimScript(
        statements={W_ANSWER: [W1, W2, W3], M_ANSWER: [M_ANSWER], "I don't know.": []},
        labels={
            W1: ("SUPPORTED", "2-year limited warranty"),
            W2: ("SUPPORTED", "covers accidental damage"),  # not in the passage: UNVERIFIED
            M_ANSWER: ("CONTRADICTED", "We ship to the EU and the UK only"),
        },
    ).install(server)
    args = ["score", str(path), "--metric", "faithfulness,groundedness", "--judge", "fake",
            "--base-url", server.base_url, "--no-cache",
            "--out", str(tmp_path / "run")]  # fmt: skip
    result = runner.invoke(app, args)
    assert result.exit_code == 0, result.output
    (tmp_path / "agent-eval.toml").write_text(POLICY)
    return tmp_path / "run"


def test_rag_lists_every_unmeasured_turn_and_gives_each_gate_as_data(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    run = _scored_run(fake_server, tmp_path)
    shown = runner.invoke(app, ["rag", str(run)], env={"COLUMNS": "80"})
    assert shown.exit_code == 1, shown.output  # the groundedness gate fails
    text = " ".join(shown.stdout.split())
    # warranty (1 of 3) and mars (0 of 1) fail the filter; the errored turn neither fails nor
    # passes it; the refusal had nothing to check
    assert (
        "filter: faithfulness >= 1; 2 of 4 turns fail it (and so fail every quality); "
        "2 not measured by it (listed below)"
    ) in text
    assert "groundedness >= 0.5: 0 of 2 turns pass, needs 1 of 2: FAILED" in text
    assert "turns passing the filter and every threshold: 0 of 4" in text
    assert (
        "turns not measured by the filter or a threshold (never counted as passing): 2 of 4: "
        "faithfulness error (judge_bad_request) 1, faithfulness skipped (no_statements) 1, "
        "groundedness error (judge_bad_request) 1, groundedness skipped (no_statements) 1"
    ) in text

    as_json = runner.invoke(app, ["rag", str(run), "--json"])
    assert as_json.exit_code == 1
    policy = json.loads(as_json.stdout)["policy"]
    assert policy["passed"] is False
    assert (policy["turns"], policy["turns_passing"]) == (4, 0)
    filter_gate, grounded = policy["gates"]
    assert {k: v for k, v in filter_gate.items() if k != "text"} == {
        "name": "filter", "metric": "faithfulness", "threshold": 1.0, "statements": None,
        "measured": 2, "failing": 2, "needed": None, "passed": None,
        "not_measured": [
            {"subject": "broken/turn:1", "reason": "faithfulness error (judge_bad_request)"},
            {"subject": "refusal/turn:1", "reason": "faithfulness skipped (no_statements)"},
        ],
    }  # fmt: skip
    assert filter_gate["text"].startswith("filter: faithfulness >= 1; 2 of 4 turns fail it")
    assert {k: v for k, v in grounded.items() if k != "text"} == {
        "name": "groundedness", "metric": "groundedness", "threshold": 0.5, "turns": 2,
        "share": 0.5, "measured": 2, "passing": 0, "needed": 1, "passed": False,
        "not_measured": [
            {"subject": "broken/turn:1", "reason": "groundedness error (judge_bad_request)"},
            {"subject": "refusal/turn:1", "reason": "groundedness skipped (no_statements)"},
        ],
    }  # fmt: skip
    assert grounded["text"] == "groundedness >= 0.5: 0 of 2 turns pass, needs 1 of 2: FAILED"
    assert policy["not_measured"] == [
        {"subject": "broken/turn:1",
         "reasons": ["faithfulness error (judge_bad_request)",
                     "groundedness error (judge_bad_request)"]},
        {"subject": "refusal/turn:1",
         "reasons": ["faithfulness skipped (no_statements)",
                     "groundedness skipped (no_statements)"]},
    ]  # fmt: skip
    assert policy["trend"] is None and policy["text"][0] == filter_gate["text"]


def test_rag_lists_the_failing_statements_under_each_turn(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    run = _scored_run(fake_server, tmp_path)
    turns = {t["conversation_id"]: t for t in json.loads(
        runner.invoke(app, ["rag", str(run), "--json"]).stdout
    )["turns"]}  # fmt: skip
    rationale = "scripted"
    assert turns["warranty"]["failing_statements"] == [
        {"metric": "faithfulness", "text": W3, "label": "0", "evidence": None,
         "evidence_verified": None, "rationale": rationale, "judge_label": None},
        {"metric": "groundedness", "text": W2, "label": "UNVERIFIED",
         "evidence": "covers accidental damage", "evidence_verified": False,
         "rationale": rationale, "judge_label": "SUPPORTED"},
        {"metric": "groundedness", "text": W3, "label": "UNSUPPORTED", "evidence": None,
         "evidence_verified": None, "rationale": rationale, "judge_label": None},
    ]  # fmt: skip
    (contradicted,) = [
        s for s in turns["mars"]["failing_statements"] if s["metric"] == "groundedness"
    ]
    assert (contradicted["label"], contradicted["evidence_verified"]) == ("CONTRADICTED", True)
    assert turns["refusal"]["failing_statements"] == turns["broken"]["failing_statements"] == []

    shown = runner.invoke(app, ["rag", str(run)], env={"COLUMNS": "80"})
    text = " ".join(shown.stdout.split())
    # faithfulness (no quotes) takes W2 as supported: 2 of 3; groundedness 1 of 3
    assert 'faithfulness 0.67 x "Repairs take 10 days." label 0: scripted groundedness' in text
    assert (
        'groundedness 0.33 x "It covers accidental damage." UNVERIFIED (judge: SUPPORTED); '
        'quote "covers accidental damage" not in the passages: scripted '
        'x "Repairs take 10 days." UNSUPPORTED: scripted'
    ) in text
    assert (
        'x "Yes, we ship to Mars." CONTRADICTED; quote "We ship to the EU and the UK only" '
        "verified: scripted"
    ) in text
    # a supported statement is not listed as failing
    assert f'x "{W1}"' not in text


def _row(subject: str, metric: str, score: float | None, **extra: Any) -> MetricResult:
    conversation, unit = subject.split("/", 1)
    fields: dict[str, Any] = {
        "run_id": "r", "conversation_id": conversation, "unit_id": unit, "metric": metric,
        "formatter": "none", "formatter_fingerprint": "", "prompt_sha256": "",
        "judge_model": "j", "started_at": "t",
    }  # fmt: skip
    if score is None:
        fields.update(status=extra.pop("status", "skipped"), error_type=extra.pop("error_type"))
    else:
        fields.update(status="ok", score=score)
    return MetricResult(**{**fields, **extra})


def test_a_filter_skipped_for_a_missing_reply_is_not_measured_not_a_filter_failure() -> None:
    """trial9 #6: faithfulness skipped ``final_reply_missing`` counted as "failing the filter"
    and the turn was left out of "turns not measured"; a turn failing a quality was left out
    of that list too, whatever else it was not measured by."""
    subjects = ["c/turn:1", "c/turn:2", "c/turn:3"]
    records = [
        TurnRecord(conversation_id="c", unit_id=s.split("/")[1], question="q", answer="a")
        for s in subjects
    ]
    results = [
        _row("c/turn:1", "faithfulness@1", 1.0),
        _row("c/turn:1", "groundedness@1", 1.0),
        _row("c/turn:2", "faithfulness@1", None, error_type="final_reply_missing"),
        _row("c/turn:2", "groundedness@1", 1.0),  # measured, but the filter was not
        _row("c/turn:3", "faithfulness@1", None, status="error", error_type="judge_error"),
        _row("c/turn:3", "groundedness@1", 0.1),
    ]
    policy = RagPolicy.model_validate(
        {"thresholds": {"groundedness": {"threshold": 0.5, "turns": 3, "share": 0.6}}}
    )
    outcome = apply_policy(turn_rows(records, results), policy)
    assert outcome.filter_failures == 0
    assert [t.passed for t in outcome.turns] == [True, False, False]
    assert outcome.turns[1].reasons == []
    assert outcome.turns[1].unmeasured == ["faithfulness skipped (final_reply_missing)"]
    assert outcome.turns[2].reasons == ["groundedness 0.1 < 0.5"]
    assert outcome.turns[2].unmeasured == ["faithfulness error (judge_error)"]
    # turn 2's groundedness 1.0 does not pass its gate: the filter never checked the answer
    (quality,) = outcome.qualities
    assert (quality.passing, quality.measured, quality.declared.required) == (1, 3, 2)
    lines = outcome.lines()
    assert lines[0] == (
        "filter: faithfulness >= 1; 0 of 3 turns fail it (and so fail every quality); "
        "2 not measured by it (listed below)"
    )
    assert lines[-1] == (
        "turns not measured by the filter or a threshold (never counted as passing): 2 of 3: "
        "faithfulness error (judge_error) 1, faithfulness skipped (final_reply_missing) 1"
    )
