"""Results written into other tools: :mod:`agent_eval.export.phoenix` (span annotations)."""
