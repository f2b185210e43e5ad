"""The scoring stage: score a batch of conversations with a judge rebuilt from its settings.

Engine-neutral: one process can call it, and a Ray worker does (:mod:`agent_eval.run.cluster`).
A :class:`ScoringSpec` says everything a worker needs and nothing it must not get: the
engines' metrics, formatters, run id and settings, the judge's
:class:`~agent_eval.judges._base.JudgeSettings` (the name of the variable holding the API key,
never the key), the references. It is picklable (metrics, formatters and settings are plain
objects), so it can travel to another process once per run.

:class:`BatchScorer` rebuilds the judge from the settings on the worker
(:meth:`Judge.from_settings <agent_eval.judges._base.Judge.from_settings>` of the registered
kind: a judge made from the user's own client object is rebuilt only through a factory the
user names, ``openai-client:package.module:factory``), wraps it as
:func:`~agent_eval.run._judge_stack.wrap_judge` does with the worker's gate and shared cache,
and scores each batch with one :class:`~agent_eval.run._engine.Engine` per engine spec (no
store: the rows are returned). The driver of a run stays the only writer of the run
directory, the run id and the run record.

Rows are those one process makes for the same conversations: the same engine code, run id,
metric, formatter (and fingerprint), judge model, references and settings. Finished units
(``--resume``) come with the batch (:class:`BatchItem`): they are not judged again and no row
is returned for them.

Claim-level metrics (:class:`~agent_eval.metrics._claim_metric.ClaimMetric`) pin each answer's
decomposition in the run directory, which the driver alone writes. A metric pickled to a worker
carries an empty in-memory store that journals what it decomposes
(:class:`~agent_eval.metrics._decomposition.DecompositionCache`); each :class:`BatchItem` brings
the decompositions the driver has pinned for its units (a resumed run, a re-run into the same
output directory), put in that store before the batch is scored, and :meth:`BatchScorer.
score_batch` hands back what the batch decomposed (:class:`ScoredBatch`) for the driver to
store, so a worker reuses the atoms one process would reuse.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.formatting._base import Formatter
from agent_eval.judges._base import Judge, JudgeSettings, judges
from agent_eval.metrics._base import Metric
from agent_eval.metrics._claim_metric import ClaimMetric
from agent_eval.metrics._decomposition import Decomposition, DecompositionCache
from agent_eval.run._budget import Budget
from agent_eval.run._cache import CacheBackend, CacheMode
from agent_eval.run._call_gate import CallGate
from agent_eval.run._engine import Engine
from agent_eval.run._judge_stack import JudgeStack, wrap_judge
from agent_eval.run._rendering import RenderCache
from agent_eval.run._store import ResultKey, result_key

__all__ = [
    "BatchItem",
    "BatchScorer",
    "EngineSpec",
    "ScoredBatch",
    "ScoringSpec",
    "engine_spec",
    "judge_from_settings",
]


@dataclass(frozen=True, kw_only=True)
class EngineSpec:
    """One engine of a run, as a worker rebuilds it (one per metric, formatter and repeat).

    Attributes:
        metric: The metric (an instance: its parameters are part of it).
        formatter: The formatter.
        fingerprint: The formatter's fingerprint, as the driver computed it.
        run_id: The run's id (the driver's).
        repeat: The repeat index stored in each row.
        concurrency: Conversations in flight at once on one worker.
        max_context_tokens: Skip conversations whose prompt exceeds this (``None``: never).

    """

    metric: Metric
    formatter: Formatter[Any]
    fingerprint: str
    run_id: str
    repeat: int = 0
    concurrency: int = 16
    max_context_tokens: int | None = None


def engine_spec(engine: Engine) -> EngineSpec:
    """The spec a worker rebuilds ``engine`` from (the driver's engine of the run)."""
    return EngineSpec(
        metric=engine.metric,
        formatter=engine.formatter,
        fingerprint=engine.fingerprint,
        run_id=engine.run_id,
        repeat=engine.repeat,
        concurrency=engine.concurrency,
        max_context_tokens=engine.max_context_tokens,
    )


@dataclass(frozen=True, kw_only=True)
class ScoringSpec:
    """What a worker needs to score batches of a run (picklable; no secret in it).

    Attributes:
        engines: The run's engines, in the driver's order.
        judge: The judge's settings (rebuilt on the worker); ``None``: judge-free metrics only.
        references: Reference goals by conversation id.
        cache_mode: ``use``, ``refresh`` or ``off``.
        cache_parameters: Adapter settings hashed into the cache keys (``{"mode": ...}``).
        endpoint: The judge endpoint, bare, kept beside cache entries.
        keep_interrupted: Keep a unit an interrupt cut short as an ``interrupted`` row.

    """

    engines: tuple[EngineSpec, ...]
    judge: JudgeSettings | None = None
    references: Mapping[str, str] = field(default_factory=dict)
    cache_mode: CacheMode = "use"
    cache_parameters: Mapping[str, Any] = field(default_factory=dict)
    endpoint: str | None = None
    keep_interrupted: bool = False


@dataclass(frozen=True)
class BatchItem:
    """One conversation of a batch, with its rows an earlier invocation finished.

    Attributes:
        trace: The conversation.
        done: Finished rows of its units by result key (``--resume``): not judged again.
        decompositions: The decompositions pinned for its units (claim-level metrics): reused,
            not asked again.

    """

    trace: AgentTrace
    done: Mapping[ResultKey, MetricResult] = field(default_factory=dict)
    decompositions: tuple[Decomposition, ...] = ()


@dataclass(frozen=True)
class ScoredBatch:
    """What scoring a batch gave: its new rows and the decompositions it made.

    Attributes:
        rows: The new rows, engine by engine (none for a finished unit).
        decompositions: The answers' decompositions made for this batch (claim-level metrics
            whose store journals, i.e. a worker's), in order: the driver pins them.

    """

    rows: list[MetricResult]
    decompositions: list[Decomposition]


def judge_from_settings(settings: JudgeSettings) -> Judge:
    """The judge ``settings`` describe, built by its registered class (on the worker).

    Raises:
        UnknownPluginError: the kind is not registered where this runs.
        ConfigError: the judge cannot be built from these settings.

    """
    return judges.get(settings.kind).from_settings(settings)


class BatchScorer:
    """Scores batches of conversations for one run: a judge and engines rebuilt from a spec.

    Args:
        spec: The run's scoring spec.
        gate: The run's gate for rate limits and the budget; ``None``: none (one process
            with no limits).
        cache: Where the judge-call cache lives (a shared one on a cluster, a
            :class:`~agent_eval.run._cache.JudgeCache` in one process); ``None``: no cache.
        budget: The local mirror of the budget: set exhausted when the gate refused, so
            the engines stop scheduling as one process does.

    """

    def __init__(
        self,
        spec: ScoringSpec,
        *,
        gate: CallGate | None = None,
        cache: CacheBackend | None = None,
        budget: Budget | None = None,
    ) -> None:
        self.spec = spec
        self.budget = budget
        self.stack: JudgeStack | None = None
        if spec.judge is not None:
            self.stack = wrap_judge(
                judge_from_settings(spec.judge),
                cache_mode=spec.cache_mode if cache is not None else "off",
                parameters=spec.cache_parameters,
                endpoint=spec.endpoint,
                gate=gate,
                shared_cache=cache,
            )
        self.renderings = RenderCache()

    def _engine(self, engine: EngineSpec, done: Mapping[ResultKey, MetricResult]) -> Engine:
        judged = engine.metric.requires_judge and self.stack is not None
        return Engine(
            metric=engine.metric,
            formatter=engine.formatter,
            judge=self.stack.judge if judged and self.stack is not None else None,
            run_id=engine.run_id,
            repeat=engine.repeat,
            concurrency=engine.concurrency,
            max_context_tokens=engine.max_context_tokens,
            references=self.spec.references,
            done=done,
            keep_results=True,
            formatter_fingerprint=engine.fingerprint or None,
            budget=self.budget,
            renderings=self.renderings,
            keep_interrupted=self.spec.keep_interrupted,
        )

    async def score(self, items: Sequence[BatchItem]) -> list[MetricResult]:
        """The new rows of ``items`` (:meth:`score_batch`'s rows)."""
        return (await self.score_batch(items)).rows

    async def score_batch(self, items: Sequence[BatchItem]) -> ScoredBatch:
        """Every unfinished unit of every engine, engine by engine; the decompositions made.

        The items' pinned decompositions are put in the claim-level metrics' stores first.
        Never raises for a judge, formatter or metric failure (they are rows).
        """
        stores = self._decomposition_stores()
        done: dict[ResultKey, MetricResult] = {}
        for item in items:
            done.update(item.done)
            for pinned in item.decompositions:
                for store in stores:
                    store.put(
                        pinned.key,
                        pinned.atoms,
                        metric=pinned.metric,
                        judge_model=pinned.judge_model,
                        journal=False,
                    )
        traces = [item.trace for item in items]
        rows: list[MetricResult] = []
        for spec in self.spec.engines:
            summary = await self._engine(spec, done).run(traces, total=len(traces))
            rows.extend(row for row in summary.results if result_key(row) not in done)
        self.renderings = RenderCache()  # a batch's renderings are not needed again
        made = [d for store in stores for d in store.drain()]
        return ScoredBatch(rows=rows, decompositions=made)

    def _decomposition_stores(self) -> list[DecompositionCache]:
        """The distinct decomposition stores of the spec's claim-level metrics."""
        stores = {
            id(e.metric.decompositions): e.metric.decompositions
            for e in self.spec.engines
            if isinstance(e.metric, ClaimMetric)
        }
        return list(stores.values())

    async def aclose(self) -> None:
        """Close the judge's connections."""
        if self.stack is not None:
            await self.stack.judge.aclose()
