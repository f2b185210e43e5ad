"""Arguments compared as JSON values: exact, subset, ignore; string and number normalisers."""

from __future__ import annotations

from typing import Any

import pytest

from agent_eval._trace import ToolCall
from agent_eval.metrics._arguments import ArgumentComparison, call_text, calls_equal, json_equal

EXACT = ArgumentComparison()
SUBSET = ArgumentComparison(mode="subset")


@pytest.mark.parametrize(
    ("expected", "actual"),
    [
        ({"n": 1}, {"n": 1.0}),  # numbers as numbers
        ({"a": {"b": [1, 2, {"c": None}]}}, {"a": {"b": [1, 2, {"c": None}]}}),
        ({"xs": [1, 1, 2]}, {"xs": [1, 1, 2]}),
        ({"tags": [{"k": 1}, {"k": 1}]}, {"tags": [{"k": 1}, {"k": 1}]}),  # unhashable items
        ([], []),
        ("x", "x"),
        (None, None),
    ],
)
def test_exact_matches_equal_json_values(expected: Any, actual: Any) -> None:
    assert EXACT.difference(expected, actual) is None


@pytest.mark.parametrize(
    ("expected", "actual", "why"),
    [
        ({"n": 1}, {"n": True}, "$.n: expected 1, got true"),  # a boolean is not a number
        ({"ok": True}, {"ok": 1}, "$.ok: expected true, got 1"),
        ({"xs": [1, 1, 2]}, {"xs": [1, 2]}, "$.xs: expected 3 items, got 2"),  # duplicates kept
        ({"xs": [1, 2]}, {"xs": [2, 1]}, "$.xs[0]: expected 1, got 2"),  # arrays keep order
        ({"a": {"b": "x"}}, {"a": {"b": "y"}}, '$.a.b: expected "x", got "y"'),
        ({"a": 1}, {"a": 1, "b": 2}, "$.b: not in the reference"),
        ({"a": 1, "b": 2}, {"a": 1}, "$.b: missing"),
        ({"a": [1]}, {"a": {"0": 1}}, "$.a: expected an array, got an object"),
        ({"a": None}, {"a": 0}, "$.a: expected null, got 0"),
        ({"s": "Paris"}, {"s": "paris"}, '$.s: expected "Paris", got "paris"'),
    ],
)
def test_exact_names_the_first_difference(expected: Any, actual: Any, why: str) -> None:
    assert EXACT.difference(expected, actual) == why


def test_subset_compares_only_the_reference_keys_at_every_depth() -> None:
    reference = {"id": "A1", "passenger": {"name": "Ann"}}
    agent = {"id": "A1", "note": "extra", "passenger": {"name": "Ann", "dob": "1990-01-01"}}
    assert SUBSET.difference(reference, agent) is None
    # the reference's keys are compared first (depth first), then the keys it lacks
    assert EXACT.difference(reference, agent) == "$.passenger.dob: not in the reference"
    assert SUBSET.difference({"id": "A1", "x": 1}, {"id": "A1"}) == "$.x: missing"
    # arrays stay exact under subset: same length, same order
    assert SUBSET.difference({"xs": [1]}, {"xs": [1, 2]}) == "$.xs: expected 1 items, got 2"


def test_string_normaliser_folds_case_unicode_and_whitespace() -> None:
    loose = ArgumentComparison(strings="normalized")
    assert loose.difference({"city": "  São   PAULO "}, {"city": "são paulo"}) is None
    assert loose.difference("ﬁle", "FILE") is None  # NFKC ligature, then case folding
    assert loose.difference({"city": "Rome"}, {"city": "Roma"}) is not None
    assert loose.difference({"n": "1"}, {"n": 1}) is not None  # a string is not a number


def test_number_tolerance_is_relative() -> None:
    near = ArgumentComparison(rel_tol=1e-3)
    assert near.difference({"amount": 100.0}, {"amount": 100.05}) is None
    assert near.difference({"amount": 100.0}, {"amount": 100.5}) == (
        "$.amount: expected 100.0, got 100.5"
    )
    assert EXACT.difference(100.0, 100.05) is not None
    assert near.difference(True, 1) is not None


def test_call_difference_checks_the_name_then_the_arguments() -> None:
    a = ToolCall(name="book", arguments={"id": 1})
    assert EXACT.call_difference(a, ToolCall(name="cancel", arguments={"id": 1})) == (
        "tool 'cancel' is not 'book'"
    )
    ignore = ArgumentComparison(mode="ignore")
    assert ignore.call_difference(a, ToolCall(name="book", arguments={"id": 2})) is None
    raw = ToolCall(name="book", raw_arguments="{id: 1")
    assert EXACT.call_difference(a, raw) == "arguments did not parse as JSON"
    assert EXACT.call_difference(raw, raw) is None


def test_json_equal_is_the_exact_comparison_as_a_predicate() -> None:
    assert json_equal({"a": [1, {"b": 2}]}, {"a": [1.0, {"b": 2}]})
    assert not json_equal({"a": True}, {"a": 1})
    assert not json_equal([1, {"k": False}], [1, {"k": 0}])  # nested bool/number mixup
    assert not json_equal([1, 1], [1])
    assert json_equal({"a": 1, "b": 2}, {"b": 2, "a": 1})
    first = ToolCall(name="t", arguments={"q": [{"x": 1}]})
    assert calls_equal(first, ToolCall(name="t", arguments={"q": [{"x": 1.0}]}))
    assert not calls_equal(first, ToolCall(name="u", arguments={"q": [{"x": 1}]}))
    raw = ToolCall(name="t", raw_arguments="{x")
    assert calls_equal(raw, raw) and not calls_equal(raw, first)
    # the predicate agrees with the exact comparison's difference
    for a, b in [({"n": 1}, {"n": True}), ({"n": 1}, {"n": 1.0}), ([{"a": 1}], [{"a": 1, "b": 2}])]:
        assert json_equal(a, b) == (EXACT.difference(a, b) is None)


def test_call_text_is_one_line_of_compact_sorted_json() -> None:
    assert call_text(ToolCall(name="t", arguments={"b": 1, "a": "x"})) == 't({"a":"x","b":1})'
    assert call_text(ToolCall(name="t", raw_arguments="oops")) == "t(oops)"
    assert call_text(ToolCall(name="t")) == "t()"
    assert len(call_text(ToolCall(name="t", arguments={"s": "x" * 500}), limit=50)) == 50
