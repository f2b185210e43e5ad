"""A run spread over a Ray cluster: the executor, the run's authorities and its workers.

Install the extra (``pip install "otel-agent-eval[ray]"``) and pick it with
``agent-eval score ... --engine ray`` or ``agent_eval.score(..., engine="ray")``; the default
stays one process. Nothing here imports Ray until a run goes to it.

- :mod:`~agent_eval.run.cluster._executor`: :class:`RayExecutor`, the driver's side;
- :mod:`~agent_eval.run.cluster._authority`: one actor per run holding the judge's rate limits,
  calls in flight and the budget, and the gate every worker asks;
- :mod:`~agent_eval.run.cluster._shared_cache`: one actor per run holding the judge-call cache;
- :mod:`~agent_eval.run.cluster._scorers`: the scoring workers;
- :mod:`~agent_eval.run.cluster._coalesce`: one actor call at a time for a worker's many callers;
- :mod:`~agent_eval.run.cluster._inputs`: reading and regrouping the inputs as Ray tasks.
"""

from agent_eval.run.cluster._executor import RayExecutor, RayOptions, require_ray

__all__ = ["RayExecutor", "RayOptions", "require_ray"]
