"""Span attributes of agent-eval's own convention for references carried in telemetry.

An application (or a test harness) that knows what its agent should have done can record it on
any span of the conversation; ingest copies it onto the AgentTrace.
"""

from __future__ import annotations

__all__ = ["REFERENCE_TOOL_CALLS"]

REFERENCE_TOOL_CALLS = "agent_eval.reference.tool_calls"
"""The expected tool calls, as JSON text of ``[{"name": ..., "arguments": {...}}, ...]`` (the
shapes :func:`agent_eval.ingest._reference_calls.parse_tool_calls` reads) ->
``AgentTrace.reference_tool_calls``. The first span of the conversation carrying it wins."""
