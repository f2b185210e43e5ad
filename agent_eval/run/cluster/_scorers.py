"""The scoring worker of a cluster run: the body of each actor of the scoring pool.

Each :class:`Scorer` rebuilds the run's judge and engines from the
:class:`~agent_eval.run._stages.ScoringSpec` (the judge from its settings: the API key is read
from the worker's environment, which Ray's runtime environment gave it), asks the run's
authority before every judge call and reads and writes the run's shared cache. It returns
the rows of each batch and the decompositions it made (claim-level metrics); it writes
nothing itself.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from agent_eval.run._budget import Budget
from agent_eval.run._stages import BatchItem, BatchScorer, ScoredBatch, ScoringSpec
from agent_eval.run.cluster._authority import AuthorityGate
from agent_eval.run.cluster._secrets import unmask
from agent_eval.run.cluster._shared_cache import ActorCache

__all__ = ["Scorer"]


class Scorer:
    """One scoring worker (the body of a Ray actor; Ray restarts it when its process dies).

    Args:
        spec: The run's scoring spec.
        authority: The run's :class:`~agent_eval.run.cluster._authority.RunAuthority` actor.
        cache: The run's :class:`~agent_eval.run.cluster._shared_cache.SharedCache` actor, or
            ``None`` with the cache off.
        pads: The pads of the masked secret variables (:mod:`~agent_eval.run.cluster._secrets`):
            joined with the runtime environment's shares in this process's environment.

    """

    def __init__(
        self,
        spec: ScoringSpec,
        authority: Any,
        cache: Any | None,
        pads: Mapping[str, bytes] | None = None,
    ) -> None:
        unmask(pads or {})
        self.budget = Budget()  # the mirror: marked exhausted when the authority refuses
        gate = AuthorityGate(authority, spec.endpoint or "default", self.budget)
        backend = ActorCache(cache) if cache is not None else None
        self._spec, self._gate, self._backend = spec, gate, backend
        self._scorer: BatchScorer | None = None

    async def score(self, items: Sequence[BatchItem]) -> ScoredBatch:
        """One batch's new rows and decompositions (the judge is built on the first batch)."""
        if self._scorer is None:
            self._scorer = BatchScorer(
                self._spec, gate=self._gate, cache=self._backend, budget=self.budget
            )
        return await self._scorer.score_batch(items)

    async def close(self) -> None:
        """Close the judge's connections."""
        if self._scorer is not None:
            await self._scorer.aclose()
