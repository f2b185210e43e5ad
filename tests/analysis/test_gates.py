"""Gates declared on counts."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_eval.analysis._gates import Gate, GateCount, evaluate_gates, load_gates, parse_gate
from agent_eval.errors import ConfigError


def _outcome(gate: Gate, successes: int, n: int) -> bool:
    (out,) = evaluate_gates(
        [gate], {gate.statistic: [GateCount(subject="s", successes=successes, n=n)]}
    )
    return out.passed


def test_point_eight_over_three_means_three_of_three() -> None:
    gate = Gate(name="acc", statistic="accuracy", threshold=0.8, items=3)
    assert gate.required == 3
    assert _outcome(gate, 3, 3)
    assert not _outcome(gate, 2, 3)  # 0.667 < 0.8


def test_required_count_is_not_fooled_by_float_error() -> None:
    assert Gate(name="g", statistic="accuracy", threshold=0.7, items=10).required == 7
    assert Gate(name="g", statistic="accuracy", threshold=0.8, items=5).required == 4
    assert Gate(name="g", statistic="accuracy", threshold=0.0, items=5).required == 0


def test_item_count_mismatch_fails_with_a_message_naming_the_gate() -> None:
    gate = Gate(name="ci-accuracy", statistic="accuracy", threshold=0.5, items=4)
    (out,) = evaluate_gates([gate], {"accuracy": [GateCount(subject="run", successes=3, n=3)]})
    assert not out.passed
    assert "gate 'ci-accuracy'" in out.message
    assert "declared over 4 items but measured over 3" in out.message


def test_inapplicable_gates_give_no_outcome() -> None:
    gate = Gate(name="a", statistic="agreement", threshold=0.9, items=2)
    assert evaluate_gates([gate], {"accuracy": [GateCount(subject="x", successes=1, n=1)]}) == []


def test_parse_flag() -> None:
    assert parse_gate("accuracy>=0.8/3") == Gate(
        name="accuracy", statistic="accuracy", threshold=0.8, items=3
    )
    assert parse_gate("ci=mean_score >= 0.5/10").name == "ci"
    with pytest.raises(ConfigError, match="STATISTIC>=THRESHOLD/ITEMS"):
        parse_gate("accuracy>0.8")
    with pytest.raises(ConfigError, match="statistic is one of"):
        parse_gate("precision>=0.8/3")
    with pytest.raises(ConfigError, match="threshold"):
        parse_gate("accuracy>=1.5/3")


def test_load_from_config(tmp_path: Path) -> None:
    cfg = tmp_path / "agent-eval.toml"
    cfg.write_text(
        '[score]\njudge = "x"\n\n[gates.human]\n'
        'statistic = "accuracy"\nthreshold = 0.8\nitems = 3\n'
    )
    assert load_gates(cfg) == [
        Gate(name="human", statistic="accuracy", threshold=0.8, items=3, source=str(cfg))
    ]
    bad = tmp_path / "bad.toml"
    bad.write_text('[gates.x]\nstatistic = "accuracy"\nthreshold = 0.8\n')
    with pytest.raises(ConfigError, match=r"bad\.toml: gate 'x' is invalid"):
        load_gates(bad)
    assert load_gates(tmp_path / "agent-eval.toml") != []
    (tmp_path / "none.toml").write_text("")
    assert load_gates(tmp_path / "none.toml") == []
