"""RAG evaluation: retrieval judged apart from the answer, and the run-level policy.

:func:`load_policy` reads a :class:`RagPolicy` (gates, not weighted means: faithfulness as a
filter) and :func:`apply_policy` applies it to a run's turns (:class:`PolicyOutcome`, one
:class:`TurnVerdict` a turn); :func:`reviewer_agreement` measures the judge against human
ratings (:class:`Agreement`). The RAG metrics themselves live beside the others in
:mod:`agent_eval.metrics` (``context_precision``, ``context_recall``, ``answer_relevance``,
``answer_correctness``, ``refusal``, ``faithfulness``, ``groundedness``).
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from agent_eval.rag._agreement import Agreement, reviewer_agreement
    from agent_eval.rag._policy import (
        PolicyOutcome,
        RagPolicy,
        TurnVerdict,
        apply_policy,
        load_policy,
    )

__all__ = [
    "Agreement",
    "PolicyOutcome",
    "RagPolicy",
    "TurnVerdict",
    "apply_policy",
    "load_policy",
    "reviewer_agreement",
]

_HOME = {
    "Agreement": "agent_eval.rag._agreement",
    "reviewer_agreement": "agent_eval.rag._agreement",
    "PolicyOutcome": "agent_eval.rag._policy",
    "RagPolicy": "agent_eval.rag._policy",
    "TurnVerdict": "agent_eval.rag._policy",
    "apply_policy": "agent_eval.rag._policy",
    "load_policy": "agent_eval.rag._policy",
}


def __getattr__(name: str) -> Any:
    """Import a public name's module on first use (PEP 562)."""
    if name not in _HOME:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_HOME[name]), name)
