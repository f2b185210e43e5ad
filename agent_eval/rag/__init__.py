"""RAG evaluation: retrieval judged apart from the answer, and the run-level policy.

- :mod:`agent_eval.ingest._rag_labels`: the per-turn label keys (relevance, gold passages,
  answerability, human ratings) and the turn-labels file that attaches them to traces;
- :mod:`agent_eval.metrics._passages`: a turn's retrieved passages, deduplicated, with their human
  relevance labels;
- :mod:`agent_eval.rag._policy`: gates, not weighted means (faithfulness as a filter);
- :mod:`agent_eval.run._turns`: the per-turn view of a run and its failure classes.

The metrics themselves live beside the others in :mod:`agent_eval.metrics`
(``context_precision``, ``context_recall``, ``answer_relevance``, ``answer_correctness``,
``refusal``).
"""
