"""The scoring engine: one metric, formatter and judge over a stream of AgentTraces.

Conversations are scored concurrently (an ``asyncio.Semaphore`` bounds how many are in
flight, default 16); the judge calls of one conversation run in order inside its task. Input
is consumed lazily, at most ``concurrency`` conversations ahead, so memory stays bounded.

Whatever happens, every conversation ends as exactly one
:class:`~agent_eval.result.MetricResult`: ``ok``, ``skipped`` (``missing_reference``,
``context_overflow``) or ``error`` (``invalid_judge_output``, ``judge_unavailable``,
``formatter_error``, ``internal_error``). Each result is written to the store as it completes.

Hooks for resuming and for wrappers: ``done`` holds results finished by an earlier run (their
conversations are counted, not re-judged, not re-written); ``on_result`` callbacks see every
new result after it is stored. Judge wrappers (cache, rate limits) wrap the ``judge`` itself.
"""

from __future__ import annotations

import asyncio
import time
import uuid
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_eval.errors import JudgeError
from agent_eval.formatting.base import Formatter
from agent_eval.formatting.fingerprint import fingerprint
from agent_eval.judges.base import Judge
from agent_eval.metrics.base import CallTally, Metric, MetricInput
from agent_eval.result import MetricResult
from agent_eval.run.outcomes import build_sample, failure, judge_failure, ok, skip_fields
from agent_eval.run.store import ResultKey, ResultStore
from agent_eval.run.summary import RunSummary
from agent_eval.trace import AgentTrace

__all__ = [
    "DEFAULT_CONCURRENCY",
    "Engine",
    "build_sample",
    "new_run_id",
    "skip_fields",
    "utc_now",
]

DEFAULT_CONCURRENCY = 16


def new_run_id() -> str:
    """A fresh run id: UTC timestamp plus 8 random hex, e.g. ``20261130T051500Z-1a2b3c4d``."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds."""
    return datetime.now(UTC).isoformat(timespec="milliseconds")


class Engine:
    """Scores conversations with one metric, formatter and judge.

    Args:
        metric: The metric (e.g. ``GoalAccuracy(with_reference=True)``).
        formatter: Renders each AgentTrace for the judge.
        judge: The judge, possibly wrapped (cache, rate limit).
        run_id: The run's id; a new one when ``None``.
        store: Where results are written as they complete; ``None`` keeps them in memory only.
        concurrency: Conversations in flight at once (>= 1).
        max_context_tokens: Skip conversations whose largest prompt exceeds this many o200k
            tokens (``context_overflow``); ``None`` never skips.
        references: Reference goals by conversation id; they take precedence over
            ``AgentTrace.reference``. Used only when the metric uses references.
        repeat: The repeat index stored in each result (stability runs).
        done: Results already finished by an earlier run, by key: counted, not re-judged.
        on_result: Called with every new result after it is stored.
        progress: Show a rich progress bar on ``console`` (stderr by default).
        keep_results: Keep every result on the summary (turn off for very large runs).
        formatter_fingerprint: The formatter's fingerprint, computed when ``None``.

    Raises:
        ValueError: ``concurrency`` is below 1.

    """

    def __init__(
        self,
        *,
        metric: Metric,
        formatter: Formatter[Any],
        judge: Judge,
        run_id: str | None = None,
        store: ResultStore | None = None,
        concurrency: int = DEFAULT_CONCURRENCY,
        max_context_tokens: int | None = None,
        references: Mapping[str, str] | None = None,
        repeat: int = 0,
        done: Mapping[ResultKey, MetricResult] | None = None,
        on_result: Iterable[Callable[[MetricResult], None]] = (),
        progress: bool = False,
        console: Console | None = None,
        keep_results: bool = True,
        formatter_fingerprint: str | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        self.metric, self.formatter, self.judge = metric, formatter, judge
        self.run_id = run_id or new_run_id()
        self.store, self.concurrency = store, concurrency
        self.max_context_tokens = max_context_tokens
        self.references = dict(references or {})
        self.repeat, self.done = repeat, dict(done or {})
        self.on_result = tuple(on_result)
        self.progress, self.keep_results = progress, keep_results
        self.console = console or Console(stderr=True)
        self.fingerprint = formatter_fingerprint or fingerprint(formatter)

    def key(self, trace: AgentTrace) -> ResultKey:
        """The result key this run gives ``trace``."""
        return (
            self.run_id,
            trace.conversation_id,
            self.metric.id,
            self.formatter.identity,
            self.judge.model,
            self.repeat,
            0,  # revision: a batch run scores each conversation once
        )

    def identity(self) -> dict[str, Any]:
        """The run's configuration identity for the ``runs`` table (JSON-able, no secrets)."""
        return {
            "metric": self.metric.id,
            "uses_reference": self.metric.uses_reference,
            "formatter": self.formatter.identity,
            "formatter_fingerprint": self.fingerprint,
            "prompt_sha256": self.metric.prompt_sha256,
            "judge_model": self.judge.model,
            "concurrency": self.concurrency,
            "max_context_tokens": self.max_context_tokens,
            "repeat": self.repeat,
        }

    async def run(self, traces: Iterable[AgentTrace], total: int | None = None) -> RunSummary:
        """Score every trace of ``traces``; returns the summary once all have a result.

        Args:
            traces: The conversations (consumed lazily).
            total: How many there are, for the progress bar, when known.

        """
        summary = RunSummary(
            run_id=self.run_id,
            metric=self.metric.id,
            formatter=self.formatter.identity,
            judge_model=self.judge.model,
            out_dir=self.store.directory if self.store else None,
        )
        start = time.perf_counter()
        with self._progress(total) as bar:
            task = bar.add_task("scoring", total=total)
            try:
                await self._feed(traces, summary, lambda: bar.advance(task))
            except ExceptionGroup as group:  # a store failure ends the run: raise it as itself
                raise _first_leaf(group) from None
        summary.wall_seconds = time.perf_counter() - start
        return summary

    async def _feed(
        self, traces: Iterable[AgentTrace], summary: RunSummary, advance: Callable[[], None]
    ) -> None:
        slots = asyncio.Semaphore(self.concurrency)
        async with asyncio.TaskGroup() as group:
            for trace in traces:
                previous = self.done.get(self.key(trace))
                if previous is not None:
                    summary.add(previous, keep=self.keep_results, resumed=True)
                    advance()
                    continue
                await slots.acquire()
                group.create_task(self._one(trace, slots, summary, advance))

    def _progress(self, total: int | None) -> Progress:
        return Progress(
            TextColumn("[bold]{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TimeElapsedColumn(),
            console=self.console,
            disable=not self.progress,
            transient=False,
        )

    async def _one(
        self,
        trace: AgentTrace,
        slots: asyncio.Semaphore,
        summary: RunSummary,
        advance: Callable[[], None],
    ) -> None:
        try:
            result = await self.score(trace)
            if self.store is not None:
                self.store.add(result)
            summary.add(result, keep=self.keep_results)
            for callback in self.on_result:
                callback(result)
            advance()
        finally:
            slots.release()

    async def score(self, trace: AgentTrace) -> MetricResult:
        """Score one conversation; never raises for a judge, formatter or metric failure."""
        started_at = utc_now()
        tally = CallTally()
        fields: dict[str, Any] = {}
        try:
            sample = self._sample(trace)
        except Exception as exc:  # a formatter bug must cost one row, not the run
            return self._row(trace, started_at, tally, failure("formatter_error", exc))
        fields["reference"] = sample.reference
        skip = self._skip(sample)
        if skip is not None:
            return self._row(trace, started_at, tally, {**fields, **skip})
        try:
            outcome = await self.metric.evaluate(sample, self.judge, tally)
        except JudgeError as exc:
            failed = {**fields, **tally.details, **judge_failure(exc)}
            return self._row(trace, started_at, tally, failed)
        except Exception as exc:  # recorded as a row with its type, never lost
            return self._row(trace, started_at, tally, {**fields, **failure("internal_error", exc)})
        return self._row(trace, started_at, tally, {**fields, **ok(outcome)})

    def _sample(self, trace: AgentTrace) -> MetricInput:
        return build_sample(trace, self.metric, self.formatter, self.references)

    def _skip(self, sample: MetricInput) -> dict[str, Any] | None:
        return skip_fields(self.metric, sample, self.max_context_tokens)

    def _row(
        self, trace: AgentTrace, started_at: str, tally: CallTally, fields: dict[str, Any]
    ) -> MetricResult:
        return MetricResult(
            run_id=self.run_id,
            conversation_id=trace.conversation_id,
            trace_ids=trace.trace_ids,
            metric=self.metric.id,
            formatter=self.formatter.identity,
            formatter_fingerprint=self.fingerprint,
            prompt_sha256=self.metric.prompt_sha256,
            judge_model=self.judge.model,
            repeat=self.repeat,
            input_tokens=tally.input_tokens,
            output_tokens=tally.output_tokens,
            latency_ms=round(tally.latency_ms, 3),
            attempts=tally.attempts,
            started_at=started_at,
            **fields,
        )


def _first_leaf(group: BaseExceptionGroup[Exception]) -> Exception:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
