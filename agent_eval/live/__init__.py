"""Live evaluation: ``agent-eval serve`` scores conversations as their spans arrive.

An OTLP/HTTP receiver in these modules:

- :mod:`agent_eval.live._payloads`: OTLP/HTTP request bodies (protobuf or JSON, gzip) to items;
- :mod:`agent_eval.live._buffer`: spans held per trace until a conversation closes, in bounded
  memory, and the conversations already scored (for re-scoring late spans);
- :mod:`agent_eval.live._selection`: which closed conversations are judged (``--where``
  filters on span and resource attributes, then a seeded ``--sample``);
- :mod:`agent_eval.live._scorer`: closed conversations scored into the results store, by every
  metric;
- :mod:`agent_eval.live._receiver`: the aiohttp server (``/v1/traces``, ``/v1/logs``,
  ``/healthz``).
"""
