"""Judge-vs-human agreement for every RAG reviewer, against the labels the data carries.

A reviewer that disagrees with people produces figures that look objective and are not, so the
RAG report puts each reviewer's agreement next to its scores, or says plainly that it was never
checked on this data. For each reviewer in a run (:func:`reviewer_agreement`):

- ``llm_context_precision``: each passage's verdict against the human relevance label of that
  passage (binary: agreement and Cohen's kappa, scikit-learn, over passages);
- ``llm_context_recall``: the turn's recall against the recall the gold passage set gives
  (``relevant_passages``; Spearman's rho and Kendall's tau-b, scipy, over turns);
- ``refusal``: the verdict against what the turn's answerability asks for (decline or ask back
  for UNANSWERABLE / UNDERSPECIFIED, answer for ANSWERABLE / PARTIAL; binary, over turns);
- ``faithfulness``, ``answer_relevance``, ``answer_correctness``: the score against the turn's
  ordinal human ratings (``human_ratings``: MTRAG's 1-4 faithfulness for faithfulness;
  appropriateness and completeness for relevance; a ``correctness`` rating when the data has
  one), Spearman and Kendall over turns;
- ``faithfulness``, ``groundedness``: also against a binary human label of the turn
  (:data:`HUMAN_LABEL_FOR`: ``faithful``, as the RAG JSON Lines example writes it, or BEGIN's
  ``attributable``), the turn counting 1 when every atom passed (score 1), as
  ``agent-eval calibrate`` counts it; agreement and Cohen's kappa over turns;
- ``context_precision`` / ``context_recall`` are computed from the human labels themselves:
  they are the ground truth, nothing to agree with.

This is the minimal, swappable form: the claim-level issue's ``calibrate`` (ordinal statistics
with confidence intervals) supersedes the ordinal part when it lands.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

from scipy.stats import kendalltau, spearmanr

from agent_eval.analysis._binary_stats import cohen_kappa
from agent_eval.analysis._labels import parse_binary
from agent_eval.ingest._rag_labels import HUMAN_RATINGS
from agent_eval.metrics._refusal import expected_behaviour
from agent_eval.run._turns import TurnRow

__all__ = ["HUMAN_LABEL_FOR", "HUMAN_RATING_FOR", "Agreement", "reviewer_agreement"]

HUMAN_RATING_FOR: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithfulness",),
    "groundedness": ("faithfulness",),
    "answer_relevance": ("appropriateness", "completeness"),
    "answer_correctness": ("correctness", "answer_correctness"),
}
"""Which human ratings each judged quality is compared with."""

HUMAN_LABEL_FOR: dict[str, tuple[str, ...]] = {
    "faithfulness": ("faithful", "attributable"),
    "groundedness": ("faithful", "attributable"),
}
"""Which binary human labels (0/1 per turn) each claim-level metric is compared with."""

_GROUND_TRUTH = frozenset({"context_precision", "context_recall"})


@dataclass(frozen=True)
class Agreement:
    """One reviewer's agreement with one kind of human label.

    Attributes:
        reviewer: The metric name.
        against: What it was compared with (``human relevance``, ``human faithfulness``...).
        kind: ``binary``, ``ordinal``, ``ground_truth`` or ``unchecked``.
        n: Pairs compared.
        agreement: Share of equal pairs (binary).
        kappa: Cohen's kappa (binary), ``None`` when undefined.
        spearman / kendall: Rank correlations (ordinal), ``None`` when undefined.

    """

    reviewer: str
    against: str
    kind: str
    n: int = 0
    agreement: float | None = None
    kappa: float | None = None
    spearman: float | None = None
    kendall: float | None = None

    def describe(self) -> str:
        """One line for the report."""
        if self.kind == "ground_truth":
            return f"{self.reviewer}: computed from human labels (ground truth)"
        if self.kind == "unchecked" or self.n == 0:
            return f"{self.reviewer}: never checked against human labels on this data"
        if self.kind == "binary":
            return (
                f"{self.reviewer} vs {self.against}: agreement {_fmt(self.agreement)}, "
                f"Cohen's kappa {_fmt(self.kappa)} over {self.n}"
            )
        return (
            f"{self.reviewer} vs {self.against}: Spearman {_fmt(self.spearman)}, Kendall "
            f"{_fmt(self.kendall)} over {self.n}"
        )


def _fmt(value: float | None) -> str:
    return "n/a" if value is None else f"{value:.3f}"


def _finite(value: float) -> float | None:
    return float(value) if math.isfinite(value) else None


def _binary(reviewer: str, against: str, pairs: Sequence[tuple[int, int]]) -> Agreement:
    if not pairs:
        return Agreement(reviewer, against, "unchecked")
    judge, human = [p[0] for p in pairs], [p[1] for p in pairs]
    same = sum(a == b for a, b in pairs) / len(pairs)
    return Agreement(
        reviewer, against, "binary", len(pairs), agreement=same, kappa=cohen_kappa(judge, human)
    )


def _ordinal(reviewer: str, against: str, pairs: Sequence[tuple[float, float]]) -> Agreement:
    if len(pairs) < 2:
        return Agreement(reviewer, against, "unchecked", len(pairs))
    judge, human = [p[0] for p in pairs], [p[1] for p in pairs]
    if len(set(judge)) < 2 or len(set(human)) < 2:  # constant: correlation undefined
        return Agreement(reviewer, against, "ordinal", len(pairs))
    rho = spearmanr(judge, human).statistic
    tau = kendalltau(judge, human).statistic
    return Agreement(
        reviewer, against, "ordinal", len(pairs), spearman=_finite(rho), kendall=_finite(tau)
    )


def reviewer_agreement(rows: Iterable[TurnRow]) -> list[Agreement]:
    """Agreement of every reviewer found in ``rows`` with the labels the turns carry."""
    rows = list(rows)
    names = sorted({name for row in rows for name in row.results})
    out = []
    for name in names:
        if name in _GROUND_TRUTH:
            out.append(Agreement(name, "human labels", "ground_truth"))
        elif name == "llm_context_precision":
            out.append(_binary(name, "human relevance", _passage_pairs(rows)))
        elif name == "llm_context_recall":
            out.append(_ordinal(name, "gold-passage recall", _recall_pairs(rows)))
        elif name == "refusal":
            out.append(_binary(name, "answerability", _refusal_pairs(rows)))
        elif name in HUMAN_RATING_FOR:
            found = False
            for rating in HUMAN_RATING_FOR[name]:
                pairs = _rating_pairs(rows, name, rating)
                if pairs:
                    out.append(_ordinal(name, f"human {rating}", pairs))
                    found = True
            for label in HUMAN_LABEL_FOR.get(name, ()):
                binary = _label_pairs(rows, name, label)
                if binary:
                    out.append(_binary(name, f"human {label}", binary))
                    found = True
            if not found:
                out.append(Agreement(name, "human ratings", "unchecked"))
        else:
            out.append(Agreement(name, "human labels", "unchecked"))
    return out


def _passage_pairs(rows: list[TurnRow]) -> list[tuple[int, int]]:
    pairs = []
    for row in rows:
        result = row.results.get("llm_context_precision")
        if result is None or result.status != "ok" or not result.atoms:
            continue
        human = result.details.get("human_labels")
        if not isinstance(human, list):
            continue
        for atom, label in zip(result.atoms, human, strict=False):
            if isinstance(label, int):
                pairs.append((int(atom.passed), label))
    return pairs


def _recall_pairs(rows: list[TurnRow]) -> list[tuple[float, float]]:
    pairs = []
    for row in rows:
        score = row.score("llm_context_recall")
        gold = row.turn.labels.get("relevant_passages")
        if score is None or not isinstance(gold, list) or not gold:
            continue
        retrieved = {p.id for p in row.turn.passages}
        pairs.append((score, sum(g in retrieved for g in gold) / len(gold)))
    return pairs


def _refusal_pairs(rows: list[TurnRow]) -> list[tuple[int, int]]:
    pairs = []
    for row in rows:
        result = row.results.get("refusal")
        expected = expected_behaviour(dict(row.turn.labels))
        if result is None or result.status != "ok" or expected is None:
            continue
        pairs.append((int(result.verdict == "1"), int(expected != "answer")))
    return pairs


def _rating_pairs(rows: list[TurnRow], name: str, rating: str) -> list[tuple[float, float]]:
    pairs = []
    for row in rows:
        score = row.score(name)
        ratings = row.turn.labels.get(HUMAN_RATINGS)
        value = ratings.get(rating) if isinstance(ratings, dict) else None
        if score is not None and isinstance(value, int | float) and not isinstance(value, bool):
            pairs.append((score, float(value)))
    return pairs


def _label_pairs(rows: list[TurnRow], name: str, label: str) -> list[tuple[int, int]]:
    """(every atom passed, the human 0/1 label) per turn with both; unparseable labels left out."""
    pairs = []
    for row in rows:
        score = row.score(name)
        value = row.turn.labels.get(label)
        if score is None or value is None:
            continue
        try:
            human = parse_binary(value)
        except ValueError:
            continue
        pairs.append((int(score == 1.0), human))
    return pairs
