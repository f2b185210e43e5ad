"""Agreement with claim-level human labels, where the judge's atoms can be matched to them.

People label the claims *they* split an answer into (ExpertQA: an expert's support label per
sentence-level claim); the judge splits the answer itself. Agreement is measured only on the
pairs that can be matched: each labelled claim to at most one atom of the same unit, by text
similarity (``difflib.SequenceMatcher.ratio`` over both texts after
:func:`~agent_eval.metrics._evidence.normalize` with citation markers such as ``[3]`` removed),
greedily from the most similar pair down, and only when the ratio reaches ``min_similarity``
(default 0.6). The matched pairs are then compared as binary values (atom passed vs label 1)
with :func:`~agent_eval.analysis._calibration.calibrate`; how many claims and atoms stayed
unmatched is reported beside it, so a high agreement on few matches is visible as such.

Labels travel on the unit: ``labels["claims"] = [{"text": ..., "label": 0 | 1 | None}, ...]``
(the ``rag-jsonl`` and ``expertqa`` containers put them there); ``None`` labels are left out.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping, Sequence
from difflib import SequenceMatcher

from pydantic import BaseModel, ConfigDict

from agent_eval._result import Atom, MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.analysis._calibration import Calibration, calibrate
from agent_eval.analysis._selection import identity_of
from agent_eval.metrics._evidence import normalize
from agent_eval.metrics._units import answer_units

__all__ = [
    "DEFAULT_MIN_SIMILARITY",
    "ClaimCalibration",
    "calibrate_claims",
    "claim_labels_from_traces",
    "match_claims",
]

DEFAULT_MIN_SIMILARITY = 0.6
_CITATION = re.compile(r"\[\d+\]")


class ClaimCalibration(BaseModel):
    """Claim-level agreement over the matched (labelled claim, atom) pairs.

    Attributes:
        binary: Agreement of ``atom.passed`` with the labels over the matched pairs (subjects
            ``conversation_id/turn:K#i``, i the labelled claim's index).
        n_units: Units with both labelled claims and an ``ok`` row with atoms.
        n_labelled: Labelled claims (label 0 or 1) in those units.
        n_atoms: The judge's atoms in those units.
        n_matched: Pairs matched.
        mean_similarity: Mean similarity of the matched pairs (``None`` with none).
        min_similarity: The matching threshold used.

    """

    model_config = ConfigDict(frozen=True)

    binary: Calibration
    n_units: int
    n_labelled: int
    n_atoms: int
    n_matched: int
    mean_similarity: float | None
    min_similarity: float


def _comparable(text: str) -> str:
    return normalize(_CITATION.sub(" ", text))


def match_claims(
    claims: Sequence[str], atoms: Sequence[str], min_similarity: float = DEFAULT_MIN_SIMILARITY
) -> list[tuple[int, int, float]]:
    """One-to-one ``(claim index, atom index, similarity)`` pairs, most similar first."""
    left = [_comparable(c) for c in claims]
    right = [_comparable(a) for a in atoms]
    scored = sorted(
        (
            (SequenceMatcher(None, lc, ra, autojunk=False).ratio(), i, j)
            for i, lc in enumerate(left)
            for j, ra in enumerate(right)
        ),
        reverse=True,
    )
    used_claims: set[int] = set()
    used_atoms: set[int] = set()
    pairs = []
    for similarity, i, j in scored:
        if similarity < min_similarity:
            break
        if i in used_claims or j in used_atoms:
            continue
        used_claims.add(i)
        used_atoms.add(j)
        pairs.append((i, j, similarity))
    return pairs


def claim_labels_from_traces(traces: Iterable[AgentTrace]) -> dict[str, list[tuple[str, int]]]:
    """``{subject: [(claim text, 0|1), ...]}`` from the units' ``labels["claims"]``.

    Claims whose label is not 0/1 (``None``, absent) are left out; their order is kept, and the
    index into the returned list names the claim.
    """
    found: dict[str, list[tuple[str, int]]] = {}
    for trace in traces:
        for unit in answer_units(trace):
            claims = unit.labels.get("claims")
            if not isinstance(claims, list):
                continue
            kept = []
            for claim in claims:
                if not isinstance(claim, dict) or not isinstance(claim.get("text"), str):
                    continue
                label = claim.get("label")
                if isinstance(label, int) and not isinstance(label, bool) and label in (0, 1):
                    kept.append((str(claim["text"]), label))
            if kept:
                found[f"{trace.conversation_id}/{unit.id}"] = kept
    return found


def calibrate_claims(
    results: Sequence[MetricResult],
    labels: Mapping[str, Sequence[tuple[str, int]]],
    *,
    min_similarity: float = DEFAULT_MIN_SIMILARITY,
) -> ClaimCalibration:
    """Agreement of one configuration's atoms with claim labels, over the matched pairs.

    Raises:
        ConfigError: The rows mix configurations.

    """
    identity = identity_of(results)
    predictions: dict[str, int] = {}
    truth: dict[str, int] = {}
    similarities: list[float] = []
    n_units = n_labelled = n_atoms = 0
    for row in results:
        claims = labels.get(row.subject)
        if row.status != "ok" or row.repeat != 0 or not row.atoms or not claims:
            continue
        atoms: tuple[Atom, ...] = row.atoms
        n_units += 1
        n_labelled += len(claims)
        n_atoms += len(atoms)
        for i, j, similarity in match_claims(
            [text for text, _ in claims], [a.text for a in atoms], min_similarity
        ):
            key = f"{row.subject}#{i}"
            predictions[key] = int(atoms[j].passed)
            truth[key] = claims[i][1]
            similarities.append(similarity)
    return ClaimCalibration(
        binary=calibrate(predictions, truth, identity=identity),
        n_units=n_units,
        n_labelled=n_labelled,
        n_atoms=n_atoms,
        n_matched=len(similarities),
        mean_similarity=sum(similarities) / len(similarities) if similarities else None,
        min_similarity=min_similarity,
    )
