"""The Ray executor: a run's engines score on a pool of Ray actors; the driver writes.

:class:`RayExecutor` is a :class:`~agent_eval.run._session.Executor`: the
:class:`~agent_eval.run._session.RunSession` on the driver keeps the run id, the run record, the
run directory and its store (the only writer), and hands the executor its engines and the
spooled conversations. The executor

1. connects to Ray (``--engine ray:ADDRESS``, else ``$RAY_ADDRESS``, else a local cluster it
   starts and stops; a cluster this process already joined is used as it is);
2. starts one :class:`~agent_eval.run.cluster._authority.RunAuthority` (rate limits, calls in
   flight, budget) and one :class:`~agent_eval.run.cluster._shared_cache.SharedCache` for the
   run, on the driver's node when it can;
3. starts ``workers`` :class:`~agent_eval.run.cluster._scorers.Scorer` actors (restarted by Ray
   when their process dies, their task retried), each rebuilding the judge from its settings;
   the variables named in :attr:`RayOptions.env` (the API key's) reach them through Ray's
   runtime environment, masked (:mod:`~agent_eval.run.cluster._secrets`: Ray logs runtime
   environments), never as they are in a task argument, an object-store value or a log;
4. sends the conversations in batches (with the rows ``--resume`` keeps of them, finished
   conversations not sent, and the decompositions pinned for their answers: claim-level
   metrics), stores the decompositions each batch made (the run directory's
   ``decompositions.db``, as one process does), hands every row it gets back to the engines'
   store and callbacks, counts them on one summary per engine, as :meth:`Engine.run` does,
   and shows the conversations done of the total on the session's progress console;
5. at the end copies the spend into the session's budget, the cluster's new cache entries into
   the user's local cache file, and stops the actors.

A judge that cannot be rebuilt from settings (an object made in Python) cannot go to Ray:
:func:`check_shippable` says so before anything starts.
"""

from __future__ import annotations

import asyncio
import os
import socket
import sys
import time
from collections import Counter
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass
from functools import partial
from types import ModuleType
from typing import TYPE_CHECKING, Any

from rich.console import Console

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.errors import ConfigError
from agent_eval.formatting._loading import USER_FORMATTERS_PACKAGE
from agent_eval.judges._base import JudgeSettings
from agent_eval.metrics._claim_metric import ClaimMetric
from agent_eval.metrics._decomposition import Decomposition
from agent_eval.run._budget import Budget
from agent_eval.run._engine import Engine, progress_display
from agent_eval.run._judge_stack import default_cache_path
from agent_eval.run._stages import BatchItem, ScoredBatch, ScoringSpec, engine_spec
from agent_eval.run._store import ResultKey
from agent_eval.run._summary import RunSummary
from agent_eval.run.cluster._authority import EndpointLimits, RunAuthority
from agent_eval.run.cluster._scorers import Scorer
from agent_eval.run.cluster._secrets import mask
from agent_eval.run.cluster._shared_cache import SharedCache

if TYPE_CHECKING:
    from agent_eval.run._session import RunSession
    from agent_eval.run._spool import TraceSpool

__all__ = [
    "DEFAULT_BATCH_SIZE",
    "RAY_ADDRESS_ENV",
    "RayExecutor",
    "RayOptions",
    "check_shippable",
    "connect",
    "require_ray",
]

RAY_ADDRESS_ENV = "RAY_ADDRESS"
"""Ray's own variable naming the cluster to join (``auto``, ``ray://host:10001``...)."""

DEFAULT_BATCH_SIZE = 16
"""Conversations per task sent to a scoring actor."""

BATCHES_PER_WORKER = 4
"""Batches each worker holds at once, so it never waits for the driver between two, nor for
a batch's slowest conversation (``bench/scale_ray.py``, judge-latency-bound: 4 batches of 16
kept a worker at 0.95-0.99x one process's rate with 64 in flight, 2 of 32 at 0.78-0.79x)."""

INSTALL_HINT = 'pip install "otel-agent-eval[ray]"'


def require_ray() -> ModuleType:
    """The ``ray`` module.

    Raises:
        ConfigError: Ray is not installed (names the extra to install).

    """
    try:
        import ray
    except ImportError as exc:
        raise ConfigError(f"--engine ray needs Ray: {INSTALL_HINT}") from exc
    return ray


@dataclass(frozen=True, kw_only=True)
class RayOptions:
    """How a run goes to Ray.

    Attributes:
        address: The cluster (``ray://host:10001``, ``auto``, ``host:6379``); ``None``:
            ``$RAY_ADDRESS``, else a local cluster started for the run.
        workers: Scoring actors (one CPU each); ``None``: the cluster's CPUs.
        batch_size: Conversations per task.
        judge: The judge's settings, rebuilt on every worker; ``None``: judge-free metrics.
        env: Names of environment variables every worker gets through Ray's runtime
            environment (the judge's API key variable), masked: their values never travel as
            they are in task arguments, object-store values or logs.

    """

    address: str | None = None
    workers: int | None = None
    batch_size: int = DEFAULT_BATCH_SIZE
    judge: JudgeSettings | None = None
    env: tuple[str, ...] = ()


def check_shippable(session: RunSession, options: RayOptions) -> None:
    """Refuse, before anything starts, a run whose parts cannot go to Ray workers.

    Raises:
        ConfigError: a judged metric with no judge settings (a judge object made in Python:
            name a factory instead).

    """
    judged = any(engine.metric.requires_judge for engine in session.engines)
    if judged and options.judge is None:
        raise ConfigError(
            "this judge cannot go to Ray: a judge object made in Python is not rebuilt on the "
            "workers. Name it by its settings instead: --judge MODEL with --base-url, or a "
            "factory that builds your client on each worker, --judge "
            "openai-client:package.module:factory (agent_eval.score(judge=...) takes the same "
            "string)"
        )


CONNECT_TIMEOUT_S = 10.0
"""Seconds to wait for a cluster's address to accept a connection before saying it does not
(Ray itself retries an unreachable address for minutes)."""


def connect(ray: ModuleType, address: str | None) -> bool:
    """Join the cluster ``address`` names (else ``$RAY_ADDRESS``, else start a local one).

    Returns:
        ``True`` when this call connected; ``False`` when this process had joined a cluster
        already (it is used as it is).

    Raises:
        ConfigError: the address is malformed, nothing accepts a connection there within
            :data:`CONNECT_TIMEOUT_S`, or Ray refuses it (one line naming the address and
            what to give instead).

    """
    if ray.is_initialized():
        return False
    named = address or os.environ.get(RAY_ADDRESS_ENV)
    if not named:
        ray.init(include_dashboard=False, log_to_driver=False)
        return True
    where = f"--engine ray:{address}" if address else f"{RAY_ADDRESS_ENV}={named}"
    _reachable(named, where)
    try:
        ray.init(address=address, log_to_driver=False)
    except (ValueError, ConnectionError, TimeoutError) as exc:
        raise ConfigError(f"{where}: Ray cannot join this cluster: {exc}. {_ADDRESS_HINT}") from exc
    return True


_ADDRESS_HINT = (
    "Give the head node's HOST:PORT (6379 by default), ray://HOST:10001, or auto for a cluster "
    "started on this machine with `ray start --head`; leave the address out for a local one"
)


def _reachable(address: str, where: str) -> None:
    """Refuse at once an address that is malformed or where nothing accepts a connection."""
    if address in ("auto", "local"):  # Ray finds (or says it lacks) a cluster on this machine
        return
    host, _, port = address.removeprefix("ray://").rpartition(":")
    if not host or not port.isdigit():
        raise ConfigError(f"{where}: not a Ray cluster address. {_ADDRESS_HINT}")
    try:
        socket.create_connection((host.strip("[]"), int(port)), timeout=CONNECT_TIMEOUT_S).close()
    except OSError as exc:
        reason = exc.strerror or type(exc).__name__
        raise ConfigError(
            f"{where}: no Ray cluster answers at {host}:{port} ({reason.lower()}). {_ADDRESS_HINT}"
        ) from exc


def _here(ray: ModuleType) -> dict[str, Any]:
    """Actor options placing it on the driver's node when it can (0 CPUs)."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    node = ray.get_runtime_context().get_node_id()
    return {
        "num_cpus": 0,
        "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id=node, soft=True),
    }


class RayExecutor:
    """Scores a session's engines on Ray (see the module docstring).

    Args:
        options: Where and how.

    Attributes:
        authority_state: The authority's last state (spend, peak calls in flight).
        cache_state: The shared cache's last state (hits, misses, entries written).

    """

    def __init__(self, options: RayOptions) -> None:
        self.options = options
        self.authority_state: dict[str, Any] = {}
        self.cache_state: dict[str, Any] = {}

    async def score(self, session: RunSession, traces: TraceSpool) -> list[RunSummary]:
        """Score ``traces`` with every engine of ``session`` on Ray; one summary per engine.

        Raises:
            ConfigError: Ray is missing, or the run cannot go to Ray (:func:`check_shippable`).

        """
        ray = require_ray()
        check_shippable(session, self.options)
        started = connect(ray, self.options.address)
        try:
            return await self._score(ray, session, traces)
        finally:
            if started:
                ray.shutdown()

    async def _score(
        self, ray: ModuleType, session: RunSession, traces: TraceSpool
    ) -> list[RunSummary]:
        cfg, engines = session.cfg, session.engines
        authority = (
            ray.remote(RunAuthority)
            .options(**_here(ray))
            .remote(_limits(session), _budget_copy(session.budget))
        )
        cache = None
        if cfg.cache != "off":
            path = str(cfg.cache_path or default_cache_path())
            cache = ray.remote(SharedCache).options(**_here(ray)).remote(path, session.endpoint)
        workers = self._workers(ray, _spec(session, self.options), authority, cache)
        session.hooks.notice(f"ray: scoring on {len(workers)} worker(s)")
        start = time.perf_counter()
        summaries = [_summary(engine) for engine in engines]
        console = session.hooks.progress
        display = progress_display(console or Console(stderr=True), enabled=console is not None)
        try:
            with display:
                task = display.add_task("scoring", total=len(traces))
                tally = _Tally(engines, summaries, partial(display.advance, task))
                await self._drive(workers, tally, traces)
        finally:
            for store in {id(e.store): e.store for e in engines if e.store is not None}.values():
                store.flush()
            await self._finish(ray, session, authority, cache, workers)
        for summary in summaries:
            summary.wall_seconds = time.perf_counter() - start
        return summaries

    def _workers(self, ray: ModuleType, spec: ScoringSpec, authority: Any, cache: Any) -> list[Any]:
        _ship_by_value(ray, spec)
        count = self.options.workers or max(int(ray.cluster_resources().get("CPU", 1)), 1)
        env, pads = mask(self.options.env)  # Ray logs runtime environments: never the key
        actor = ray.remote(Scorer).options(
            num_cpus=1,
            max_restarts=-1,
            max_task_retries=-1,
            runtime_env={"env_vars": env} if env else None,
        )
        # the spec by value: an argument Ray restarts the actor with must outlive the run's refs
        return [actor.remote(spec, authority, cache, pads) for _ in range(count)]

    async def _drive(self, workers: list[Any], tally: _Tally, traces: TraceSpool) -> None:
        batches = _batches(tally, traces, self.options.batch_size)

        async def work(worker: Any) -> None:
            while (batch := next(batches, None)) is not None:
                scored: ScoredBatch = await worker.score.remote(batch)
                tally.pin(scored.decompositions)  # before the rows: a resume reuses them
                tally.hand_over(scored.rows)
                tally.advance(len(batch))

        await asyncio.gather(*(work(w) for w in workers for _ in range(BATCHES_PER_WORKER)))

    async def _finish(
        self, ray: ModuleType, session: RunSession, authority: Any, cache: Any, workers: list[Any]
    ) -> None:
        """Copy the spend and the cache's new entries to the driver; stop the actors."""
        for worker in workers:
            ray.kill(worker)
        self.authority_state = await authority.state.remote()
        _copy_spend(self.authority_state, session.budget)
        if cache is not None:
            self.cache_state = await cache.state.remote()
            await _fill_local_cache(session, cache, self.cache_state)
            await cache.close.remote()
            ray.kill(cache)
        ray.kill(authority)


def _ship_by_value(ray: ModuleType, spec: ScoringSpec) -> None:
    """Send the code of formatters loaded from files (``--formatter-path``) with the spec.

    Such a module was imported from a path on the driver under a name no worker can import
    (:data:`~agent_eval.formatting._loading.USER_FORMATTERS_PACKAGE`): Ray's cloudpickle pickles
    it by value instead (its classes and functions travel with the spec). A formatter or
    metric from an installed package travels by reference: install it on every worker.
    """
    for engine in spec.engines:
        for part in (engine.formatter, engine.metric):
            name = type(part).__module__
            if name.startswith(f"{USER_FORMATTERS_PACKAGE}.") and name in sys.modules:
                ray.cloudpickle.register_pickle_by_value(sys.modules[name])


def _limits(session: RunSession) -> EndpointLimits:
    cfg = session.cfg
    return EndpointLimits(
        requests_per_minute=cfg.rpm,
        tokens_per_minute=cfg.tpm,
        in_flight=cfg.concurrency,
        lease_s=cfg.timeout * (cfg.transport_retries + 1) + 60,
    )


def _budget_copy(budget: Budget) -> Budget:
    """The run's limits and prices, nothing spent (the authority's own)."""
    return Budget(
        max_tokens=budget.max_tokens,
        max_cost=budget.max_cost,
        model=budget.model,
        prices=budget.prices,
    )


def _spec(session: RunSession, options: RayOptions) -> ScoringSpec:
    cfg = session.cfg
    return ScoringSpec(
        engines=tuple(engine_spec(engine) for engine in session.engines),
        judge=options.judge,
        references=dict(session.references),
        cache_mode=cfg.cache,
        cache_parameters={"mode": cfg.mode},
        endpoint=session.endpoint,
        keep_interrupted=session.keep_interrupted,
    )


def _summary(engine: Engine) -> RunSummary:
    return RunSummary(
        run_id=engine.run_id,
        metric=engine.metric_id,
        formatter=engine.formatter_identity,
        judge_model=engine.judge_model,
        out_dir=engine.store.directory if engine.store else None,
    )


class _Tally:
    """The driver's side of the engines: resumed rows counted, new rows handed over.

    Also the decompositions: the pinned ones of each conversation's units looked up for its
    batch, the ones a batch made stored (by the metric's ``name@version``); and the progress
    (``advance``: conversations done).
    """

    def __init__(
        self,
        engines: Sequence[Engine],
        summaries: Sequence[RunSummary],
        advance: Callable[[int], None],
    ) -> None:
        self.engines = list(zip(engines, summaries, strict=True))
        self.advance = advance
        self._by_row = {
            (e.metric_id, e.formatter_identity, e.repeat): (e, s) for e, s in self.engines
        }
        self._pins = {
            f"{e.metric.name}@{e.metric.version}": e.metric.decompositions
            for e in engines
            if isinstance(e.metric, ClaimMetric)
        }

    def finished(self, trace: AgentTrace) -> tuple[dict[ResultKey, MetricResult], bool]:
        """``trace``'s finished rows (counted as resumed here) and whether any unit is left."""
        done: dict[ResultKey, MetricResult] = {}
        pending = False
        for engine, summary in self.engines:
            try:
                units = engine.metric.units(trace)
            except Exception:  # the worker makes its error row
                pending = True
                continue
            for unit in units:
                key = engine.key(trace, unit.id)
                row = engine.done.get(key)
                if row is None:
                    pending = True
                    continue
                done[key] = row
                summary.add(row, keep=engine.keep_results, resumed=True)
        return done, pending

    def pinned(self, trace: AgentTrace, done: dict[ResultKey, MetricResult]) -> list[Decomposition]:
        """The decompositions pinned for ``trace``'s unfinished answer units (none refreshing)."""
        found: dict[str, Decomposition] = {}
        for engine, _ in self.engines:
            metric = engine.metric
            if not isinstance(metric, ClaimMetric) or engine.judge_model == "none":
                continue
            try:
                units = metric.units(trace)
            except Exception:  # the worker makes its error row
                continue
            for unit in units:
                if engine.key(trace, unit.id) in done:
                    continue
                key = metric.decomposition_key(unit, engine.judge_model)
                atoms = metric.decompositions.get(key)
                if atoms is not None and key not in found:
                    name = f"{metric.name}@{metric.version}"
                    found[key] = Decomposition(key, tuple(atoms), name, engine.judge_model)
        return list(found.values())

    def pin(self, made: Sequence[Decomposition]) -> None:
        """Store the decompositions a batch made in the run's decomposition store."""
        for decomposition in made:
            store = self._pins.get(decomposition.metric)
            if store is not None:
                store.put(
                    decomposition.key,
                    decomposition.atoms,
                    metric=decomposition.metric,
                    judge_model=decomposition.judge_model,
                )

    def hand_over(self, rows: Sequence[MetricResult]) -> None:
        """Each new row to its engine's store, callbacks and summary (as Engine.run does)."""
        for row in rows:
            engine, summary = self._by_row[(row.metric, row.formatter, row.repeat)]
            if engine.store is not None:
                engine.store.add(row)
            for callback in engine.on_result:
                callback(row)
            summary.add(row, keep=engine.keep_results)
        for store in {id(e.store): e.store for e, _ in self.engines if e.store}.values():
            store.flush_due()


def _batches(tally: _Tally, traces: TraceSpool, size: int) -> Iterator[list[BatchItem]]:
    """Batches of ``size`` conversations with units left (finished ones counted, not sent)."""
    batch: list[BatchItem] = []
    for trace in traces:
        done, pending = tally.finished(trace)
        if not pending:
            tally.advance(1)
            continue
        batch.append(BatchItem(trace, done, tuple(tally.pinned(trace, done))))
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch


def _copy_spend(state: dict[str, Any], budget: Budget) -> None:
    """The authority's spend onto the session's budget (the summary's budget line)."""
    budget.spent_tokens = int(state["spent_tokens"])
    budget.spent_cost = float(state["spent_cost"])
    budget.exhausted = bool(state["exhausted"])
    budget.refused_calls = int(state["refused_calls"])


async def _fill_local_cache(session: RunSession, cache: Any, state: dict[str, Any]) -> None:
    """Copy what the cluster answered into the user's local cache; count the hits."""
    stack = session.stack
    if stack is None or stack.cached is None:
        return
    cached = stack.cached
    cached.hits, cached.misses = int(state["hits"]), int(state["misses"])
    cached.other_endpoint_hits = int(state["other_endpoint_hits"])
    cached.other_endpoints = Counter(state["other_endpoints"])
    cached.unknown_endpoint_hits = int(state["unknown_endpoint_hits"])
    local = stack.cache  # the actor's file is this one when it ran here: copied all the same
    if local is None or not state["written"]:
        return
    start = 0
    while entries := await cache.written.remote(start):
        for key, entry in entries:
            local.put(key, entry)
        start += len(entries)
