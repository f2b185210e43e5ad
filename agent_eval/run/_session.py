"""The run session: one owner of a scoring run, from its inputs to a complete run directory.

Every way of scoring goes through :class:`RunSession`: ``agent-eval score``, ``serve``, the
pytest plugin and :func:`agent_eval.score`/:func:`agent_eval.ascore`. It owns what a run is made
of: the metrics and the formatter, the judge stack (judge-call cache, rate limits, budget:
:func:`~agent_eval.run._judge_stack.wrap_judge`), references, tool references and turn labels,
the run record, the run directory's files (:mod:`agent_eval.run._artifacts`), ``--resume`` and
``--retry-errors``, the pinned decompositions of claim-level metrics and the OTel evaluation
events. It reports through callbacks (:class:`SessionHooks`: one-line notices, the progress
console) and never prints; the caller (the CLI) prints what it returns.

Its stages are separable, so that an engine can distribute them (DESIGN, Scale-out):

1. **read** (:meth:`RunSession.read`): the conversations, spooled (one at a time per pass),
   with references, expected tool calls and turn labels attached;
2. **plan** (:meth:`RunSession.plans`): prompt tokens and cost per metric, made only when shown;
3. **score** (:meth:`RunSession.run`): the run directory's views (conversations, renderings,
   unit contexts) written in one read, then one engine per metric over the same conversations,
   into one store under one run id;
4. **tally** (:meth:`RunSession.spent`, :meth:`RunSession.kept`): what the stored rows add up to.

The judge is built by the caller (the CLI from its settings, the API from its argument) and
handed in; the session wraps it.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from rich.console import Console

from agent_eval._costs import AgentUsageGroups, PriceTable
from agent_eval._redaction import redact_text
from agent_eval._references import load_references
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, redact_url
from agent_eval.errors import ConfigError
from agent_eval.formatting import load_formatters
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._registry import get_formatter
from agent_eval.ingest._rag_labels import load_turn_labels
from agent_eval.ingest._reference_calls import load_reference_calls, with_reference_calls
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import Metric
from agent_eval.metrics._claim_metric import ClaimMetric
from agent_eval.metrics._decomposition import DecompositionCache
from agent_eval.metrics._spec import build_metric, split_metrics
from agent_eval.otel._targets import SpanTarget, targets_by_conversation
from agent_eval.run import _artifacts as artifacts
from agent_eval.run._budget import Budget
from agent_eval.run._engine import Engine, new_run_id, utc_now
from agent_eval.run._judge_stack import JudgeStack, default_cache_path, wrap_judge
from agent_eval.run._plan import RunPlan, plan_run
from agent_eval.run._record import run_record
from agent_eval.run._rendering import RenderCache
from agent_eval.run._runs import RunRef, check_identity, find_run, finished_results
from agent_eval.run._spend import RunSpend, run_rows
from agent_eval.run._spool import TraceSpool
from agent_eval.run._store import ResultStore, RunRecord, result_key
from agent_eval.run._summary import RunSummary
from agent_eval.run._turn_labels import attach_turn_labels
from agent_eval.run._usage import UsageTally

if TYPE_CHECKING:
    from agent_eval.ingest import IngestReport
    from agent_eval.otel._events import EvaluationEvents

__all__ = [
    "MAX_CHANGED_SHOWN",
    "EventSinks",
    "Executor",
    "RunSession",
    "SessionHooks",
    "build_metrics",
    "output_directory",
    "redact_argv",
    "run_config",
]

MAX_CHANGED_SHOWN = 10
"""Conversation ids the ``--resume`` warning lists before ``...``."""

_SECRET_FLAGS = ("--api-key", "--key", "--token", "--password")


def redact_argv(argv: Sequence[str], secrets: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``argv`` with secrets replaced by ``***``.

    Secrets are the values of secret-looking flags, any of ``secrets``, and credentials in URLs
    (userinfo, key-like query parameters; :func:`agent_eval._redaction.redact_text`).
    """
    redacted: list[str] = []
    hide_next = False
    for arg in argv:
        flag = arg.split("=", 1)[0]
        if hide_next:
            redacted.append("***")
        elif flag in _SECRET_FLAGS and "=" in arg:
            redacted.append(f"{flag}=***")
        else:
            redacted.append(redact_text(_scrub(arg, secrets)))
        hide_next = arg in _SECRET_FLAGS
    return tuple(redacted)


def _scrub(text: str, secrets: tuple[str, ...]) -> str:
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text


def build_metrics(cfg: ScoreConfig) -> list[Metric]:
    """The metrics ``cfg.metric`` names (``a,b[x=1],c``), in order, each once.

    Raises:
        ConfigError: no metric named, or one named twice. UnknownPluginError: an unknown name.

    """
    specs = split_metrics(cfg.metric)
    if not specs:
        raise ConfigError("--metric names no metric; e.g. --metric goal_accuracy")
    built = [
        build_metric(
            spec, with_reference=cfg.with_reference, temperature=cfg.temperature, seed=cfg.seed
        )
        for spec in specs
    ]
    ids = [metric.id for metric in built]
    if len(set(ids)) != len(ids):
        raise ConfigError(f"--metric names a metric twice: {', '.join(ids)}")
    return built


def output_directory(cfg: ScoreConfig, run_id: str) -> Path:
    """Where a run writes: ``cfg.out``, else ``runs/RUN_ID``."""
    return cfg.out or Path("runs") / run_id


def run_config(engines: Sequence[Engine], cfg: ScoreConfig) -> dict[str, Any]:
    """The ``runs`` table config: the first engine's identity, every metric's under ``metrics``."""
    config = engines[0].identity() | {"mode": cfg.mode, "base_url": redact_url(cfg.base_url)}
    if len(engines) > 1:
        config["metrics"] = {engine.metric.id: engine.identity() for engine in engines}
    return config


class Executor(Protocol):
    """Where a session's engines score the conversations (``None``: in this process).

    The Ray executor (:class:`agent_eval.run.cluster.RayExecutor`) scores them on a cluster;
    the session keeps the run id, record, directory and store, and the executor hands every
    row to the engines' store and ``on_result`` callbacks, as :meth:`Engine.run` does.
    """

    async def score(self, session: RunSession, traces: TraceSpool) -> list[RunSummary]:
        """Score ``traces`` with every engine of ``session``; one summary per engine, in order."""
        ...


class EventSinks(Protocol):
    """Where evaluation events go (the CLI's ``EventOptions`` is one)."""

    @property
    def enabled(self) -> bool:
        """Whether any sink is configured."""
        ...

    def build(
        self, out_dir: Path, targets: Mapping[str, SpanTarget] | None = None
    ) -> EvaluationEvents | None:
        """The emitter for a run writing to ``out_dir``, or ``None`` with no sink."""
        ...


def _ignore(_line: str) -> None:
    return None


@dataclass(kw_only=True)
class SessionHooks:
    """How a session reports: it never prints itself.

    Attributes:
        notice: Called with each one-line notice (a warning or an informational line, plain
            text, no markup): a changed conversation kept on ``--resume``, the reference
            files' match counts, the event exporters' tally.
        progress: The console the engines' progress bars go to; ``None``: no bar.

    """

    notice: Callable[[str], None] = _ignore
    progress: Console | None = None


@dataclass
class _Kept:
    """What a continued run keeps of its earlier invocation's view of the conversations."""

    changed: tuple[str, ...]
    conversations: list[AgentTrace]


class RunSession:
    """One scoring run: its set-up, inputs, judge stack, engines, store and run directory.

    Args:
        cfg: The run's settings (``agent-eval.toml`` ``[score]`` plus flags, or built by the
            API): metrics, formatter, references, cache, limits, budget, ``out``, resume.
        judge: The judge (unwrapped: the session puts the cache, limits and budget around
            it); ``None`` when none is configured (judge-free metrics still run).
        model: The judge model shown in plans and on the rows' identity (the judge's own).
        metrics: The metrics, overriding ``cfg.metric`` (the API passes instances).
        formatter: The formatter, overriding ``cfg.formatter``.
        endpoint: The judge endpoint recorded with cache entries.
        argv: The command line (secrets removed here) stored with the run.
        events: Where evaluation events go; ``None``: nowhere.
        hooks: Notices and progress.
        budget: A budget whose :class:`~agent_eval.run._budget.BudgetedJudge` already wraps
            ``judge`` (the API's); ``None``: the budget of ``cfg`` (wrapped here).
        run_id: The run id of a new run; a fresh one when ``None``.
        write: Write a run directory (``False``: rows kept in memory only, the API's
            ``out=None``).
        record: Extra entries for the run's reproducibility record.
        formatters: Several formatters (``compare``): one engine per metric and formatter.
        repeats: Score every unit this many times (``stability``: rows ``repeat`` 0..K-1).
        repeat_judge: The judge of repeat ``k`` made from the session's wrapped judge
            (``stability``: the cache for repeat 0 only); ``None``: the same judge.
        config: The ``runs`` table config made from the engines; ``None``:
            :func:`run_config`.
        keep_results: Keep every row on the summaries; ``None``: only when not writing.
        keep_interrupted: Keep a unit an interrupt cut short as a row skipped
            ``interrupted`` with its spend (``--resume`` scores it again).
        close_judges: Close the judges when the run ends (off: the caller closes its own).
        executor: Where the engines score (``None``: in this process, :meth:`Engine.run`).

    Raises:
        ConfigError / UnknownPluginError: a bad metric, formatter or budget setting (before
            any input is read).

    """

    def __init__(
        self,
        cfg: ScoreConfig,
        *,
        judge: Judge | None = None,
        model: str | None = None,
        metrics: Sequence[Metric] | None = None,
        formatter: Formatter[Any] | None = None,
        endpoint: str = "",
        argv: Sequence[str] = (),
        events: EventSinks | None = None,
        hooks: SessionHooks | None = None,
        budget: Budget | None = None,
        run_id: str | None = None,
        write: bool = True,
        record: Mapping[str, Any] | None = None,
        formatters: Sequence[Formatter[Any]] | None = None,
        repeats: int = 1,
        repeat_judge: Callable[[int, Judge], Judge] | None = None,
        config: Callable[[Sequence[Engine]], dict[str, Any]] | None = None,
        keep_results: bool | None = None,
        keep_interrupted: bool = True,
        close_judges: bool = True,
        executor: Executor | None = None,
    ) -> None:
        if formatter is None:  # a caller that passes the formatter has loaded its plugins
            for location in cfg.formatter_path:
                load_formatters(location)
        self.cfg = cfg
        self.metrics = list(metrics) if metrics is not None else build_metrics(cfg)
        self.formatter = formatter if formatter is not None else get_formatter(cfg.formatter)
        self.judge, self.model, self.endpoint = judge, model, endpoint
        self.argv, self.events = tuple(argv), events
        self.hooks = hooks or SessionHooks()
        self._budget_wrapped = budget is not None
        self.budget = budget or Budget.from_config(cfg, model or cfg.judge or "")
        self.write, self._record = write, dict(record or {})
        self.formatters = list(formatters) if formatters else [self.formatter]
        self.repeats, self._repeat_judge, self._config = repeats, repeat_judge, config
        self.keep_results = (not write) if keep_results is None else keep_results
        self.keep_interrupted, self.close_judges = keep_interrupted, close_judges
        self.executor = executor
        self.prices = PriceTable.from_config(cfg.prices)
        self.renderings = RenderCache()
        self.agent_usage = AgentUsageGroups()
        self.traces: TraceSpool | None = None
        self.inputs: IngestReport | None = None
        self.references: dict[str, str] = {}
        self.engines: list[Engine] = []
        self.directory: Path | None = None
        self.started_at = ""
        self.stack: JudgeStack | None = None
        self.changed_since_judged: tuple[str, ...] = ()
        self.new_run_id = run_id
        self._plans: list[RunPlan] | None = None

    # -- stage 1: read ----------------------------------------------------------------------

    def read(
        self,
        traces: TraceSpool | Iterable[AgentTrace],
        inputs: IngestReport | None = None,
        references: Mapping[str, str] | None = None,
    ) -> None:
        """Take the run's conversations, with what the settings attach to them.

        ``traces`` is spooled unless it is a spool already (the session then closes it with
        :meth:`close`); ``inputs`` is the ingest accounting, when the caller ingested.
        ``cfg.tool_references`` and ``cfg.turn_labels`` are attached; the references are
        ``references`` when given, else ``cfg.references``' file (each file's ids checked
        against the conversations: a notice says how many match).

        Raises:
            InputError: a references, tool-references or turn-labels file cannot be read.

        """
        spool = (
            traces
            if isinstance(traces, TraceSpool)
            else TraceSpool.collect(traces, self.renderings)
        )
        if isinstance(traces, TraceSpool):
            self.renderings = spool.renderings
        self.traces, self.inputs = spool, inputs
        spool = self.traces = self._with_turn_labels(self._with_tool_references(spool))
        if references is not None:
            self.references = dict(references)
        elif self.cfg.references is not None:
            self.references = load_references(self.cfg.references)
            self._check_ids(self.references, spool, self.cfg.references)

    def _check_ids(
        self, references: Mapping[str, object], traces: TraceSpool, source: Path
    ) -> None:
        self.hooks.notice(reference_match_line(references, traces.conversation_ids, source))

    def _with_tool_references(self, traces: TraceSpool) -> TraceSpool:
        """``traces`` with the ``tool_references`` file's expected tool calls (checked)."""
        if self.cfg.tool_references is None:
            return traces
        references = load_reference_calls(self.cfg.tool_references)
        self._check_ids(references, traces, self.cfg.tool_references)
        return traces.rewrite(lambda spooled: with_reference_calls(spooled, references))

    def _with_turn_labels(self, traces: TraceSpool) -> TraceSpool:
        """The ``--turn-labels`` file attached (checked against every conversation at once)."""
        if self.cfg.turn_labels is None:
            return traces
        rows, path = load_turn_labels(self.cfg.turn_labels), self.cfg.turn_labels
        return traces.rewrite(lambda spooled: attach_turn_labels(spooled, rows, path))

    def close(self) -> None:
        """Remove the spooled conversations (idempotent)."""
        if self.traces is not None:
            self.traces.close()

    # -- stage 2: plan ----------------------------------------------------------------------

    def plans(self) -> list[RunPlan]:
        """One plan per metric (made on first call; only when shown)."""
        if self._plans is None:
            traces = self._spool()
            self._plans = [
                plan_run(
                    traces,
                    metric=metric,
                    formatter=self.formatter,
                    judge_model=(self.model or self.cfg.judge) if metric.requires_judge else None,
                    references=self.references,
                    max_context_tokens=self.cfg.max_context_tokens,
                    prices=self.prices,
                    default_model=DEFAULT_JUDGE,
                    renderings=self.renderings,
                )
                for metric in self.metrics
            ]
        return self._plans

    def without_judged(self) -> list[RunPlan]:
        """Drop the judged metrics (no judge configured); returns their plans."""
        missing = [p for p, m in zip(self.plans(), self.metrics, strict=True) if m.requires_judge]
        self.metrics = [m for m in self.metrics if not m.requires_judge]
        return missing

    def _spool(self) -> TraceSpool:
        if self.traces is None:
            raise RuntimeError("RunSession.read() gives the conversations before this stage")
        return self.traces

    # -- stage 3: score ---------------------------------------------------------------------

    async def run(self) -> list[RunSummary]:
        """Score the conversations with every metric; one summary per metric, in order.

        Writes the run directory (unless ``write`` is off): the run record, the views
        (``conversations.jsonl``, ``renderings.jsonl``, for answer-level metrics
        ``units.jsonl`` and ``turns.jsonl``) and the rows as they complete. ``cfg.resume`` /
        ``cfg.retry_errors`` continue an earlier run (finished units counted, not re-judged).
        The judges are closed at the end.

        Raises:
            ConfigError: both ``resume`` and ``retry_errors``, or an identity that differs from
                the run continued. OutputError: the directory cannot be written or is locked.

        """
        traces = self._spool()
        earlier = self._earlier_run()
        if earlier is not None:
            self.cfg = self.cfg.model_copy(update={"out": earlier.directory})
        self.stack = self._wrap() if self.judge is not None else None
        run_id = earlier.run_id if earlier else (self.new_run_id or new_run_id())
        self.engines = [
            self._engine(metric, formatter, run_id, k)
            for k in range(self.repeats)
            for formatter in self.formatters
            for metric in self.metrics
        ]
        if earlier is not None:
            done = finished_results(earlier, retry_errors=self.cfg.retry_errors is not None)
            for engine in self.engines:
                check_identity(earlier, engine.identity())
                engine.done = done
        self.started_at = utc_now()
        try:
            if not self.write:
                return await self._execute(traces)
            self.directory = output_directory(self.cfg, run_id)
            return await self._score(traces, self.directory)
        finally:
            await self._close_judges()

    def _engine(
        self, metric: Metric, formatter: Formatter[Any], run_id: str, repeat: int
    ) -> Engine:
        judge = self.stack.judge if self.stack is not None and metric.requires_judge else None
        if judge is not None and self._repeat_judge is not None:
            judge = self._repeat_judge(repeat, judge)
        return Engine(
            metric=metric,
            formatter=formatter,
            judge=judge,
            run_id=run_id,
            repeat=repeat,
            concurrency=self.cfg.concurrency,
            max_context_tokens=self.cfg.max_context_tokens,
            references=self.references,
            progress=self.hooks.progress is not None,
            console=self.hooks.progress,
            keep_results=self.keep_results,
            budget=self.budget,
            renderings=self.renderings,
            keep_interrupted=self.keep_interrupted,
        )

    def _wrap(self) -> JudgeStack:
        """The judge in rate limits, the budget and the judge-call cache, as configured."""
        assert self.judge is not None
        cfg = self.cfg
        return wrap_judge(
            self.judge,
            cache_mode=cfg.cache,
            cache_path=cfg.cache_path or default_cache_path(),
            requests_per_minute=cfg.rpm,
            tokens_per_minute=cfg.tpm,
            parameters={"mode": cfg.mode},
            budget=None if self._budget_wrapped else self.budget,
            endpoint=self.endpoint,
        )

    async def _close_judges(self) -> None:
        if not self.close_judges:
            return
        judges = {id(e.judge): e.judge for e in self.engines if e.judge is not None}
        for judge in judges.values():
            await judge.aclose()
        if self.stack is not None and self.stack.cache is not None:
            self.stack.cache.close()

    def _earlier_run(self) -> RunRef | None:
        """The run ``resume`` or ``retry_errors`` continues, or ``None`` for a new run."""
        cfg = self.cfg
        if cfg.resume and cfg.retry_errors:
            raise ConfigError("give --resume or --retry-errors, not both")
        run = cfg.resume or cfg.retry_errors
        return None if run is None else find_run(run, cfg.out)

    def run_record(self, **config: Any) -> RunRecord:
        """The ``runs`` table's record of this run (config, redacted argv, reproducibility).

        ``config`` entries are added to the run's config (``serve=True``).
        """
        secret = os.environ.get(self.cfg.api_key_env, "")
        return RunRecord(
            run_id=self.engines[0].run_id,
            started_at=utc_now(),
            config=(self._config or partial(run_config, cfg=self.cfg))(self.engines) | config,
            argv=redact_argv(self.argv, (secret,)),
            record=run_record(self.cfg, self.model) | self._record,
        )

    def start_live(
        self, **config: Any
    ) -> tuple[list[Engine], ResultStore, EvaluationEvents | None]:
        """Start a run whose conversations arrive later (``serve``): no read stage.

        Wraps the judge, makes one engine per metric (in order, as :meth:`run` does; a
        judge-free metric's engine gets no judge), opens the store and records the run
        (``config["serve"]`` true, plus ``config``'s entries, e.g. the selection); the caller
        scores each conversation with every engine as it closes (the live scorer writes its
        views) and ends with :meth:`stop_live`. With ``cfg.resume`` it continues that run
        (``serve --resume OUT``): same run id, its identity checked per metric, its finished
        rows in every engine's ``done`` (the live scorer does not score them again).

        Raises:
            ConfigError: a resumed run scored differently.
            OutputError: the directory cannot be written. StoreError: no run to resume.

        """
        earlier = self._earlier_run()
        if earlier is not None:
            self.cfg = self.cfg.model_copy(update={"out": earlier.directory})
        self.stack = self._wrap() if self.judge is not None else None
        run_id = earlier.run_id if earlier else (self.new_run_id or new_run_id())
        self.engines = [self._engine(m, self.formatter, run_id, 0) for m in self.metrics]
        if earlier is not None:  # its stored rows are not scored again
            done = finished_results(earlier)
            for engine in self.engines:
                check_identity(earlier, engine.identity())
                engine.done = done
        self.directory = output_directory(self.cfg, run_id)
        self.started_at = utc_now()
        store = ResultStore(self.directory)
        for engine in self.engines:
            engine.store = store
        store.start_run(self.run_record(serve=True, **config))
        emitter = self.events.build(self.directory) if self.events else None
        return list(self.engines), store, emitter

    async def stop_live(self, store: ResultStore, emitter: EvaluationEvents | None) -> None:
        """End a live run: close the judges, the cache, the events (noticed) and the store."""
        try:
            await self._close_judges()
            if emitter is not None:  # export failures are counted and shown, never fatal
                self.hooks.notice(emitter.close().line())
        finally:
            store.close()

    async def _score(self, traces: TraceSpool, directory: Path) -> list[RunSummary]:
        pinned = self._pin_decompositions()
        with ResultStore(directory, exclusive=True) as store:
            store.start_run(self.run_record())
            targets = self._write_views(traces, directory)
            emitter = self.events.build(directory, targets) if self.events else None
            try:
                for engine in self.engines:
                    engine.store = store
                    if emitter is not None:
                        engine.on_result = (*engine.on_result, emitter.emit)
                summaries = await self._execute(traces)
            finally:
                if pinned is not None:
                    pinned.close()
                if emitter is not None:  # export failures are counted and shown, never fatal
                    self.hooks.notice(emitter.close().line())
            return summaries

    async def _execute(self, traces: TraceSpool) -> list[RunSummary]:
        """Every engine's summary: scored by the executor, or here one engine after another."""
        if self.executor is not None:
            return await self.executor.score(self, traces)
        return [await engine.run(traces, total=len(traces)) for engine in self.engines]

    def _write_views(self, traces: TraceSpool, directory: Path) -> dict[str, SpanTarget]:
        """Write what the judge saw, for ``agent-eval report``; the events' span targets."""
        engines = self.engines
        formatters = {e.formatter.identity: e.formatter for e in engines if e.metric.uses_formatter}
        identities = sorted(formatters)
        targets: dict[str, SpanTarget] = {}
        events = self.events is not None and self.events.enabled
        first = self._first_pass(
            traces, [formatters[i] for i in identities], targets if events else None
        )
        if engines and engines[0].done:  # resumed: keep what the finished rows were judged on
            for _ in first:
                pass
            texts = dict(traces.sorted_renderings(identities))
            kept = self._changed_since_judged(traces, directory, texts)
            self.changed_since_judged = kept.changed
            artifacts.write_renderings(directory, texts)
            artifacts.write_conversations(directory, kept.conversations)
        else:
            artifacts.write_conversations(directory, first)  # the same read renders them
            artifacts.write_rendering_items(directory, traces.sorted_renderings(identities))
        if any(e.metric.unit_kind == "answer" for e in engines):
            artifacts.write_units(directory, traces)  # the contexts atoms quote
            artifacts.write_turns(directory, traces)  # the per-turn RAG view
        return targets

    def _first_pass(
        self,
        traces: Iterable[AgentTrace],
        formatters: Sequence[Formatter[Any]],
        targets: dict[str, SpanTarget] | None,
    ) -> Iterator[AgentTrace]:
        """``traces``, each rendered with ``formatters`` and counted on the way.

        One read of the spooled conversations gives what the run needs of each before any
        judge call: its renderings (the spool keeps each one made here for the engines), the
        agent usage table's counts and, when evaluation events are on, its span target (the
        last conversation of an id wins). The consumer (``conversations.jsonl``'s writer) is
        the same read.
        """
        for trace in traces:
            for formatter in formatters:
                self.renderings.render(trace, formatter)
            self.agent_usage.add(trace)
            if targets is not None:
                targets.update(targets_by_conversation((trace,)))
            yield trace

    def _changed_since_judged(
        self, traces: Iterable[AgentTrace], directory: Path, texts: dict[tuple[str, str], str]
    ) -> _Kept:
        """Find the finished conversations that changed since they were judged; notice them.

        ``--resume`` and ``--retry-errors`` never re-judge a finished unit, but a re-run on a
        newer export can hold more of a conversation than its verdict saw. A conversation
        changed when its rendering with a kept row's formatter differs from the earlier
        ``renderings.jsonl`` (judge-free metrics: its messages differ from the earlier
        ``conversations.jsonl``). The verdict is kept, and so is what it was given on: for a
        changed conversation with no unit left to judge, ``texts`` (updated in place) keeps
        the earlier rendering and the earlier conversation is kept.
        """
        engines = self.engines
        judged: dict[str, set[str]] = {}  # conversation id -> metrics with a finished row
        for row in engines[0].done.values():
            judged.setdefault(row.conversation_id, set()).add(row.metric)
        earlier_texts = artifacts.read_renderings(directory)
        earlier = artifacts.read_conversations(directory, judged)
        changed: list[str] = []
        conversations = []
        for trace in traces:
            cid = trace.conversation_id
            metrics = judged.get(cid, set())
            if not any(
                self._differs(engine, trace, earlier_texts, earlier.get(cid))
                for engine in engines
                if engine.metric_id in metrics
            ):
                conversations.append(trace)
                continue
            changed.append(cid)
            if _all_units_kept(engines, trace) and cid in earlier:
                conversations.append(earlier[cid])
                for key in [k for k in texts if k[0] == cid]:
                    if key in earlier_texts:
                        texts[key] = earlier_texts[key]
            else:
                conversations.append(trace)
        if changed:
            shown = ", ".join(changed[:MAX_CHANGED_SHOWN])
            more = ", ..." if len(changed) > MAX_CHANGED_SHOWN else ""
            self.hooks.notice(
                f"warning: {len(changed)} finished conversation(s) changed since they were "
                f"judged (kept: --resume never re-judges a finished conversation, and the report "
                f"shows what the judge saw; to judge them as they are now, score into a new "
                f"--out): {shown}{more}"
            )
        return _Kept(changed=tuple(changed), conversations=conversations)

    def _differs(
        self,
        engine: Engine,
        trace: AgentTrace,
        earlier_texts: dict[tuple[str, str], str],
        earlier: AgentTrace | None,
    ) -> bool:
        """Whether ``trace`` reads otherwise for ``engine`` than when its row was judged."""
        if engine.metric.uses_formatter:
            old = earlier_texts.get((trace.conversation_id, engine.formatter_identity))
            return old is not None and old != self.renderings.render(trace, engine.formatter)
        return earlier is not None and earlier.messages != trace.messages

    def _pin_decompositions(self) -> DecompositionCache | None:
        """Give claim-level metrics the run's decomposition cache (``redecompose``: refresh)."""
        claim_metrics = [
            e.metric
            for e in self.engines
            if isinstance(e.metric, ClaimMetric) and e.metric.decompositions.path is None
        ]  # a metric given its own cache (compare, stability) keeps it
        if not claim_metrics:
            return None
        path = artifacts.decompositions_path(self.cfg.out)
        cache = DecompositionCache(path, refresh=self.cfg.redecompose)
        for metric in claim_metrics:
            metric.decompositions = cache
        return cache

    # -- stage 4: tally ---------------------------------------------------------------------

    def spent(self, summaries: Sequence[RunSummary]) -> RunSpend | None:
        """The run's spend over every invocation, from its store (``None``: not stored)."""
        first = summaries[0] if summaries else None
        if first is None or first.out_dir is None:
            return None
        return RunSpend(first.out_dir, first.run_id)

    def kept(self) -> list[RunSummary]:
        """Per metric, the counts of the rows the run's store holds (an interrupted run's).

        The rows stream from the store: none is kept in memory.
        """
        if self.directory is None or not self.engines:
            return []
        run_id = self.engines[0].run_id
        engines = {engine.metric_id: engine for engine in self.engines}
        summaries = {
            engine.metric_id: RunSummary(
                run_id=run_id,
                metric=engine.metric_id,
                formatter=engine.formatter_identity,
                judge_model=engine.judge_model,
                out_dir=self.directory,
            )
            for engine in self.engines
        }
        totals = {metric: UsageTally() for metric in summaries}
        for row, replaced in run_rows(self.directory, run_id):
            if row.metric not in summaries:
                continue
            totals[row.metric].add(row, replaced=replaced)
            if replaced:
                continue
            # an earlier invocation's row (finished or cut short) is not ours
            engine = engines[row.metric]
            earlier = result_key(row) in engine.done or row.started_at < self.started_at
            summaries[row.metric].add(row, keep=False, resumed=earlier)
        for metric, summary in summaries.items():
            summary.run_total = totals[metric].usage()
        return list(summaries.values())

    def results(self, summaries: Sequence[RunSummary]) -> list[MetricResult]:
        """Every row of the summaries (in memory) or of the run's store."""
        if not self.write:
            return [row for summary in summaries for row in summary.results]
        if self.directory is None or not self.engines:
            return []
        return [row for row, replaced in run_rows(self.directory, self.engines[0].run_id)
                if not replaced]  # fmt: skip


def _all_units_kept(engines: Sequence[Engine], trace: AgentTrace) -> bool:
    """Whether every unit of ``trace`` under every engine is finished (none judged again)."""
    for engine in engines:
        try:
            units = engine.metric.units(trace)
        except Exception:  # the engine reports it as the unit's error row
            return False
        if any(engine.key(trace, unit.id) not in engine.done for unit in units):
            return False
    return True


MAX_IDS_SHOWN = 3
"""Example ids shown from each side when no reference id matches a conversation."""


def reference_match_line(
    references: Mapping[str, object], conversation_ids: Iterable[str], source: Path
) -> str:
    """How many ids of the ``source`` reference file match a conversation, in one line.

    When none matches the line is a warning showing a few ids of each side: every
    conversation would then go without the file's references.
    """
    ids = set(conversation_ids)
    matched = sum(1 for conversation_id in references if conversation_id in ids)
    if matched:
        return (
            f"references: {matched} of {len(references)} id(s) in {source} match a "
            f"conversation of the input ({len(ids)} conversation(s))"
        )
    return (
        f"warning: none of the {len(references)} conversation id(s) in {source} matches a "
        f"conversation of the input (the file has {_examples(references)}; the input has "
        f"{_examples(ids)}); check its conversation_id column"
    )


def _examples(ids: Iterable[str]) -> str:
    every = sorted(ids)
    more = ", ..." if len(every) > MAX_IDS_SHOWN else ""
    return ", ".join(repr(i) for i in every[:MAX_IDS_SHOWN]) + more
