"""``stability`` on claim-level metrics: pinned atoms across repeats, flip rate per atom."""

from __future__ import annotations

import itertools
import json
from pathlib import Path

import pytest
from typer.testing import CliRunner

from agent_eval.cli._app import app
from agent_eval.testing import ClaimScript, FakeModelServer, RecordedRequest, Structured
from agent_eval.testing._claims import first_user_text, numbered_items

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
POLICY = "Returns are accepted within 14 calendar days of receipt. The product must be unused."
ANSWER = "You can return it within 14 days, and return shipping is free."
STEADY = "Gift cards cannot be returned."
S14 = "You can return the product within 14 days."
SFREE = "Return shipping is free."


def _inputs(tmp_path: Path) -> Path:
    path = tmp_path / "rag.jsonl"
    records = [
        {"id": "wobbly", "question": "Can I return it?", "contexts": [POLICY], "answer": ANSWER},
        {"id": "steady", "question": "Gift cards?", "contexts": [POLICY], "answer": STEADY},
    ]
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def _script(server: FakeModelServer) -> None:
    """The free-shipping statement's verdict alternates 1, 0, 1... across calls."""
    flips = itertools.cycle(["1", "0"])

    def verdicts(request: RecordedRequest) -> Structured:
        out = []
        for statement in numbered_items(first_user_text(request), "Statements:"):
            verdict = next(flips) if statement == SFREE else "1" if statement == S14 else "0"
            out.append({"statement": statement, "reason": "r", "verdict": verdict})
        return Structured({"verdicts": out})

    server.add_rule(verdicts, schema="StatementVerdicts")
    ClaimScript(statements={ANSWER: [S14, SFREE], STEADY: [STEADY]}).install(server)


def _stability(server: FakeModelServer, tmp_path: Path, *extra: str) -> dict:
    args = [
        "stability", str(_inputs(tmp_path)), "--repeats", "3", "--metric", "faithfulness",
        "--judge", "fake-model", "--base-url", server.base_url, "--out", str(tmp_path / "st"),
        "--json", *extra,
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    stability: dict = json.loads(result.stdout)["stability"]
    return stability


def test_repeats_judge_the_pinned_atoms_and_report_flips_per_atom(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _script(fake_server)
    st = _stability(fake_server, tmp_path)
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 2
    by = {c["conversation_id"]: c for c in st["conversations"]}
    wobbly, steady = by["wobbly/turn:1"], by["steady/turn:1"]
    assert wobbly["scores"] == [1.0, 0.5, 1.0]
    assert (wobbly["n_atoms"], wobbly["n_atoms_flipping"], wobbly["atoms_pinned"]) == (2, 1, True)
    assert wobbly["varies_at"] == "verification"
    assert (steady["scores"], steady["n_atoms_flipping"], steady["unanimous"]) == (
        [0.0, 0.0, 0.0],
        0,
        True,
    )
    assert (st["n_atoms"], st["n_atoms_flipping"]) == (3, 1)
    assert st["atom_flip_rate"] == pytest.approx(1 / 3)
    assert st["flip_rate"] == pytest.approx(0.5)
    assert st["units_pinned"] == 2 and st["n_atom_fleiss"] == 3
    assert st["stage_counts"] == {"decomposition": 0, "verification": 1}


def test_redecompose_splits_the_answers_anew_in_every_repeat(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    _script(fake_server)
    _stability(fake_server, tmp_path, "--redecompose")
    assert sum(r.schema_name == "Statements" for r in fake_server.requests) == 6


def test_the_table_shows_both_flip_rates(fake_server: FakeModelServer, tmp_path: Path) -> None:
    _script(fake_server)
    args = [
        "stability", str(_inputs(tmp_path)), "--repeats", "2", "--metric", "faithfulness",
        "--judge", "fake-model", "--base-url", fake_server.base_url, "--out", str(tmp_path / "t"),
    ]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert "atom flip rate 0.333 (1 of 3 atoms)" in text
    assert "score flip rate 0.500 (1 of 2 units)" in text


def test_units_skipped_in_every_repeat_are_named_with_their_reason(
    fake_server: FakeModelServer, tmp_path: Path
) -> None:
    """trial7 #20: a unit skipped in all repeats said only "not ok 3", and the headline's
    "1 of 2 units" of 4 did not say that 2 were skipped."""
    _script(fake_server)
    path = _inputs(tmp_path)
    extra = [
        {"id": "bare", "question": "Can I return it?", "contexts": [], "answer": ANSWER},
        {"id": "silent", "question": "Gift cards?", "contexts": [POLICY], "answer": ""},
    ]
    path.write_text(path.read_text() + "".join(json.dumps(r) + "\n" for r in extra))
    base = [
        "stability", str(path), "--repeats", "3", "--metric", "faithfulness",
        "--judge", "fake-model", "--base-url", fake_server.base_url,
    ]  # fmt: skip
    result = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "j"), "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    st = json.loads(result.stdout)["stability"]
    assert st["skipped_units"] == {"no_answer": 1, "no_context": 1}
    by = {c["conversation_id"]: c for c in st["conversations"]}
    assert by["bare/turn:1"]["not_ok_reasons"] == {"skipped: no_context": 3}
    assert by["silent/turn:1"]["not_ok_reasons"] == {"skipped: no_answer": 3}
    assert by["wobbly/turn:1"]["not_ok_reasons"] == {}
    assert st["stage_counts"] == {"decomposition": 0, "verification": 1}
    result = CliRunner().invoke(app, [*base, "--out", str(tmp_path / "t")], env=ENV)
    assert result.exit_code == 0, result.output
    text = " ".join(result.stdout.split())
    assert (
        "score flip rate 0.500 (1 of 2 units; 2 unit(s) skipped in every repeat "
        "(no_answer 1, no_context 1))" in text
    )
    assert "units with pinned atoms 2 of 2" in text
    assert "3 (skipped: no_context 3)" in text
