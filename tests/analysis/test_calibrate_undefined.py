"""``calibrate`` where kappa's interval is undefined; labelled units the run skipped (trial7 #16).

A faithfulness run of RAG JSON Lines through the fake judge: two fully supported answers labelled
faithful and an unsupported one labelled unfaithful agree with the labels: kappa 1 at n=3 has a
large-sample standard error of 0,
so no interval is printed but the reason. Two more labelled lines are skipped by the run
(``no_context``, ``no_answer``): the warning names them as skipped, apart from ids the run lacks.
"""

from __future__ import annotations

import json
from pathlib import Path

from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.testing import ClaimScript, FakeModelServer, RecordedRequest, Structured
from agent_eval.testing._claims import first_user_text, numbered_items

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "240"}
POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
A14 = "You can return it within 14 days."
AUNUSED = "It must be unused."
AFREE = "Return shipping is free."


def test_zero_width_interval_is_undefined_and_skipped_units_are_named(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    def verdicts(request: RecordedRequest) -> Structured:
        statements = numbered_items(first_user_text(request), "Statements:")
        labels = [
            {"statement": s, "reason": "r", "verdict": str(int(s != AFREE))} for s in statements
        ]
        return Structured({"verdicts": labels})

    fake_server.add_rule(verdicts, schema="StatementVerdicts")
    ClaimScript(statements={A14: [A14], AUNUSED: [AUNUSED], AFREE: [AFREE]}).install(fake_server)
    records = [
        {"id": "r1", "question": "Q1?", "contexts": [POLICY], "answer": A14},
        {"id": "r2", "question": "Q2?", "contexts": [POLICY], "answer": AUNUSED},
        {"id": "r5", "question": "Q5?", "contexts": [POLICY], "answer": AFREE},
        {"id": "r3", "question": "Q3?", "contexts": [], "answer": A14},
        {"id": "r4", "question": "Q4?", "contexts": [POLICY], "answer": ""},
    ]
    path = tmp_path / "rag.jsonl"
    path.write_text("".join(
        json.dumps({**r, "labels": {"faithful": int(r["id"] != "r5")}}) + "\n" for r in records
    ))  # fmt: skip
    run = tmp_path / "run"
    score = [
        "score", str(path), "--metric", "faithfulness", "--judge", "fake-model",
        "--base-url", fake_server.base_url, "--out", str(run),
    ]  # fmt: skip
    assert CliRunner().invoke(app, score, env=ENV).exit_code == 0
    args = ["calibrate", str(run), "--inputs", str(path), "--label-field", "faithful"]
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (
        "1.000 [interval undefined: all 3 items agree (the large-sample standard error is 0)]"
        in text
    )
    warning = " ".join(result.stderr.split())
    assert (
        "2 label(s) have no verdict (2 of them the run did not score (skipped: no_answer 1, "
        "skipped: no_context 1), 0 the run does not have (e.g. none))" in warning
    )
    document = json.loads(CliRunner().invoke(app, [*args, "--json"], env=ENV).stdout)
    assert document["kappa_ci_low"] is None
    assert document["kappa_undefined"] == "all 3 items agree (the large-sample standard error is 0)"
    assert document["not_scored"] == {
        "r3/turn:1": "skipped: no_context",
        "r4/turn:1": "skipped: no_answer",
    }
