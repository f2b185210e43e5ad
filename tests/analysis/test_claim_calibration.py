"""Calibrate claim-level metrics: binary, ordinal (Spearman, Kendall) and claim-matched labels.

The shared-data tests score real human-labelled answers (BEGIN, FaithDial audit, ExpertQA)
through the fake server with a scripted judge (word overlap with the context), then check that
``calibrate`` reports exactly the statistics computed independently from the rows and labels.
"""

from __future__ import annotations

import json
import math
import re
from pathlib import Path

import pytest
from scipy import stats
from typer.testing import CliRunner

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.analysis._claim_calibration import match_claims
from agent_eval.analysis._ordinal import calibrate_ordinal, fisher_interval
from agent_eval.cli._app import app
from agent_eval.ingest._pipeline import ingest
from agent_eval.metrics._units import answer_units
from agent_eval.run._store import ResultStore, load_results
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured
from agent_eval.testing._claims import first_user_text, numbered_items

from .conftest import MakeResult

ENV = {"OPENAI_API_KEY": "sk-test-not-a-real-key", "COLUMNS": "200"}
_WORD = re.compile(r"[a-z0-9]{4,}")


def kappa_by_formula(a: list[int], b: list[int]) -> float:
    """Cohen's kappa, (p_o - p_e) / (1 - p_e), computed by hand as the test's oracle."""
    n = len(a)
    observed = sum(x == y for x, y in zip(a, b, strict=True)) / n
    expected = sum((a.count(k) / n) * (b.count(k) / n) for k in (0, 1))
    return (observed - expected) / (1 - expected)


def _words(text: str) -> set[str]:
    return set(_WORD.findall(text.lower()))


def _supported(statement: str, context: str) -> bool:
    words = _words(statement)
    return not words or len(words & _words(context)) / len(words) >= 0.8


def overlap_judge(server: FakeModelServer, claims: dict[str, list[str]] | None = None) -> None:
    """A scripted judge: sentences as statements (or given claims); supported by word overlap."""

    def decompose(request: RecordedRequest) -> Structured:
        answer = first_user_text(request).rpartition("\nAnswer: ")[2].strip()
        atoms = (claims or {}).get(answer)
        if atoms is None:
            atoms = [s for s in re.split(r"(?<=[.!?])\s+", answer) if _words(s)]
        return Structured({"statements": atoms})

    def verify(request: RecordedRequest) -> Structured:
        text = first_user_text(request)
        context = text.rpartition("\nContext:\n")[2].partition("\n\nStatements:\n")[0]
        verdicts = [
            {"statement": s, "reason": "overlap", "verdict": "1" if _supported(s, context) else "0"}
            for s in numbered_items(text, "Statements:")
        ]
        return Structured({"verdicts": verdicts})

    server.add_rule(decompose, schema="Statements")
    server.add_rule(verify, schema="StatementVerdicts")


def _score(server: FakeModelServer, inputs: list[Path], out: Path) -> None:
    args = ["score", *map(str, inputs), "--metric", "faithfulness@1", "--judge", "fake-model",
            "--base-url", server.base_url, "--out", str(out), "--concurrency", "8"]  # fmt: skip
    result = CliRunner().invoke(app, args, env=ENV)
    assert result.exit_code == 0, result.output


def _calibrate(*args: str) -> dict:
    result = CliRunner().invoke(app, ["calibrate", *args, "--json"], env=ENV)
    assert result.exit_code == 0, result.output
    out: dict = json.loads(result.stdout)
    return out


def _folder(shared_data: Path, name: str) -> Path:
    if not (shared_data / name).is_dir():
        pytest.skip(f"{shared_data / name} is absent")
    return shared_data / name


# -- the statistics themselves -------------------------------------------------------------


def test_ordinal_agreement_is_scipys_with_fisher_intervals() -> None:
    scores = {f"u{i}": s for i, s in enumerate([0.0, 0.2, 0.5, 0.5, 0.9, 1.0, 1.0, 0.3])}
    ratings = {f"u{i}": r for i, r in enumerate([1, 1, 2, 3, 3, 4, 4, 2])} | {"extra": 2}
    cal = calibrate_ordinal(scores, ratings)
    x = [scores[f"u{i}"] for i in range(8)]
    y = [ratings[f"u{i}"] for i in range(8)]
    assert cal.n == 8 and cal.unpredicted == ["extra"]
    assert cal.spearman == pytest.approx(stats.spearmanr(x, y).statistic)
    assert cal.kendall == pytest.approx(stats.kendalltau(x, y).statistic)
    rho = stats.spearmanr(x, y).statistic
    se = 1.06 / math.sqrt(8 - 3)
    assert cal.spearman_ci_low == pytest.approx(math.tanh(math.atanh(rho) - 1.959964 * se))
    assert cal.spearman_ci_high == pytest.approx(math.tanh(math.atanh(rho) + 1.959964 * se))
    assert cal.kendall_ci_low is not None and cal.kendall_ci_low < cal.kendall < 1  # type: ignore[operator]
    assert cal.ratings == {"1": 2, "2": 2, "3": 2, "4": 2}


def test_ordinal_agreement_is_undefined_not_invented_on_tiny_or_constant_data() -> None:
    assert (
        calibrate_ordinal({"a": 1.0, "b": 1.0, "c": 1.0}, {"a": 1, "b": 2, "c": 3}).spearman is None
    )
    tiny = calibrate_ordinal({"a": 0.0, "b": 1.0}, {"a": 1, "b": 2})
    assert tiny.spearman is None and tiny.kendall_ci_low is None
    assert fisher_interval(1.0, 50, "spearman") == (None, None)
    assert fisher_interval(0.5, 4, "kendall") == (None, None)


def test_claims_match_one_to_one_by_similarity_above_the_threshold() -> None:
    claims = ["Returns are free [2].", "You can return it within 14 days [1].", "Unrelated."]
    atoms = ["You can return the product within 14 days.", "Return shipping is free.", "Z."]
    pairs = match_claims(claims, atoms)
    assert {(i, j) for i, j, _ in pairs} == {(1, 0), (0, 1)}
    assert all(0.6 <= s <= 1 for *_, s in pairs)
    assert match_claims(claims, atoms, min_similarity=0.99) == []


# -- on the shared human-labelled data -----------------------------------------------------


def test_binary_calibration_against_begin_attribution_labels(
    fake_server: FakeModelServer, shared_data: Path, tmp_path: Path
) -> None:
    (path,) = _folder(shared_data, "begin").glob("*.tsv")
    overlap_judge(fake_server)
    _score(fake_server, [path], tmp_path / "run")
    cal = _calibrate(str(tmp_path / "run"), "--inputs", str(path), "--label-field", "attributable")
    rows = [r for r in load_results(tmp_path / "run") if r.status == "ok"]
    labels = {
        f"{t.conversation_id}/turn:1": answer_units(t)[0].labels["attributable"]
        for t in ingest(path)
    }
    truth = [labels[r.subject] for r in rows]
    predicted = [int(r.score == 1.0) for r in rows]
    assert cal["n"] == len(rows) > 50
    assert cal["kappa"] == pytest.approx(kappa_by_formula(truth, predicted))
    assert cal["n_agree"] == sum(t == p for t, p in zip(truth, predicted, strict=True))


def test_ordinal_calibration_against_faithdial_audit_labels(
    fake_server: FakeModelServer, shared_data: Path, tmp_path: Path
) -> None:
    paths = sorted(_folder(shared_data, "faithdial-audit").glob("*.csv"))
    overlap_judge(fake_server)
    _score(fake_server, paths, tmp_path / "run")
    order = {"hallucination": 1, "entailment,hallucination": 2, "entailment": 3}
    ratings = {}
    for trace in ingest(paths):
        label = answer_units(trace)[0].labels["begin_label"]
        if label in order:
            ratings[trace.conversation_id] = order[str(label)]
    file = tmp_path / "ratings.jsonl"
    file.write_text(
        "".join(
            json.dumps({"conversation_id": c, "unit_id": "turn:1", "rating": r}) + "\n"
            for c, r in ratings.items()
        )
    )
    cal = _calibrate(str(tmp_path / "run"), "--kind", "ordinal", "--labels", str(file))
    rows = {r.conversation_id: r.score for r in load_results(tmp_path / "run") if r.status == "ok"}
    common = sorted(set(rows) & set(ratings))
    assert cal["n"] == len(common) > 40
    x, y = [rows[c] for c in common], [ratings[c] for c in common]
    assert cal["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert cal["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)
    assert cal["spearman_ci_low"] < cal["spearman"] < cal["spearman_ci_high"]


def test_claim_level_calibration_against_expertqa_expert_labels(
    fake_server: FakeModelServer, shared_data: Path, tmp_path: Path
) -> None:
    (path,) = _folder(shared_data, "expertqa").glob("*.jsonl")
    subset = tmp_path / "expertqa.jsonl"
    subset.write_text("".join(path.read_text().splitlines(keepends=True)[:8]))
    traces = ingest(subset).collect()
    # the scripted judge splits answers into the experts' own claims, citations dropped
    claims = {
        answer_units(t)[0].answer: [
            re.sub(r"\s*\[\d+\]", "", c["text"])  # type: ignore[index,call-overload]
            for c in answer_units(t)[0].labels["claims"]  # type: ignore[union-attr]
        ]
        for t in traces
    }
    overlap_judge(fake_server, claims)
    _score(fake_server, [subset], tmp_path / "run")
    cal = _calibrate(str(tmp_path / "run"), "--kind", "claims", "--inputs", str(subset))
    labelled = [
        c
        for t in traces
        for c in answer_units(t)[0].labels["claims"]  # type: ignore[union-attr]
        if c["label"] in (0, 1)  # type: ignore[index,call-overload]
    ]
    assert cal["n_units"] == 8 and cal["n_labelled"] == len(labelled)
    assert cal["n_matched"] == len(labelled)  # every expert claim found its atom
    assert cal["mean_similarity"] > 0.9
    assert cal["binary"]["n"] == len(labelled)
    table = CliRunner().invoke(
        app, ["calibrate", str(tmp_path / "run"), "--kind", "claims", "--inputs", str(subset)],
        env=ENV,
    )  # fmt: skip
    assert "Claim matching" in table.stdout and "Cohen's kappa" in table.stdout


def test_ordinal_and_claims_need_their_labels(tmp_path: Path) -> None:
    run = tmp_path / "run"
    run.mkdir()
    result = CliRunner().invoke(app, ["calibrate", str(run), "--kind", "ordinal"], env=ENV)
    assert result.exit_code == 2 and "--kind ordinal needs ratings" in result.stderr
    result = CliRunner().invoke(app, ["calibrate", str(run), "--kind", "claims"], env=ENV)
    assert result.exit_code == 2 and "--inputs" in result.stderr
    result = CliRunner().invoke(app, ["calibrate", str(run), "--kind", "nope"], env=ENV)
    assert result.exit_code == 2 and "binary, ordinal or claims" in result.stderr


def _rated_run(tmp_path: Path, make_result: MakeResult) -> tuple[Path, Path, dict[str, float]]:
    """A faithfulness run over 5 turns and the traces carrying MTRAG-style nested ratings
    (``labels.turns.K.human_ratings.faithfulness``, as mtrag-human-eval is read)."""
    scores = {"c1": 0.2, "c2": 0.9, "c3": 0.5, "c4": 1.0, "c5": 0.1}
    human = {"c1": 2.0, "c2": 4.0, "c3": 2.0, "c4": 3.0, "c5": 1.0}
    run = tmp_path / "run"
    with ResultStore(run) as store:
        for cid, score in scores.items():
            verdict = "1" if score == 1.0 else "0"
            store.add(
                make_result(cid, verdict, unit_id="turn:1", score=score, metric="faithfulness@1")
            )
    inputs = tmp_path / "traces.jsonl"
    traces = [
        AgentTrace(
            conversation_id=cid,
            messages=(UserMessage(content="q"), AssistantMessage(content="a")),
            labels={
                "reference": "r",
                "turns": {"1": {"answerability": "ANSWERABLE", "human_ratings": {
                    "faithfulness": rating, "completeness": 3}}},
            },
        )
        for cid, rating in human.items()
    ]  # fmt: skip
    inputs.write_text("".join(t.model_dump_json() + "\n" for t in traces))
    return run, inputs, {f"{c}/turn:1": s for c, s in scores.items()}


def test_ordinal_ratings_nested_in_trace_labels_by_dotted_path(
    tmp_path: Path, make_result: MakeResult
) -> None:
    """trial7 #3: the ratings of mtrag-human-eval live at ``human_ratings.faithfulness`` of each
    turn's labels; ``--label-field`` with that dotted path reads them."""
    run, inputs, scores = _rated_run(tmp_path, make_result)
    cal = _calibrate(str(run), "--kind", "ordinal", "--inputs", str(inputs),
                     "--label-field", "human_ratings.faithfulness")  # fmt: skip
    x = [scores[f"c{i}/turn:1"] for i in range(1, 6)]
    y = [2.0, 4.0, 2.0, 3.0, 1.0]
    assert cal["n"] == 5
    assert cal["spearman"] == pytest.approx(stats.spearmanr(x, y).statistic)
    assert cal["kendall"] == pytest.approx(stats.kendalltau(x, y).statistic)


def test_a_label_no_trace_carries_is_named_with_the_labels_found(
    tmp_path: Path, make_result: MakeResult
) -> None:
    run, inputs, _ = _rated_run(tmp_path, make_result)
    result = CliRunner().invoke(
        app, ["calibrate", str(run), "--kind", "ordinal", "--inputs", str(inputs),
              "--label-field", "faithfulness"], env=ENV,
    )  # fmt: skip
    message = " ".join(result.stderr.split())
    assert result.exit_code == 3, result.output
    assert (
        "no trace of --inputs carries label 'faithfulness' (labels found: reference, "
        "answerability, human_ratings, human_ratings.faithfulness, human_ratings.completeness)"
    ) in message
    assert "rating ids:" not in message
    # the binary kind says the same, not "carry no labels"
    result = CliRunner().invoke(
        app, ["calibrate", str(run), "--inputs", str(inputs), "--label-field", "faithful"],
        env=ENV,
    )  # fmt: skip
    assert result.exit_code == 2, result.output
    assert "no trace of --inputs carries label 'faithful'" in " ".join(result.stderr.split())
