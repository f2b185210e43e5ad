"""Builders for OTLP/JSON export requests, for tests (ours and users') and benchmarks.

They live in :mod:`agent_eval.otel._otlp_json` (``serve``'s warm-up builds its probe with them
too); this is their name for tests.
"""

from agent_eval.otel._otlp_json import any_value, export_request, key_values, log_record, span

__all__ = ["any_value", "export_request", "key_values", "log_record", "span"]
