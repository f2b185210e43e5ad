"""Tool-call accuracy (``tool_call_accuracy@1``): did the agent make the reference's calls.

Judge-free. Each reference call is matched with at most one agent call of the same tool whose
arguments match (:class:`~agent_eval.metrics._arguments.ArgumentComparison`: ``args=exact``,
``subset`` or ``ignore``; ``strings=normalized``; ``rel_tol``). With ``order=strict`` the
matched pairs must keep the reference's order (the longest in-order matching, an LCS over the
match relation); otherwise the order is free (a maximum bipartite matching, scipy's
Hopcroft-Karp ``maximum_bipartite_matching``). With ``M`` matched pairs, ``R`` reference calls
and ``A`` agent calls: precision ``M/A``, recall ``M/R`` (each 1 when its denominator is 0),
F1 their harmonic mean (0 when both are 0).

The ``order`` parameter follows agentevals' ``trajectory_match_mode`` (agentevals names the
free order ``unordered``; it is accepted and written ``any``):

==========  ==========================================  ==========
order       the verdict is "1" when                     score
==========  ==========================================  ==========
strict      all calls match, in the reference's order   F1
any         all calls match, in any order               F1
subset      every agent call is in the reference         precision
superset    every reference call was made (extras ok)   recall
==========  ==========================================  ==========

The verdict is ``"1"`` exactly when the score is 1. Every reference call is an atom
(``match``, ``out_of_order``, ``argument_mismatch`` with the first differing JSON path, or
``missing``) and so is every unmatched agent call (``extra``); an atom passes when the mode
allows it. A conversation without a reference is skipped (``missing_reference``), never 0.
"""

from __future__ import annotations

from typing import ClassVar, Literal

import orjson
from pydantic import Field, JsonValue, field_validator

from agent_eval._result import Atom
from agent_eval._trace import ToolCall
from agent_eval.judges._base import Judge
from agent_eval.metrics._arguments import (
    ArgumentComparison,
    ArgumentMode,
    StringMode,
    call_text,
    calls_equal,
)
from agent_eval.metrics._base import CallTally, MetricInput, MetricOutcome, MetricParams
from agent_eval.metrics._tool_calls import JudgeFreeMetric, agent_calls

__all__ = [
    "MISSING_REFERENCE",
    "CallMatching",
    "ToolCallAccuracy",
    "ToolCallAccuracyParams",
    "match_calls",
    "reference_text",
]

Order = Literal["strict", "any", "subset", "superset"]

MISSING_REFERENCE = (
    "no reference tool calls for this conversation: the trace carries none (tau-bench "
    "actions, tau2-bench expected actions, the span attribute agent_eval.reference.tool_calls)"
    " and --tool-references FILE names none"
)


class ToolCallAccuracyParams(MetricParams):
    """Identity parameters of ``tool_call_accuracy@1``."""

    order: Order = "strict"
    args: ArgumentMode = "exact"
    strings: StringMode = "exact"
    rel_tol: float = Field(default=0.0, ge=0.0)

    @field_validator("order", mode="before")
    @classmethod
    def _agentevals_name(cls, value: object) -> object:
        return "any" if value == "unordered" else value


class CallMatching:
    """The matching of reference calls with agent calls, and its precision, recall and F1.

    Attributes:
        pairs: ``{reference index: agent index}`` of matched calls.
        precision / recall / f1: As in the module docstring.

    """

    def __init__(self, pairs: dict[int, int], n_reference: int, n_agent: int) -> None:
        self.pairs = pairs
        matched = len(pairs)
        self.precision = matched / n_agent if n_agent else 1.0
        self.recall = matched / n_reference if n_reference else 1.0
        total = self.precision + self.recall
        self.f1 = 2 * self.precision * self.recall / total if total else 0.0


def match_calls(
    reference: list[ToolCall],
    agent: list[ToolCall],
    comparison: ArgumentComparison,
    *,
    ordered: bool,
) -> CallMatching:
    """Match ``reference`` with ``agent`` calls (in order when ``ordered``), one to one."""
    if comparison.is_equivalence:
        matches = [[calls_equal(r, a) for a in agent] for r in reference]
    else:
        matches = [
            [r.name == a.name and comparison.call_difference(r, a) is None for a in agent]
            for r in reference
        ]
    if ordered:
        pairs = _in_order(matches)
    else:
        pairs = _any_order(matches, len(agent), exact=comparison.is_equivalence)
    return CallMatching(pairs, len(reference), len(agent))


def _in_order(matches: list[list[bool]]) -> dict[int, int]:
    """The longest order-preserving matching (LCS over the match relation), earliest first."""
    n = len(matches)
    m = len(matches[0]) if n else 0
    # best[i][j]: longest matching of reference[i:] with agent[j:]
    best = [[0] * (m + 1) for _ in range(n + 1)]
    for i in range(n - 1, -1, -1):
        row, below = best[i], best[i + 1]
        for j in range(m - 1, -1, -1):
            take = below[j + 1] + 1 if matches[i][j] else 0
            row[j] = max(take, below[j], row[j + 1])
    pairs: dict[int, int] = {}
    i = j = 0
    while i < n and j < m:
        if matches[i][j] and best[i][j] == best[i + 1][j + 1] + 1:
            pairs[i] = j
            i, j = i + 1, j + 1
        elif best[i + 1][j] >= best[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def _any_order(matches: list[list[bool]], n_agent: int, *, exact: bool) -> dict[int, int]:
    """A maximum one-to-one matching of reference and agent calls.

    Greedy first: it is maximum when the match relation is an equivalence (exact comparison),
    or when no unmatched reference call and unmatched agent call both have a match left (no
    augmenting path can exist). Otherwise Hopcroft-Karp (scipy's
    ``maximum_bipartite_matching``) decides.
    """
    pairs: dict[int, int] = {}
    taken: set[int] = set()
    for i, row in enumerate(matches):
        j = next((j for j, ok in enumerate(row) if ok and j not in taken), None)
        if j is not None:
            pairs[i] = j
            taken.add(j)
    if exact or len(pairs) in (len(matches), n_agent):
        return pairs
    loose_rows = any(any(row) for i, row in enumerate(matches) if i not in pairs)
    loose_cols = any(row[j] for row in matches for j in range(n_agent) if j not in taken)
    if not (loose_rows and loose_cols):
        return pairs
    import numpy as np
    from scipy.sparse import csr_matrix
    from scipy.sparse.csgraph import maximum_bipartite_matching

    graph = csr_matrix(np.array(matches, dtype=np.int8).reshape(len(matches), n_agent))
    agent_of = maximum_bipartite_matching(graph, perm_type="column")
    return {i: int(j) for i, j in enumerate(agent_of) if j >= 0}


def reference_text(calls: tuple[ToolCall, ...]) -> str:
    """The reference as stored on result rows: compact JSON ``[{"name", "arguments"}]``."""
    rows: list[JsonValue] = [
        {
            "name": c.name,
            "arguments": c.raw_arguments if c.raw_arguments is not None else c.arguments,
        }
        for c in calls
    ]
    return orjson.dumps(rows).decode()


class ToolCallAccuracy(JudgeFreeMetric):
    """``tool_call_accuracy@1[order=...,args=...,strings=...,rel_tol=...]``; see the module."""

    name: ClassVar[str] = "tool_call_accuracy"
    version: ClassVar[int] = 1
    Params = ToolCallAccuracyParams
    skip_messages: ClassVar[dict[str, str]] = {"missing_reference": MISSING_REFERENCE}

    def skip_reason(self, sample: MetricInput) -> str | None:
        """``missing_reference`` when the conversation has no reference calls."""
        if sample.trace is None or sample.trace.reference_tool_calls is None:
            return "missing_reference"
        return None

    @property
    def comparison(self) -> ArgumentComparison:
        """The argument comparison the parameters select."""
        p: ToolCallAccuracyParams = self.params  # type: ignore[assignment]
        return ArgumentComparison(mode=p.args, strings=p.strings, rel_tol=p.rel_tol)

    async def evaluate(
        self, sample: MetricInput, judge: Judge | None, tally: CallTally
    ) -> MetricOutcome:
        """Match the agent's calls with the reference's; see the module docstring."""
        assert sample.trace is not None and sample.trace.reference_tool_calls is not None
        order: Order = self.params.order  # type: ignore[attr-defined]
        reference = list(sample.trace.reference_tool_calls)
        agent = [c.call for c in agent_calls(sample.trace)]
        comparison = self.comparison
        matching = match_calls(reference, agent, comparison, ordered=order == "strict")
        score = {"subset": matching.precision, "superset": matching.recall}.get(order, matching.f1)
        atoms = _atoms(reference, agent, matching.pairs, comparison, order)
        extra = len(agent) - len(matching.pairs)
        reason = (
            f"{len(matching.pairs)} of {len(reference)} reference calls matched "
            f"({order} order); {extra} agent call(s) not in the reference"
        )
        return MetricOutcome(
            verdict="1" if score == 1.0 else "0",
            reason=reason,
            score=score,
            atoms=atoms,
            details={
                "reference": reference_text(sample.trace.reference_tool_calls),
                "precision": matching.precision,
                "recall": matching.recall,
                "f1": matching.f1,
                "matched": len(matching.pairs),
                "reference_calls": len(reference),
                "agent_calls": len(agent),
            },
        )


def _atoms(
    reference: list[ToolCall],
    agent: list[ToolCall],
    pairs: dict[int, int],
    comparison: ArgumentComparison,
    order: Order,
) -> tuple[Atom, ...]:
    """One atom per reference call, then one per agent call no reference atom accounts for."""
    used = set(pairs.values())
    free = [j for j in range(len(agent)) if j not in used]
    atoms: list[Atom] = []
    for i, call in enumerate(reference):
        if i in pairs:
            label, why = "match", f"agent call {pairs[i] + 1}"
        else:
            label, why, claimed = _unmatched(call, agent, free, comparison)
            if claimed is not None:  # made out of order: that agent call is explained here
                free.remove(claimed)
        atoms.append(
            Atom(
                text=call_text(call),
                label=label,
                passed=label == "match" or order == "subset",
                rationale=f"reference call {i + 1}: {why}",
            )
        )
    atoms.extend(
        Atom(
            text=call_text(agent[j]),
            label="extra",
            passed=order == "superset",
            rationale=f"agent call {j + 1} is not in the reference",
        )
        for j in free
    )
    return tuple(atoms)


def _unmatched(
    call: ToolCall, agent: list[ToolCall], free: list[int], comparison: ArgumentComparison
) -> tuple[str, str, int | None]:
    """Label and reason of an unmatched reference call, and the agent call it claims."""
    same_tool = [j for j in free if agent[j].name == call.name]
    for j in same_tool:
        if comparison.call_difference(call, agent[j]) is None:
            return "out_of_order", f"made as agent call {j + 1}, out of order", j
    if same_tool:
        j = same_tool[0]
        difference = comparison.call_difference(call, agent[j])
        return "argument_mismatch", f"agent call {j + 1} differs: {difference}", None
    return "missing", "the agent made no such call", None
