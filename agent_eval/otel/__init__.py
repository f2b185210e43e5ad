"""agent-eval in the OTel loop: results as GenAI evaluation events, span targets, exporters.

- :mod:`agent_eval.otel._semconv`: the event's attribute keys (semantic conventions v1.38.0);
- :mod:`agent_eval.otel._targets`: the evaluated span of a result;
- :mod:`agent_eval.otel._events`: emission through the OTel SDK (OTLP/HTTP or an OTLP JSON file).
"""
