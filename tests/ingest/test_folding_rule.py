"""The folding rule as one function pair, shared by offline ingest and ``agent-eval serve``
(:func:`~agent_eval.ingest._folding.continues`, ``choose_continued``)."""

from __future__ import annotations

from agent_eval.ingest._folding import choose_continued, continues

SYSTEM, SYSTEM2 = ("system", "be brief"), ("system", "be brief; passages: x")
U1, A1, U2, A2 = ("user", "hi"), ("assistant", "hello"), ("user", "book"), ("assistant", "done")


def test_a_call_continues_only_a_transcript_it_strictly_extends() -> None:
    assert continues((SYSTEM, U1, A1, U2), (SYSTEM, U1, A1))
    assert not continues((SYSTEM, U1, A1), (SYSTEM, U1, A1))  # the same call made again
    assert not continues((SYSTEM, U1), (SYSTEM, U1, A1))
    assert not continues((SYSTEM, U2, A2, U1), (SYSTEM, U1))  # not replayed in place
    assert continues((SYSTEM2, U1, A1, U2), (SYSTEM, U1, A1))  # a system message may change


def test_the_longest_continued_call_wins_and_ties_go_in_time_order() -> None:
    held = [("run1", (SYSTEM, U1, A1, U2, A2)), ("run2", (SYSTEM, U1, A1))]
    # run 2's next turn: run 1's longer transcript is not a prefix of it, run 2's is
    assert choose_continued((SYSTEM, U1, A1, U2), held) == ("run2", [])
    # run 2's first turn again: continues nobody (identical to run 2's, shorter than run 1's)
    assert choose_continued((SYSTEM, U1, A1), held) == (None, [])
    twins = [("first", (SYSTEM, U1, A1)), ("second", (SYSTEM, U1, A1))]
    assert choose_continued((SYSTEM, U1, A1, U2), twins) == ("first", ["first", "second"])
    changed = [("other", (SYSTEM2, U1, A1)), ("same", (SYSTEM, U1, A1))]
    assert choose_continued((SYSTEM, U1, A1, U2), changed)[0] == "same"  # system kept first
