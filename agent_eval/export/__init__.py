"""Results written into other tools: :mod:`agent_eval.export._phoenix` (span annotations)."""
