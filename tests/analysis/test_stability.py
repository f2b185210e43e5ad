"""Judge stability across repeats."""

from __future__ import annotations

import pytest
from statsmodels.stats.inter_rater import fleiss_kappa

from agent_eval.analysis._stability import measure_stability

from .conftest import MakeResult


def test_counts_majority_flip_rate_and_stages(make_result: MakeResult) -> None:
    rows = []
    # c0: unanimous pass; c1: flips with the same goal (stage 2); c2: flips, goal differs (stage 1)
    for k, v in enumerate("111"):
        rows.append(make_result("c0", v, repeat=k, user_goal="g", end_state="e"))
    for k, v in enumerate("110"):
        rows.append(make_result("c1", v, repeat=k, user_goal="book  a flight", end_state="done"))
    for k, v in enumerate("100"):
        rows.append(make_result("c2", v, repeat=k, user_goal=f"goal {k}", end_state="e"))
    # c3: one repeat errored, the two ok ones agree
    rows += [make_result("c3", "0", repeat=0), make_result("c3", None, repeat=1)]
    rows.append(make_result("c3", "0", repeat=2))
    st = measure_stability(rows)
    by = {c.conversation_id: c for c in st.conversations}
    assert (by["c0"].n_pass, by["c0"].majority, by["c0"].unanimous) == (3, "1", True)
    assert by["c0"].varies_at is None
    assert by["c1"].varies_at == "comparison" and by["c1"].majority == "1"
    assert by["c2"].varies_at == "goal_inference" and by["c2"].majority == "0"
    assert by["c3"].n_not_ok == 1 and by["c3"].unanimous
    assert st.repeats == 3
    assert st.n_conversations == 4 and st.n_flipping == 2
    assert st.flip_rate == pytest.approx(0.5)
    assert st.stage_counts == {"goal_inference": 1, "comparison": 1}
    assert st.n_fleiss == 3  # c3 lacks a third ok repeat
    expected = fleiss_kappa([[0, 3], [1, 2], [2, 1]], method="fleiss")
    assert st.fleiss_kappa == pytest.approx(expected)


def test_whitespace_only_goal_change_is_not_stage_one(make_result: MakeResult) -> None:
    rows = [
        make_result("c", "1", repeat=0, user_goal="a  b", end_state="x"),
        make_result("c", "0", repeat=1, user_goal="a b\n", end_state=" x"),
    ]
    (conv,) = measure_stability(rows).conversations
    assert conv.varies_at == "comparison"
    assert conv.majority is None  # a tie


def test_all_identical_has_undefined_fleiss(make_result: MakeResult) -> None:
    rows = [make_result(f"c{i}", "1", repeat=k) for i in range(3) for k in range(2)]
    st = measure_stability(rows)
    assert st.flip_rate == 0.0
    assert st.fleiss_kappa is None
