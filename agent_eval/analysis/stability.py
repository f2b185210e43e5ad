"""Judge stability across repeats: whether the judge agrees with itself.

The same conversation is judged K times with the same formatter, prompts and judge, the cache
bypassed (result rows with ``repeat`` 0..K-1). Per conversation: the verdict counts, the
majority (``None`` on a tie), whether the verdicts are unanimous, and the stage where the
variation starts:

- ``goal_inference`` (stage 1): the inferred ``user_goal``/``end_state`` differ across repeats
  (compared after collapsing whitespace);
- ``comparison`` (stage 2): the same inferred goal and end state, yet different verdicts.

Overall: the flip rate (share of conversations with at least two ``ok`` repeats whose verdicts
are not unanimous) and Fleiss' kappa across repeats (statsmodels ``fleiss_kappa``; Fleiss 1971),
computed on the conversations with all K repeats ``ok``, since the statistic assumes an equal
number of ratings per subject.
"""

from __future__ import annotations

import math
import warnings
from collections import Counter
from collections.abc import Sequence
from typing import Literal

import numpy as np
from pydantic import BaseModel, ConfigDict
from statsmodels.stats.inter_rater import fleiss_kappa

from agent_eval.analysis.selection import group_by
from agent_eval.result import MetricResult

__all__ = ["ConversationStability", "Stability", "VariationStage", "measure_stability"]

VariationStage = Literal["goal_inference", "comparison"]


class ConversationStability(BaseModel):
    """One conversation over its repeats.

    Attributes:
        n_pass / n_fail: ``ok`` repeats with verdict 1 / 0.
        n_not_ok: Repeats that errored or were skipped.
        majority: ``"1"``/``"0"``, or ``None`` on a tie or with no ``ok`` repeat.
        unanimous: Every ``ok`` repeat gave the same verdict.
        goal_varies: The stage-1 outputs (user goal, end state) differ across ``ok`` repeats.
        varies_at: Where a verdict flip starts; ``None`` when the verdicts are unanimous.

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


def _norm(text: str | None) -> str:
    return " ".join((text or "").split())


def _conversation(cid: str, rows: Sequence[MetricResult]) -> ConversationStability:
    ok = [r for r in rows if r.status == "ok"]
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
    )


def _fleiss(convs: Sequence[ConversationStability], repeats: int) -> tuple[float | None, int]:
    table = [[c.n_fail, c.n_pass] for c in convs if c.n_pass + c.n_fail == repeats]
    if not table or repeats < 2:
        return None, len(table)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        value = float(fleiss_kappa(np.asarray(table), method="fleiss"))
    return (value if math.isfinite(value) else None), len(table)


def measure_stability(results: Sequence[MetricResult]) -> Stability:
    """Per-conversation and overall stability of repeated verdicts of one configuration."""
    by_conv = group_by(results, lambda r: r.subject)
    convs = [_conversation(cid, rows) for cid, rows in by_conv.items()]
    repeats = max((len({r.repeat for r in rows}) for rows in by_conv.values()), default=0)
    base = [c for c in convs if c.n_pass + c.n_fail >= 2]
    flipping = [c for c in base if not c.unanimous]
    kappa, n_fleiss = _fleiss(convs, repeats)
    stages = Counter(c.varies_at for c in flipping if c.varies_at)
    return Stability(
        repeats=repeats,
        n_conversations=len(base),
        n_flipping=len(flipping),
        flip_rate=len(flipping) / len(base) if base else None,
        fleiss_kappa=kappa,
        n_fleiss=n_fleiss,
        stage_counts={s: stages.get(s, 0) for s in ("goal_inference", "comparison")},
        conversations=convs,
    )
