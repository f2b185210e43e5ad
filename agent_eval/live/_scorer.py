"""Closed conversations scored into the results store, with optional evaluation events.

The receiver hands each closed conversation (an :class:`~agent_eval._trace.AgentTrace` with its
revision and note) to :meth:`LiveScorer.submit`; ``concurrency`` worker tasks score them with
the :class:`~agent_eval.run._engine.Engine` (the same code path as ``agent-eval score``: the
metric, formatter, judge stack and failure rows), store each result as it completes (a
conversation's rows are committed together before it counts as scored) and emit its
``gen_ai.evaluation.result`` event. A judge failure is an ``error`` row, never a lost
conversation; with a ``directory`` it also keeps each conversation and its rendering there for
``agent-eval report``; the backlog (queued plus in flight) is what the receiver's 429 is about.

With several metrics (one engine each, as ``agent-eval score`` runs them) a conversation gets
each metric's rows, in the engines' order, committed together. A conversation the receiver's
:class:`~agent_eval.live._selection.Selection` leaves out (``Job.left``) is not judged: each
metric gets one ``skipped`` row with the reason (``sampled_out``, ``filtered_out``) and no
evaluation event is emitted for it (it is no evaluation). :attr:`LiveScorer.conversations`
counts each job once by outcome, so that ``received == scored + errored + skipped + pending +
unscored`` (:meth:`LiveScorer.tally`).

A conversation whose judge calls a shutdown cuts short leaves no row (the receiver writes it to
``unscored.jsonl``), but what those calls sent is kept: the engine's ``interrupted`` rows
(:attr:`~agent_eval.run._engine.Engine.on_interrupted`) are in :attr:`LiveScorer.cut_short`,
and by job in :meth:`LiveScorer.spent`; :meth:`LiveScorer.was_started` tells a conversation
cut short while being scored from one still queued.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections import Counter
from collections.abc import Callable, Sequence
from contextvars import ContextVar
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.live._selection import Left
from agent_eval.metrics._units import Unit
from agent_eval.otel._events import EvaluationEvents
from agent_eval.otel._targets import conversation_target
from agent_eval.run._artifacts import append_conversation, append_rendering, write_units
from agent_eval.run._engine import Engine
from agent_eval.run._store import ResultStore
from agent_eval.run._turns import write_turns

__all__ = ["Job", "LiveScorer"]

_log = logging.getLogger(__name__)
_JOB: ContextVar[int | None] = ContextVar("agent_eval_live_job", default=None)
"""``id`` of the job the current worker task is scoring (whose calls an interrupt may cut)."""


@dataclass(frozen=True)
class Job:
    """One conversation to score.

    Attributes:
        trace: The assembled conversation.
        revision: 0 the first time, n for its n-th re-score.
        note: Why it is re-scored (``None`` the first time).
        units: Per engine (in the scorer's order), the units to score when not all of them (a
            restarted ``serve`` leaves out those whose rows are stored;
            :mod:`agent_eval.live._durable`); ``None``: every unit of every engine.
        left: Why it is not judged (the receiver's selection left it out), else ``None``.

    """

    trace: AgentTrace
    revision: int = 0
    note: str | None = None
    units: tuple[tuple[Unit, ...] | None, ...] | None = None
    left: Left | None = None


class LiveScorer:
    """Scores submitted conversations with ``concurrency`` workers.

    The scorer takes the engine's ``on_interrupted`` hook (for :attr:`cut_short`).

    Args:
        engine: Metric, formatter, judge and run id (its ``score`` makes each row); or one
            engine per metric, all of the same run, each scoring every conversation.
        store: Where rows go; ``None`` keeps them in ``results`` only.
        events: Emits each row's evaluation event, when given.
        concurrency: Conversations scored at once (>= 1).
        directory: When given, each scored conversation (every revision) is appended to
            ``DIR/conversations.jsonl`` and the text the judge saw to ``DIR/renderings.jsonl``
            (for a turn metric also to ``units.jsonl`` and ``turns.jsonl``), as
            ``agent-eval score`` writes them, for ``agent-eval report`` and ``agent-eval rag``.

    """

    def __init__(
        self,
        engine: Engine | Sequence[Engine],
        store: ResultStore | None,
        events: EvaluationEvents | None = None,
        concurrency: int = 4,
        directory: Path | None = None,
    ) -> None:
        self.engines = [engine] if isinstance(engine, Engine) else list(engine)
        if not self.engines:
            raise ValueError("LiveScorer needs at least one engine")
        self.engine = self.engines[0]
        """The first engine (its run id, judge model)."""
        self.store, self.events = store, events
        self.directory = directory
        self.concurrency = max(1, concurrency)
        self.queue: asyncio.Queue[Job] = asyncio.Queue()
        self.in_flight = 0
        self.statuses: Counter[str] = Counter()
        self.rescored = 0
        self.conversations: Counter[str] = Counter()
        """Jobs by outcome: ``received``, ``scored``, ``errored``, ``skipped:REASON``,
        ``unscored`` (:meth:`tally`)."""
        self.results: list[MetricResult] = []
        self.keep_results = store is None
        self._workers: list[asyncio.Task[None]] = []
        self._running: dict[int, Job] = {}
        self.cut_short: list[MetricResult] = []
        """The ``interrupted`` rows (never stored) of units a shutdown cut short after their
        judge calls had sent a request: requests, tokens read, unanswered requests."""
        self._spent: dict[int, list[MetricResult]] = {}
        self._stopped_in_flight: set[int] = set()
        """``id`` of the jobs :meth:`drain` cancelled while they were being scored."""
        for each in self.engines:
            each.on_interrupted = self._interrupted
        self.on_committed: Callable[[Job], None] | None = None
        """Called with each job once its rows are committed (the acknowledgement log's
        compaction, :mod:`agent_eval.live._durable`)."""

    @property
    def backlog(self) -> int:
        """Conversations queued or being scored."""
        return self.queue.qsize() + self.in_flight

    def start(self) -> None:
        """Start the workers (inside the running loop)."""
        self._workers = [asyncio.create_task(self._work()) for _ in range(self.concurrency)]

    def submit(self, job: Job) -> None:
        """Queue ``job`` (never blocks; the receiver bounds the backlog)."""
        self.conversations["received"] += 1
        self.queue.put_nowait(job)

    def spent(self, job: Job) -> list[MetricResult]:
        """The ``interrupted`` rows of ``job``'s units cut short (empty when none was)."""
        return list(self._spent.get(id(job), ()))

    def was_started(self, job: Job) -> bool:
        """Whether ``job``, returned by :meth:`drain`, was being scored at the deadline.

        Else it was still queued: no judge call was made for it.
        """
        return id(job) in self._stopped_in_flight

    def _interrupted(self, row: MetricResult) -> None:
        self.cut_short.append(row)
        job = _JOB.get()
        if job is not None:
            self._spent.setdefault(job, []).append(row)

    async def _work(self) -> None:
        while True:
            job = await self.queue.get()
            self.in_flight += 1
            self._running[id(job)] = job
            _JOB.set(id(job))
            try:
                await self._score(job)
            except Exception:  # a store failure must not stop the other workers
                _log.exception("scoring conversation %s failed", job.trace.conversation_id)
                self.statuses["internal_error"] += 1
                self.conversations["errored"] += 1
            finally:  # the rendering is written: kept, it would grow with the process's life
                for engine in self.engines:
                    engine.renderings.forget(job.trace, engine.formatter)
                self._running.pop(id(job), None)
                self.in_flight -= 1
                self.queue.task_done()

    async def _score(self, job: Job) -> None:
        if job.left is not None:  # never sent: a skipped row per metric says why
            rows = [e.skipped(job.trace, job.left.reason, job.left.message) for e in self.engines]
        else:
            rows = []
            for i, engine in enumerate(self.engines):
                units = None if job.units is None else job.units[i]
                rows += await engine.score_all(job.trace, units)
            if self.directory is not None:  # what the report lays out (the formatter is pure)
                self._write_views(job)
        for result in rows:  # one row per unit and metric
            self._keep(job, result, emit=job.left is None)
        if self.store is not None:  # committed before the conversation counts as scored
            self.store.flush()
        self.conversations[_outcome(rows)] += 1
        if self.on_committed is not None:
            self.on_committed(job)

    def _write_views(self, job: Job) -> None:
        assert self.directory is not None
        append_conversation(self.directory, job.trace)
        if any(e.metric.unit_kind == "answer" for e in self.engines):  # as score: contexts, turns
            write_units(self.directory, [job.trace], append=True)
            write_turns(self.directory, [job.trace], append=True)
        written: set[str] = set()
        for engine in self.engines:
            formatter = engine.formatter
            if not engine.metric.uses_formatter or formatter.identity in written:
                continue
            text = None
            with contextlib.suppress(Exception):  # a formatter_error row says why
                text = engine.renderings.render(job.trace, formatter)
            if text is not None:
                written.add(formatter.identity)
                append_rendering(
                    self.directory, job.trace.conversation_id, formatter.identity, text
                )

    def _keep(self, job: Job, result: MetricResult, *, emit: bool = True) -> None:
        if job.revision or job.note:
            result = result.model_copy(update={"revision": job.revision, "note": job.note})
        if self.store is not None:
            self.store.add(result)
        if self.keep_results:
            self.results.append(result)
        self.statuses[result.status] += 1
        self.rescored += job.revision > 0
        if self.events is not None and emit:
            target = conversation_target(job.trace)
            cid = job.trace.conversation_id
            if target is not None:
                self.events.targets[cid] = target
            self.events.emit(result, job.note)
            self.events.targets.pop(cid, None)  # read by emit only: a long serve keeps none

    async def drain(self, timeout: float | None) -> list[Job]:
        """Wait for the backlog to be scored; returns the jobs not started within ``timeout``.

        The workers are stopped afterwards; jobs still in flight at the deadline are
        cancelled and returned too (their rows were not written), first;
        :meth:`was_started` tells them from the queued ones.
        """
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(self.queue.join(), timeout)
        left = list(self._running.values())
        self._stopped_in_flight.update(id(job) for job in left)
        while not self.queue.empty():
            left.append(self.queue.get_nowait())
            self.queue.task_done()
        for worker in self._workers:
            worker.cancel()
        await asyncio.gather(*self._workers, return_exceptions=True)
        self.conversations["unscored"] += len(left)
        return left

    def tally(self) -> dict[str, Any]:
        """Conversations (jobs: each revision counts) by outcome; the parts add up.

        Returns:
            ``{"received", "scored", "errored", "skipped": {REASON: n}, "pending",
            "unscored"}``: ``received == scored + errored + sum(skipped) + pending +
            unscored``. ``scored``: some row ``ok`` and none ``error``; ``errored``: some row
            ``error`` (or the scoring itself failed); ``skipped``: every row skipped, by the
            first row's reason (``sampled_out``, ``filtered_out``, ``no_answer``...);
            ``pending``: queued or being scored; ``unscored``: written to ``unscored.jsonl``
            at shutdown.
        """
        counts = self.conversations
        skipped = {
            key.removeprefix("skipped:"): n
            for key, n in counts.items()
            if key.startswith("skipped:")
        }
        return {
            "received": counts["received"],
            "scored": counts["scored"],
            "errored": counts["errored"],
            "skipped": skipped,
            "pending": self.backlog,
            "unscored": counts["unscored"],
        }


def _outcome(rows: Sequence[MetricResult]) -> str:
    """A job's outcome key in :attr:`LiveScorer.conversations` (see :meth:`LiveScorer.tally`)."""
    if any(r.status == "error" for r in rows):
        return "errored"
    if any(r.status == "ok" for r in rows):
        return "scored"
    return f"skipped:{rows[0].error_type}" if rows else "skipped:no_units"
