"""tool_call_accuracy@1 on hand-made cases of every order and argument mode."""

from __future__ import annotations

import itertools
import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from agent_eval._trace import ToolCall
from agent_eval.errors import ConfigError
from agent_eval.metrics._arguments import ArgumentComparison
from agent_eval.metrics._spec import build_metric
from agent_eval.metrics._tool_call_accuracy import match_calls

from .trajectory_cases import calls, conversation, score

REF = calls(("search", {"q": "Paris"}), ("book", {"id": 7, "seats": 2}))


def _labels(row: object) -> list[tuple[str, str, bool]]:
    return [(a.text, a.label, a.passed) for a in row.atoms]  # type: ignore[attr-defined]


def test_an_exact_trajectory_scores_one_in_every_order_mode() -> None:
    for order in ("strict", "any", "subset", "superset"):
        row = score(f"tool_call_accuracy[order={order}]", conversation(REF, REF))
        assert (row.status, row.verdict, row.score) == ("ok", "1", 1.0), order
        assert row.details["precision"] == row.details["recall"] == row.details["f1"] == 1.0
        assert [a.label for a in row.atoms or ()] == ["match", "match"]
    assert row.judge_model == "none" and row.formatter == "none"
    assert json.loads(row.reference or "") == [
        {"name": "search", "arguments": {"q": "Paris"}},
        {"name": "book", "arguments": {"id": 7, "seats": 2}},
    ]


def test_strict_order_counts_the_longest_in_order_matching() -> None:
    swapped = (REF[1], REF[0])
    strict = score("tool_call_accuracy", conversation(swapped, REF))
    # one of the two calls can keep its place: precision = recall = F1 = 1/2
    assert (strict.verdict, strict.score) == ("0", 0.5)
    assert sorted(a.label for a in strict.atoms or ()) == ["match", "out_of_order"]
    free = score("tool_call_accuracy[order=any]", conversation(swapped, REF))
    assert (free.verdict, free.score) == ("1", 1.0)


def test_precision_recall_and_f1_with_a_missing_and_an_extra_call() -> None:
    made = calls(("search", {"q": "Paris"}), ("weather", {"city": "Paris"}))
    row = score("tool_call_accuracy[order=any]", conversation(made, REF))
    assert row.details["precision"] == 0.5 and row.details["recall"] == 0.5
    assert row.score == pytest.approx(0.5) and row.verdict == "0"
    assert _labels(row) == [
        ('search({"q":"Paris"})', "match", True),
        ('book({"id":7,"seats":2})', "missing", False),
        ('weather({"city":"Paris"})', "extra", False),
    ]
    subset = score("tool_call_accuracy[order=subset]", conversation(made, REF))
    assert subset.score == 0.5  # precision: half the agent's calls are in the reference
    superset = score("tool_call_accuracy[order=superset]", conversation(made, REF))
    assert superset.score == 0.5  # recall: half the reference calls were made
    extras_allowed = score("tool_call_accuracy[order=superset]", conversation((*REF, made[1]), REF))
    assert (extras_allowed.verdict, extras_allowed.score) == ("1", 1.0)
    assert [a.passed for a in extras_allowed.atoms or ()] == [True, True, True]
    fewer = score("tool_call_accuracy[order=subset]", conversation(REF[:1], REF))
    assert (fewer.verdict, fewer.score) == ("1", 1.0)
    assert [(a.label, a.passed) for a in fewer.atoms or ()] == [
        ("match", True),
        ("missing", True),
    ]


def test_argument_mismatch_names_the_differing_path() -> None:
    made = calls(("search", {"q": "Paris"}), ("book", {"id": 7, "seats": 3}))
    row = score("tool_call_accuracy", conversation(made, REF))
    atom = (row.atoms or ())[1]
    assert atom.label == "argument_mismatch"
    assert atom.rationale == "reference call 2: agent call 2 differs: $.seats: expected 2, got 3"
    assert row.score == pytest.approx(0.5)


def test_argument_modes_are_identity_parameters() -> None:
    made = calls(("search", {"q": " paris ", "lang": "fr"}), ("book", {"id": 7.0, "seats": 2}))
    exact = score("tool_call_accuracy", conversation(made, REF))
    assert exact.score == 0.5  # book matches (7 == 7.0); search differs
    subset = score("tool_call_accuracy[args=subset]", conversation(made, REF))
    assert subset.score == 0.5  # lang is ignored, but " paris " is not "Paris"
    loose = score("tool_call_accuracy[args=subset,strings=normalized]", conversation(made, REF))
    assert (loose.metric, loose.score) == (
        "tool_call_accuracy@1[args=subset,strings=normalized]",
        1.0,
    )
    names = score("tool_call_accuracy[args=ignore]", conversation(made, REF))
    assert names.score == 1.0
    near = calls(("search", {"q": "Paris"}), ("book", {"id": 7, "seats": 2.001}))
    assert score("tool_call_accuracy", conversation(near, REF)).score == 0.5
    assert score("tool_call_accuracy[rel_tol=0.01]", conversation(near, REF)).score == 1.0


def test_agentevals_unordered_is_written_any() -> None:
    assert build_metric("tool_call_accuracy[order=unordered]").id == (
        "tool_call_accuracy@1[order=any]"
    )
    with pytest.raises(ConfigError):
        build_metric("tool_call_accuracy[order=sideways]")
    with pytest.raises(ConfigError):
        build_metric("tool_call_accuracy[rel_tol=-1]")


def test_any_order_finds_a_maximum_matching_where_greedy_would_not() -> None:
    # under args=subset, reference {} matches both agent calls, {"x": 1} only the first:
    # pairing the first reference call greedily with the first agent call would leave one out
    reference = calls(("t", {}), ("t", {"x": 1}))
    made = calls(("t", {"x": 1}), ("t", {"y": 2}))
    row = score("tool_call_accuracy[order=any,args=subset]", conversation(made, reference))
    assert (row.verdict, row.details["matched"]) == ("1", 2)
    comparison = ArgumentComparison(mode="subset")
    matching = match_calls(list(reference), list(made), comparison, ordered=False)
    assert matching.pairs == {0: 1, 1: 0}


def test_duplicate_calls_are_matched_one_to_one() -> None:
    twice = calls(("get", {"id": 1}), ("get", {"id": 1}))
    once = twice[:1]
    row = score("tool_call_accuracy[order=any]", conversation(once, twice))
    assert row.details["recall"] == 0.5 and row.details["precision"] == 1.0
    assert [a.label for a in row.atoms or ()] == ["match", "missing"]


def test_an_empty_reference_means_no_call_is_expected() -> None:
    nothing = score("tool_call_accuracy", conversation((), ()))
    assert (nothing.verdict, nothing.score, nothing.atoms) == ("1", 1.0, ())
    extra = score("tool_call_accuracy", conversation(REF[:1], ()))
    assert (extra.verdict, extra.score) == ("0", 0.0)
    assert extra.details["recall"] == 1.0 and extra.details["precision"] == 0.0
    none_made = score("tool_call_accuracy", conversation((), REF))
    assert (none_made.verdict, none_made.score) == ("0", 0.0)


def test_no_reference_is_skipped_never_zero() -> None:
    row = score("tool_call_accuracy", conversation(REF, None))
    assert (row.status, row.error_type, row.score) == ("skipped", "missing_reference", None)
    assert "--tool-references" in (row.error_message or "")


_ARGS = [{}, {"x": 1}, {"y": 2}, {"x": 1, "y": 2}, {"x": 1.0}, {"x": True}]


@settings(max_examples=80, deadline=None)
@given(
    st.lists(st.sampled_from(range(len(_ARGS))), max_size=5),
    st.lists(st.sampled_from(range(len(_ARGS))), max_size=5),
    st.sampled_from(["exact", "subset"]),
)
def test_any_order_matching_is_maximum(reference: list[int], made: list[int], mode: str) -> None:
    """Against brute force over every one-to-one assignment of the small lists."""
    ref = [ToolCall(name="t", arguments=_ARGS[i]) for i in reference]
    agent = [ToolCall(name="t", arguments=_ARGS[i]) for i in made]
    comparison = ArgumentComparison(mode=mode)  # type: ignore[arg-type]
    ok = [[comparison.call_difference(r, a) is None for a in agent] for r in ref]
    best = 0
    slots = list(range(len(agent))) + [None] * len(ref)
    for chosen in itertools.permutations(slots, len(ref)):
        best = max(best, sum(j is not None and ok[i][j] for i, j in enumerate(chosen)))
    pairs = match_calls(ref, agent, comparison, ordered=False).pairs
    assert len(pairs) == best
    assert len(set(pairs.values())) == len(pairs) and all(ok[i][j] for i, j in pairs.items())
