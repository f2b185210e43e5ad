"""Judge stability across repeats: whether the judge agrees with itself.

The same conversation is judged K times with the same formatter, prompts and judge, the cache
bypassed (result rows with ``repeat`` 0..K-1). Per conversation: the verdict counts, the
majority (``None`` on a tie), whether the verdicts are unanimous, and the stage where the
variation starts:

- ``goal_inference`` (stage 1): the inferred ``user_goal``/``end_state`` differ across repeats
  (compared after collapsing whitespace);
- ``comparison`` (stage 2): the same inferred goal and end state, yet different verdicts.

Overall: the flip rate (share of conversations with at least two ``ok`` repeats whose verdicts
are not unanimous) and Fleiss' kappa across repeats (:func:`fleiss_kappa`; Fleiss 1971),
computed on the conversations with all K repeats ``ok``, since the statistic assumes an equal
number of ratings per subject.

Metrics scored from atoms (``faithfulness@1``, ``groundedness@1``: rows without a binary
verdict) are measured per unit *and per atom*. A unit flips when its score differs across
repeats; it varies at ``decomposition`` when its repeats judged different atom lists, else at
``verification``. An atom (matched across repeats by its exact text, which pinned
decompositions keep identical) flips when its label differs across the repeats that judged it;
the atom flip rate is over the atoms judged in at least two ``ok`` repeats, and Fleiss' kappa
over atoms uses those judged in all K, with their labels as the categories.
"""

from __future__ import annotations

import math
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict

from agent_eval._result import MetricResult
from agent_eval.analysis._selection import group_by

__all__ = [
    "ConversationStability",
    "Stability",
    "VariationStage",
    "fleiss_kappa",
    "measure_stability",
]

VariationStage = Literal["goal_inference", "comparison", "decomposition", "verification"]
"""Where the verdicts of a conversation first vary across repeats (its ``varies_at``)."""


class ConversationStability(BaseModel):
    """One conversation over its repeats.

    Attributes:
        n_pass / n_fail: ``ok`` repeats with verdict 1 / 0.
        n_not_ok: Repeats that errored or were skipped.
        majority: ``"1"``/``"0"``, or ``None`` on a tie or with no ``ok`` repeat.
        unanimous: Every ``ok`` repeat gave the same verdict.
        goal_varies: The stage-1 outputs (user goal, end state) differ across ``ok`` repeats.
        varies_at: Where a verdict flip starts; ``None`` when the verdicts are unanimous.
        scores: The ``ok`` repeats' scores, in repeat order (atom metrics; ``None`` otherwise).
        n_atoms / n_atoms_flipping: Atoms judged in at least two ``ok`` repeats, and those
            whose label differs (atom metrics; ``None`` otherwise).
        atoms_pinned: Every ``ok`` repeat judged the same atom list (atom metrics).
        not_ok_reasons: The repeats that were not ``ok`` by status and reason
            (``"skipped: no_context"``, ``"error: judge_unavailable"``), with their counts.

    """

    model_config = ConfigDict(frozen=True)

    conversation_id: str
    n_pass: int
    n_fail: int
    n_not_ok: int
    majority: Literal["0", "1"] | None
    unanimous: bool
    goal_varies: bool
    varies_at: VariationStage | None
    scores: list[float] | None = None
    n_atoms: int | None = None
    n_atoms_flipping: int | None = None
    atoms_pinned: bool | None = None
    not_ok_reasons: dict[str, int] = {}

    @property
    def always_skipped(self) -> str | None:
        """The reason, when every repeat of the unit was skipped for that one reason."""
        reasons = list(self.not_ok_reasons)
        if self.n_pass or self.n_fail or len(reasons) != 1:
            return None
        status, _, reason = reasons[0].partition(": ")
        return reason if status == "skipped" else None


class Stability(BaseModel):
    """Stability over all conversations.

    Attributes:
        repeats: K, the largest number of repeats seen for a conversation.
        n_conversations: Conversations with at least two ``ok`` repeats (the flip-rate base).
        n_flipping: Of those, the ones whose verdicts are not unanimous.
        flip_rate: ``n_flipping / n_conversations`` (``None`` with no such conversation).
        fleiss_kappa: Across repeats, on the ``n_fleiss`` conversations with K ``ok`` repeats;
            ``None`` where undefined (e.g. every verdict identical).
        stage_counts: Flipping conversations by the stage where the variation starts.
        n_atoms / n_atoms_flipping / atom_flip_rate: Over all units of atom metrics: atoms
            judged in at least two ``ok`` repeats, those whose label varies, and the share
            (``None`` without atom metrics).
        atom_fleiss_kappa / n_atom_fleiss: Fleiss' kappa over the atoms judged in all K
            repeats, labels as categories (``None`` where undefined).
        units_pinned: Units whose ``ok`` repeats all judged the same atoms (atom metrics).
        judge_calls / cached_calls: Judge calls over every repeat, and of them those answered
            from the judge-call cache (such a repeat re-reads an earlier verdict rather than
            sampling the judge again).
        cached_rows: Rows (repeats) whose every judge call came from the cache.
        skipped_units: Units skipped in every repeat, by their skip reason (``no_context``,
            ``no_answer``...): they are in ``conversations`` but in no rate.

    """

    model_config = ConfigDict(frozen=True)

    repeats: int
    n_conversations: int
    n_flipping: int
    flip_rate: float | None
    fleiss_kappa: float | None
    n_fleiss: int
    stage_counts: dict[str, int]
    conversations: list[ConversationStability]
    n_atoms: int | None = None
    n_atoms_flipping: int | None = None
    atom_flip_rate: float | None = None
    atom_fleiss_kappa: float | None = None
    n_atom_fleiss: int = 0
    units_pinned: int | None = None
    judge_calls: int = 0
    cached_calls: int = 0
    cached_rows: int = 0
    skipped_units: dict[str, int] = {}


def _not_ok_reasons(rows: Sequence[MetricResult]) -> dict[str, int]:
    """The non-``ok`` rows by ``"status: reason"`` (the reason is ``error_type``), sorted."""
    counts = Counter(f"{r.status}: {r.error_type}" for r in rows if r.status != "ok")
    return dict(sorted(counts.items()))


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _atom_labels(ok: Sequence[MetricResult]) -> dict[str, list[str]]:
    """Each atom text's labels across the ``ok`` repeats that judged it (first label per row)."""
    labels: dict[str, list[str]] = {}
    for row in ok:
        seen: set[str] = set()
        for atom in row.atoms or ():
            if atom.text not in seen:
                seen.add(atom.text)
                labels.setdefault(atom.text, []).append(atom.label)
    return labels


def _atom_unit(cid: str, rows: Sequence[MetricResult]) -> ConversationStability:
    ok = sorted((r for r in rows if r.status == "ok"), key=lambda r: r.repeat)
    scores = [r.score if r.score is not None else 0.0 for r in ok]
    unanimous = len(set(scores)) <= 1
    lists = {tuple(a.text for a in r.atoms or ()) for r in ok}
    labels = _atom_labels(ok)
    judged = [v for v in labels.values() if len(v) >= 2]
    stage: VariationStage | None = None
    if not unanimous:
        stage = "decomposition" if len(lists) > 1 else "verification"
    return ConversationStability(
        conversation_id=cid,
        n_pass=sum(s == 1.0 for s in scores),
        n_fail=sum(s != 1.0 for s in scores),
        n_not_ok=len(rows) - len(ok),
        majority=None,
        unanimous=unanimous,
        goal_varies=False,
        varies_at=stage,
        scores=scores,
        n_atoms=len(judged),
        n_atoms_flipping=sum(len(set(v)) > 1 for v in judged),
        atoms_pinned=len(lists) <= 1,
        not_ok_reasons=_not_ok_reasons(rows),
    )


def fleiss_kappa(table: Sequence[Sequence[int]]) -> float:
    """Fleiss' kappa of a subjects x categories table of rating counts (``nan`` if undefined).

    Every subject has the same number of ratings ``m >= 2``. With ``p_j`` the share of all
    ratings in category ``j``, ``P_i = (sum_j n_ij^2 - m) / (m (m - 1))`` the agreement on
    subject ``i``, ``P = mean_i P_i`` and ``P_e = sum_j p_j^2``: ``kappa = (P - P_e) / (1 - P_e)``
    (Fleiss 1971, "Measuring nominal scale agreement among many raters", Psychological
    Bulletin 76(5), eqs. 2-6; the same arithmetic as statsmodels' ``fleiss_kappa``, which the
    tests compare it with).
    """
    counts = np.asarray(table, dtype=float)
    raters = counts.sum(1).max()
    shares = counts.sum(0) / counts.sum()
    agreement = ((counts * counts).sum(1) - raters) / (raters * (raters - 1.0))
    expected = (shares * shares).sum()
    with np.errstate(divide="ignore", invalid="ignore"):
        return float((agreement.mean() - expected) / (1 - expected))


def _atom_fleiss(
    groups: Sequence[Sequence[MetricResult]], repeats: int
) -> tuple[float | None, int]:
    rows: list[list[str]] = []
    for group in groups:
        ok = [r for r in group if r.status == "ok"]
        rows += [v for v in _atom_labels(ok).values() if len(v) == repeats]
    categories = sorted({label for row in rows for label in row})
    if not rows or repeats < 2 or len(categories) < 2:
        return None, len(rows)
    table = [[row.count(c) for c in categories] for row in rows]
    value = fleiss_kappa(table)
    return (value if math.isfinite(value) else None), len(rows)


def _conversation(cid: str, rows: Sequence[MetricResult]) -> ConversationStability:
    ok = [r for r in rows if r.status == "ok"]
    if ok and all(r.atoms is not None and r.verdict is None for r in ok):
        return _atom_unit(cid, rows)
    n_pass = sum(r.verdict == "1" for r in ok)
    n_fail = len(ok) - n_pass
    goals = {(_norm(r.user_goal), _norm(r.end_state)) for r in ok}
    unanimous = n_pass == 0 or n_fail == 0
    majority: Literal["0", "1"] | None = (
        None if n_pass == n_fail else ("1" if n_pass > n_fail else "0")
    )
    stage: VariationStage | None = None
    if not unanimous:
        stage = "goal_inference" if len(goals) > 1 else "comparison"
    return ConversationStability(
        conversation_id=cid,
        n_pass=n_pass,
        n_fail=n_fail,
        n_not_ok=len(rows) - len(ok),
        majority=majority,
        unanimous=unanimous,
        goal_varies=len(goals) > 1,
        varies_at=stage,
        not_ok_reasons=_not_ok_reasons(rows),
    )


def _fleiss(convs: Sequence[ConversationStability], repeats: int) -> tuple[float | None, int]:
    table = [[c.n_fail, c.n_pass] for c in convs if c.n_pass + c.n_fail == repeats]
    if not table or repeats < 2:
        return None, len(table)
    value = fleiss_kappa(table)
    return (value if math.isfinite(value) else None), len(table)


def measure_stability(results: Sequence[MetricResult]) -> Stability:
    """Per-conversation and overall stability of repeated verdicts of one configuration."""
    by_conv = group_by(results, lambda r: r.subject)
    convs = [_conversation(cid, rows) for cid, rows in by_conv.items()]
    repeats = max((len({r.repeat for r in rows}) for rows in by_conv.values()), default=0)
    base = [c for c in convs if c.n_pass + c.n_fail >= 2]
    flipping = [c for c in base if not c.unanimous]
    binary = [c for c in convs if c.scores is None and not c.always_skipped]
    kappa, n_fleiss = _fleiss(binary, repeats)
    stages = Counter(c.varies_at for c in flipping if c.varies_at)
    atom_units = [c for c in convs if c.scores is not None]
    names: list[VariationStage] = (
        ["goal_inference", "comparison"] if binary or not atom_units else []
    )
    if atom_units:
        names += ["decomposition", "verification"]
    n_atoms = sum(c.n_atoms or 0 for c in atom_units)
    n_atoms_flipping = sum(c.n_atoms_flipping or 0 for c in atom_units)
    skipped = Counter(c.always_skipped for c in convs if c.always_skipped)
    atom_kappa, n_atom_fleiss = _atom_fleiss(
        [by_conv[c.conversation_id] for c in atom_units], repeats
    )
    return Stability(
        repeats=repeats,
        n_conversations=len(base),
        n_flipping=len(flipping),
        flip_rate=len(flipping) / len(base) if base else None,
        fleiss_kappa=kappa,
        n_fleiss=n_fleiss,
        stage_counts={s: stages.get(s, 0) for s in names},
        conversations=convs,
        n_atoms=n_atoms if atom_units else None,
        n_atoms_flipping=n_atoms_flipping if atom_units else None,
        atom_flip_rate=n_atoms_flipping / n_atoms if n_atoms else None,
        atom_fleiss_kappa=atom_kappa,
        n_atom_fleiss=n_atom_fleiss,
        units_pinned=sum(bool(c.atoms_pinned) for c in atom_units) if atom_units else None,
        judge_calls=sum(r.judge_calls for r in results),
        cached_calls=sum(r.cached_calls for r in results),
        cached_rows=sum(r.is_cached for r in results),
        skipped_units=dict(sorted(skipped.items())),
    )
