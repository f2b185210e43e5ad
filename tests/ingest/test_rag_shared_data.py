"""The human-labelled RAG data in ../shared/data reads as units with their labels attached."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

import pytest

from agent_eval.ingest._pipeline import detect_container, ingest
from agent_eval.metrics._units import answer_units


def _folder(shared_data: Path, name: str) -> Path:
    folder = shared_data / name
    if not folder.is_dir():
        pytest.skip(f"{folder} is absent")
    return folder


def test_expertqa_answers_with_expert_claim_labels(shared_data: Path) -> None:
    (path,) = _folder(shared_data, "expertqa").glob("*.jsonl")
    assert detect_container(str(path)).name == "expertqa"
    run = ingest(path)
    traces = run.collect()
    assert len(traces) == 60
    assert not run.report.skipped
    systems = Counter(str(t.metadata["system"]) for t in traces)
    assert set(systems.values()) == {15} and len(systems) == 4
    claims = [c for t in traces for c in t.labels["turns"]["1"]["claims"]]  # type: ignore[index,union-attr]
    assert len(claims) == 382
    labels = Counter(c["label"] for c in claims)  # type: ignore[index,call-overload]
    assert labels == {1: 216, 0: 165, None: 1}
    assert sum(not c["evidence"] for c in claims) == 70  # type: ignore[index,call-overload]
    unit = answer_units(traces[0])[0]
    assert unit.question == "What is the impact of domestic violence on children?"
    assert unit.answer.startswith("The impact of domestic violence on children is deep-seated")
    assert unit.contexts and all(c.id and c.id.startswith("[") for c in unit.contexts)
    assert unit.reference
    cited = {i for c in unit.labels["claims"] for i in c["evidence"]}  # type: ignore[union-attr,index]
    assert cited == {c.id for c in unit.contexts}


def test_begin_rows_with_attribution_labels(shared_data: Path) -> None:
    (path,) = _folder(shared_data, "begin").glob("*.tsv")
    assert detect_container(str(path)).name == "begin"
    traces = ingest(path).collect()
    assert len(traces) == 60
    units = [answer_units(t)[0] for t in traces]
    assert Counter(u.labels["attributable"] for u in units) == {1: 30, 0: 30}
    assert Counter(str(t.metadata["model_name"]) for t in traces) == {
        "t5": 15, "gpt2": 15, "ctrl": 15, "doha": 15,
    }  # fmt: skip
    first = units[0]
    assert first.contexts[0].text.startswith("The global presentation of cheerleading")
    assert first.question.startswith("that is incredible")
    assert first.answer.startswith("I thought it was too bizarre")


def test_faithdial_audit_rows_with_begin_labels(shared_data: Path) -> None:
    folder = _folder(shared_data, "faithdial-audit")
    paths = sorted(folder.glob("*.csv"))
    assert [detect_container(str(p)).name for p in paths] == ["faithdial-audit"] * 3
    traces = ingest(paths).collect()
    assert len(traces) == 60
    units = [answer_units(t)[0] for t in traces]
    assert Counter(u.labels["begin_label"] for u in units) == {
        "entailment": 15,
        "entailment,hallucination": 14,
        "hallucination": 20,
        "entailment,uncooperative": 6,
        "generic": 5,
    }
    assert Counter(u.labels.get("faithful") for u in units) == {1: 21, 0: 34, None: 5}
    assert Counter(str(t.metadata["model"]) for t in traces) == {"ctrl": 20, "doha": 20, "gpt2": 20}
    assert all(u.contexts[0].id == "knowledge" and u.answer for u in units)
