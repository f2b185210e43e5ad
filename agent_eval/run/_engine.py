"""The scoring engine: one metric, formatter and judge over a stream of AgentTraces.

Conversations are scored concurrently by ``concurrency`` worker tasks (default 16), each
taking the next conversation from the input as soon as it has finished one; the units of one
conversation (the conversation itself, or each turn's answer:
:meth:`Metric.units <agent_eval.metrics._base.Metric.units>`) and their judge calls run in order
inside its worker, from one rendering. Input is consumed lazily, at most
``concurrency`` conversations ahead, so memory stays bounded.

Whatever happens, every unit ends as exactly one :class:`~agent_eval._result.MetricResult`:
``ok``, ``skipped`` (``missing_reference``, ``no_answer``, ``context_overflow``...) or ``error``
(``invalid_judge_output``, ``judge_unavailable``, ``formatter_error``, ``internal_error``).
Each result is handed to the store as it completes; the store commits them in batches
(:mod:`agent_eval.run._store`), and the engine commits what is queued every
``store.flush_seconds`` while calls are in flight and when the run ends, also when it is
interrupted or fails. Judge-free metrics run with no judge.

With ``keep_interrupted`` (``score``), a unit whose judge calls are cut short by an interrupt
(Ctrl-C, SIGTERM: its task is cancelled) and had sent requests is kept as a row skipped with
reason ``interrupted``, carrying what they spent (:mod:`agent_eval.judges._inflight`), so that
the run's totals count every request the endpoint received; ``--resume`` scores it again.

While runs are in flight, the objects that existed before the first one began (imported
modules, the traces, the caller's data) are left out of Python's cyclic garbage collection
(:func:`gc.freeze`, undone with :func:`gc.unfreeze` when the last run ends): at high
concurrency the client is CPU-bound, and full collections walking that heap over and over
cost it a share of every judge call (issue 15). Nothing is lost: they are collected again
once the runs are over.

Hooks for resuming and for wrappers: ``done`` holds results finished by an earlier run (their
units are counted, not re-judged, not re-written); ``on_result`` callbacks see every new result
after it is handed to the store (committed with its batch). Judge wrappers (cache, rate limits)
wrap the ``judge`` itself.
"""

from __future__ import annotations

import asyncio
import contextvars
import gc
import logging
import threading
import time
import uuid
from collections.abc import AsyncIterator, Callable, Iterable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import UTC, datetime
from functools import partial
from typing import Any

from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.errors import BudgetExhausted, InputError, JudgeError, OutputError
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._fingerprint import fingerprint
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import CallTally, CountingJudge, Metric, MetricInput, UnitSkipped
from agent_eval.metrics._units import Unit
from agent_eval.run._budget import Budget
from agent_eval.run._outcomes import (
    NO_FORMATTER,
    budget_skip,
    build_sample,
    build_samples,
    failure,
    interrupted_skip,
    judge_failure,
    ok,
    skip_fields,
)
from agent_eval.run._rendering import RenderCache
from agent_eval.run._store import ResultKey, ResultStore
from agent_eval.run._summary import RunSummary
from agent_eval.steering import unit_flags
from agent_eval.steering._cache import cached_flags

__all__ = [
    "DEFAULT_CONCURRENCY",
    "Engine",
    "build_sample",
    "new_run_id",
    "progress_display",
    "skip_fields",
    "utc_now",
]

DEFAULT_CONCURRENCY = 16

_log = logging.getLogger(__name__)


def new_run_id() -> str:
    """A fresh run id: UTC timestamp plus 8 random hex, e.g. ``20261130T051500Z-1a2b3c4d``."""
    return f"{datetime.now(UTC):%Y%m%dT%H%M%SZ}-{uuid.uuid4().hex[:8]}"


def utc_now() -> str:
    """The current time as ISO-8601 UTC with milliseconds: ``2026-12-01T05:15:00.123+00:00``.

    The same text as ``datetime.now(UTC).isoformat(timespec="milliseconds")`` (see
    :func:`iso_milliseconds`); called twice per unit, where ``isoformat`` cost ~13 k
    instructions a call.
    """
    return iso_milliseconds(time.time_ns())


def iso_milliseconds(nanoseconds: int) -> str:
    """``nanoseconds`` since the Unix epoch as ISO-8601 UTC text with milliseconds.

    Truncated, as ``datetime.now(UTC).isoformat(timespec="milliseconds")`` truncates the
    system clock to microseconds and then to milliseconds; the date and time of a second are
    formatted once (``time.strftime``) and kept for the next calls.
    """
    second, millisecond = divmod(nanoseconds // 1_000_000, 1000)
    text = _SECOND_TEXT.get(second)
    if text is None:
        if len(_SECOND_TEXT) >= 8:
            _SECOND_TEXT.clear()
        text = _SECOND_TEXT[second] = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(second))
    return f"{text}.{millisecond:03d}+00:00"


_SECOND_TEXT: dict[int, str] = {}
"""The text of the last few seconds formatted (ints and strings: no object the cyclic garbage
collector tracks is made or freed, so a process's :func:`gc.freeze` count stays as it is)."""


class Engine:
    """Scores conversations with one metric, formatter and judge.

    Args:
        metric: The metric (e.g. ``GoalAccuracy(with_reference=True)``).
        formatter: Renders each AgentTrace for the judge.
        judge: The judge, possibly wrapped (cache, rate limit); ``None`` only for judge-free
            metrics (``metric.requires_judge`` false).
        run_id: The run's id; a new one when ``None``.
        store: Where results are written as they complete (in batches, all committed when
            :meth:`run` returns or raises); ``None`` keeps them in memory only.
        concurrency: Conversations in flight at once (>= 1).
        max_context_tokens: Skip conversations whose largest prompt exceeds this many o200k
            tokens (``context_overflow``); ``None`` never skips.
        references: Reference goals by conversation id; they take precedence over
            ``AgentTrace.reference``. Used only when the metric uses references.
        repeat: The repeat index stored in each result (stability runs).
        done: Results already finished by an earlier run, by key: counted, not re-judged.
        on_result: Called with every new result after it is handed to the store.
        progress: Show a rich progress bar on ``console`` (stderr by default).
        keep_results: Keep every result on the summary (turn off for very large runs).
        formatter_fingerprint: The formatter's fingerprint, computed when ``None``.
        budget: The run's budget (shared with the :class:`~agent_eval.run._budget.BudgetedJudge`
            inside ``judge``): once a call is refused, every unit not yet judged is skipped
            with reason ``budget`` and nothing more is scheduled.
        renderings: Where renderings are kept, shared with whatever else renders the same
            traces in the run (the plan, ``renderings.jsonl``, other metrics' engines), so each
            conversation is rendered once; a cache of its own when ``None``.
        keep_interrupted: Keep a unit an interrupt cut short, once its calls had sent a
            request, as a row skipped ``interrupted`` with their usage (for a run that
            ``--resume`` scores again); off, such a unit leaves no row (``serve`` writes its
            conversation to ``unscored.jsonl`` instead).
        on_interrupted: Called with that ``interrupted`` row (stored or not), so that a
            caller keeping no row still has the spend (``serve``: written with the conversation
            to ``unscored.jsonl``). Set after construction too (the attribute of that name).

    Raises:
        ValueError: ``concurrency`` is below 1, or a judged metric was given no judge.

    """

    def __init__(
        self,
        *,
        metric: Metric,
        formatter: Formatter[Any],
        judge: Judge | None,
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
        budget: Budget | None = None,
        renderings: RenderCache | None = None,
        keep_interrupted: bool = False,
        on_interrupted: Callable[[MetricResult], None] | None = None,
    ) -> None:
        if concurrency < 1:
            raise ValueError(f"concurrency must be at least 1, got {concurrency}")
        if judge is None and metric.requires_judge:
            raise ValueError(f"{metric.id} needs a judge")
        self.metric, self.formatter, self.judge = metric, formatter, judge
        self.metric_id = metric.id  # on every key and row: computed once (params are frozen)
        self.run_id = run_id or new_run_id()
        self.store, self.concurrency = store, concurrency
        self.max_context_tokens = max_context_tokens
        self.references = dict(references or {})
        self.repeat, self.done = repeat, dict(done or {})
        self.on_result = tuple(on_result)
        self.progress, self.keep_results = progress, keep_results
        self.console = console or Console(stderr=True)
        self.budget = budget
        self.renderings = renderings if renderings is not None else RenderCache()
        self.keep_interrupted = keep_interrupted
        self.on_interrupted = on_interrupted
        if metric.uses_formatter:
            self.fingerprint = formatter_fingerprint or fingerprint(formatter)
            self.formatter_identity = formatter.identity
        else:
            self.fingerprint, self.formatter_identity = "", NO_FORMATTER
        self.judge_model = judge.model if judge is not None and metric.requires_judge else "none"

    def key(self, trace: AgentTrace, unit_id: str = "conversation") -> ResultKey:
        """The result key this run gives unit ``unit_id`` of ``trace``."""
        return (
            self.run_id,
            trace.conversation_id,
            unit_id,
            self.metric_id,
            self.formatter_identity,
            self.judge_model,
            self.repeat,
            0,  # revision: a batch run scores each conversation once
        )

    def identity(self) -> dict[str, Any]:
        """The run's configuration identity for the ``runs`` table (JSON-able, no secrets)."""
        return {
            "metric": self.metric_id,
            "uses_reference": self.metric.uses_reference,
            "formatter": self.formatter_identity,
            "formatter_fingerprint": self.fingerprint,
            "prompt_sha256": self.metric.prompt_sha256,
            "judge_model": self.judge_model,
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
            metric=self.metric_id,
            formatter=self.formatter_identity,
            judge_model=self.judge_model,
            out_dir=self.store.directory if self.store else None,
        )
        start = time.perf_counter()
        with _older_objects_frozen(), self._progress(total) as bar:
            advance = _no_progress
            if self.progress:  # a disabled rich bar still costs a lock and a lookup per advance
                task = bar.add_task("scoring", total=total)
                advance = partial(bar.advance, task)
            try:
                await self._feed(traces, summary, advance)
            except ExceptionGroup as group:  # a store failure ends the run: raise it as itself
                self._keep_finished()
                raise _first_leaf(group) from None
            except BaseException:  # interrupted: what finished is kept, --resume redoes the rest
                self._keep_finished()
                raise
            if self.store is not None:
                self.store.flush()
        summary.wall_seconds = time.perf_counter() - start
        return summary

    async def _feed(
        self, traces: Iterable[AgentTrace], summary: RunSummary, advance: Callable[[], None]
    ) -> None:
        """Score ``traces`` with ``concurrency`` workers sharing one iterator over them.

        Each worker takes the next conversation (in input order) as soon as it has finished
        one. A worker starts its next conversation in the same step as it hands over the last
        one's rows, so the next conversation's first request goes out at once, not after
        the other replies that arrived in the same burst (issue 15: a feeder task woken by a
        semaphore, then a new task, cost two turns of the event loop's queue per hand-over).
        """
        scorable = self._scorable(iter(traces), summary, advance)
        # the input is advanced in one context, whichever worker asks: a generator that holds
        # a context variable across its yields (an OpenTelemetry span around them) resets it
        # in the context that set it
        take = partial(contextvars.copy_context().run, next, scorable, None)
        async with asyncio.TaskGroup() as group:
            flusher = group.create_task(self._flush_on_time()) if self.store else None
            workers = [
                group.create_task(self._work(take, summary, advance))
                for _ in range(self.concurrency)
            ]
            if flusher is not None:
                await asyncio.wait(workers)  # a worker's error is the group's to raise
                flusher.cancel()

    def _scorable(
        self, traces: Iterator[AgentTrace], summary: RunSummary, advance: Callable[[], None]
    ) -> Iterator[tuple[AgentTrace, list[Unit] | None]]:
        """Each trace of ``traces`` with its pending units; those with none are counted here."""
        for trace in traces:
            units = self._pending(trace, summary)
            if units == []:
                advance()
                continue
            yield trace, units

    async def _work(
        self,
        take: Callable[[], tuple[AgentTrace, list[Unit] | None] | None],
        summary: RunSummary,
        advance: Callable[[], None],
    ) -> None:
        """One worker: score the conversation ``take`` gives next until it gives ``None``."""
        while (scorable := take()) is not None:
            trace, units = scorable
            async for result in self._score_units(trace, units):
                self._hand_over(result)
                summary.add(result, keep=self.keep_results)
            advance()

    def _keep_finished(self) -> None:
        """Commit the finished results of a run that is ending with an error (never raises)."""
        if self.store is None:
            return
        try:
            self.store.flush()
        except OutputError as exc:  # the error on its way out says why the run ended
            _log.warning("%s; --resume scores these %d result(s) again", exc, self.store.pending)

    async def _flush_on_time(self) -> None:
        """Commit the store's queued rows once due, while judge calls keep it from filling."""
        assert self.store is not None
        while True:
            await asyncio.sleep(self.store.flush_seconds)
            self.store.flush_due()

    def _pending(self, trace: AgentTrace, summary: RunSummary) -> list[Unit] | None:
        """``trace``'s units not finished by an earlier run (the finished ones are counted).

        ``None`` when the metric cannot list the units (its error row is made in the task).
        """
        try:
            units = self.metric.units(trace)
        except Exception:
            return None
        pending = []
        for unit in units:
            previous = self.done.get(self.key(trace, unit.id))
            if previous is None:
                pending.append(unit)
            else:
                summary.add(previous, keep=self.keep_results, resumed=True)
        return pending

    def _progress(self, total: int | None) -> Progress:
        return progress_display(self.console, enabled=self.progress)

    def _hand_over(self, result: MetricResult) -> None:
        """Give a new result to the store and to the ``on_result`` callbacks."""
        if self.store is not None:
            self.store.add(result)
        for callback in self.on_result:
            callback(result)

    async def score(self, trace: AgentTrace) -> MetricResult:
        """Score the first unit of one conversation (for conversation metrics, the only one).

        Never raises for a judge, formatter or metric failure; see :meth:`score_all`.
        """
        return (await self.score_all(trace))[0]

    async def score_all(
        self, trace: AgentTrace, units: Sequence[Unit] | None = None
    ) -> list[MetricResult]:
        """Score every unit of one conversation (or ``units`` of it), in order.

        One result per unit; never raises.
        """
        chosen = None if units is None else list(units)
        return [result async for result in self._score_units(trace, chosen)]

    def skipped(self, trace: AgentTrace, reason: str, message: str) -> MetricResult:
        """The ``skipped`` row of a conversation left unjudged on purpose (no judge call).

        One conversation-level row (``unit_id`` ``conversation``) whatever the metric's unit
        kind, with ``error_type`` ``reason`` (e.g. ``serve``'s ``sampled_out``) and
        ``error_message`` ``message``; handed to neither the store nor ``on_result``.
        """
        skip = {"status": "skipped", "error_type": reason, "error_message": message}
        return self._row(trace, Unit(id="conversation"), utc_now(), CallTally(), skip)

    async def _score_units(
        self, trace: AgentTrace, units: list[Unit] | None
    ) -> AsyncIterator[MetricResult]:
        """Results of ``units`` of ``trace`` (all of them when ``None``), in order."""
        started_at = utc_now()
        try:
            units = self.metric.units(trace) if units is None else units
        except Exception as exc:  # a metric bug costs one conversation-level row
            yield self._row(
                trace,
                Unit(id="conversation"),
                started_at,
                CallTally(),
                failure("internal_error", exc),
            )
            return
        if self._over_budget():  # nothing more is sent: no rendering either
            for unit in units:
                skip = budget_skip("the run's budget was spent before this unit")
                yield self._row(trace, unit, started_at, CallTally(), skip)
            return
        try:
            text = (
                self.renderings.render(trace, self.formatter) if self.metric.uses_formatter else ""
            )
            samples = build_samples(
                trace, self.metric, self.formatter, self.references, units, conversation=text
            )
        except Exception as exc:  # a formatter bug costs this conversation's rows, not the run
            error = failure("formatter_error", exc)
            for unit in units:
                yield self._row(trace, unit, started_at, CallTally(), error)
            return
        for sample in samples:
            yield await self._score_sample(trace, sample)

    async def _score_sample(self, trace: AgentTrace, sample: MetricInput) -> MetricResult:
        started_at = utc_now()
        tally = CallTally()
        fields: dict[str, Any] = {"reference": sample.reference}
        try:
            skip = self._skip(sample)
            if skip is None and self._over_budget():
                skip = budget_skip("the run's budget was spent before this unit")
            if skip is not None:
                return self._row(trace, sample.unit, started_at, tally, {**fields, **skip})
            judge = CountingJudge(self.judge, tally) if self.judge is not None else None
            outcome = await self.metric.evaluate(sample, judge, tally)
            scored = {**fields, **ok(outcome), **tally.stage_details()}
            return self._row(trace, sample.unit, started_at, tally, scored)
        except UnitSkipped as exc:  # nothing to score after all (e.g. no statements)
            skipped = {
                **fields,
                **exc.details,
                **tally.stage_details(),
                "status": "skipped",
                "error_type": exc.reason,
                "error_message": exc.message,
            }
            return self._row(trace, sample.unit, started_at, tally, skipped)
        except BudgetExhausted as exc:  # not sent: skipped, and --resume scores it later
            skipped = {**fields, **tally.partial_details(), **budget_skip(str(exc))}
            return self._row(trace, sample.unit, started_at, tally, skipped)
        except JudgeError as exc:
            failed = {**fields, **tally.partial_details(), **judge_failure(exc)}
            return self._row(trace, sample.unit, started_at, tally, failed)
        except asyncio.CancelledError:  # interrupted: what its calls sent is kept, then stop
            self._keep_interrupted(trace, sample.unit, started_at, tally, fields)
            raise
        except Exception as exc:  # recorded as a row with its type, never lost
            # InputError: the unit's own data is unusable (labels naming unknown passages...)
            kind = "invalid_input" if isinstance(exc, InputError) else "internal_error"
            failed = {**fields, **failure(kind, exc)}
            return self._row(trace, sample.unit, started_at, tally, failed)

    def _keep_interrupted(
        self,
        trace: AgentTrace,
        unit: Unit,
        started_at: str,
        tally: CallTally,
        fields: dict[str, Any],
    ) -> None:
        """Hand over the ``interrupted`` row of a unit whose calls had sent requests.

        A unit that sent nothing leaves no row (``--resume`` scores it). The row also goes to
        ``on_interrupted``. Never raises: the interrupt on its way out must not be replaced by
        another error.
        """
        if not (tally.attempts and (self.keep_interrupted or self.on_interrupted)):
            return
        try:
            skipped = {
                **fields,
                **tally.partial_details(),
                **interrupted_skip(tally.attempts, tally.unanswered),
            }
            row = self._row(trace, unit, started_at, tally, skipped)
            if self.keep_interrupted:
                self._hand_over(row)
            if self.on_interrupted is not None:
                self.on_interrupted(row)
        except OutputError:  # the store cannot write (disk full): the run's one error says so
            return
        except Exception:
            _log.warning("could not keep the interrupted row of %s", unit.id, exc_info=True)

    def _over_budget(self) -> bool:
        return self.budget is not None and self.budget.exhausted and self.metric.requires_judge

    def _skip(self, sample: MetricInput) -> dict[str, Any] | None:
        return skip_fields(self.metric, sample, self.max_context_tokens)

    def _row(
        self,
        trace: AgentTrace,
        unit: Unit,
        started_at: str,
        tally: CallTally,
        fields: dict[str, Any],
    ) -> MetricResult:
        row = {
            "run_id": self.run_id,
            "conversation_id": trace.conversation_id,
            "unit_id": unit.id,
            "span_id": unit.span_id,
            "trace_ids": trace.trace_ids,
            "metric": self.metric_id,
            "formatter": self.formatter_identity,
            "formatter_fingerprint": self.fingerprint,
            "prompt_sha256": self.metric.prompt_sha256,
            "judge_model": self.judge_model,
            "repeat": self.repeat,
            "latency_ms": round(tally.latency_ms, 3),
            "started_at": started_at,
            "steering": unit_flags(trace, unit.id, cached_flags(trace)),
            **tally.usage_fields(),
        }
        fields = _known_fields(fields)
        if not row.keys().isdisjoint(fields):  # as keyword arguments given twice would
            raise TypeError(f"result fields given twice: {sorted(row.keys() & fields.keys())}")
        row.update(fields)
        # one dict validated, not keyword arguments packed into another (MetricResult(**row))
        return MetricResult.model_validate(row)


def progress_display(console: Console, *, enabled: bool) -> Progress:
    """The progress display of a run's scoring: ``scoring`` with a bar, done/total, elapsed.

    One process shows one per engine; a cluster run one for the run (conversations whose
    rows have come back from the workers). ``enabled=False``: a display that shows nothing.
    """
    return Progress(
        TextColumn("[bold]{task.description}"),
        BarColumn(),
        MofNCompleteColumn(),
        TimeElapsedColumn(),
        console=console,
        disable=not enabled,
        transient=False,
    )


def _no_progress() -> None:
    """The progress callback of a run without a progress bar."""


_RUNS_LOCK = threading.Lock()
_RUNS = {"in_flight": 0, "froze": 0}


@contextmanager
def _older_objects_frozen() -> Iterator[None]:
    """:func:`gc.freeze` when the first run starts, :func:`gc.unfreeze` when the last ends.

    A process that froze objects itself (``gc.freeze()`` before forking workers) is left as
    it is: nothing is frozen or unfrozen then.
    """
    with _RUNS_LOCK:
        if _RUNS["in_flight"] == 0:
            _RUNS["froze"] = int(gc.get_freeze_count() == 0)
            if _RUNS["froze"]:
                gc.freeze()
        _RUNS["in_flight"] += 1
    try:
        yield
    finally:
        with _RUNS_LOCK:
            _RUNS["in_flight"] -= 1
            if _RUNS["in_flight"] == 0 and _RUNS["froze"]:
                gc.unfreeze()


_RESULT_FIELDS = frozenset(MetricResult.model_fields)


def _known_fields(fields: dict[str, Any]) -> dict[str, Any]:
    """``fields`` with intermediate outputs that are not result fields moved to ``details``."""
    if _RESULT_FIELDS.issuperset(fields):  # the usual case, tested without a new dict
        return fields
    known = MetricResult.model_fields
    extra = {k: v for k, v in fields.items() if k not in known}
    kept = {k: v for k, v in fields.items() if k in known}
    kept["details"] = {**extra, **kept.get("details", {})}
    return kept


def _first_leaf(group: BaseExceptionGroup[Exception]) -> Exception:
    first = group.exceptions[0]
    return _first_leaf(first) if isinstance(first, BaseExceptionGroup) else first
