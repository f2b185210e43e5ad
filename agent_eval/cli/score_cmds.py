"""``agent-eval score PATH...``: score conversations with a metric, a formatter and a judge.

Ingests the inputs, plans the run (conversations, judge calls, prompt tokens, estimated cost),
and, unless ``--dry-run``, scores every conversation through the engine, writing
``DIR/results.jsonl`` and ``DIR/results.db`` as results complete. A progress bar goes to stderr;
the summary table and the line ``scored + skipped + errored = units`` follow.

With no judge configured the plan is shown with how to configure one, and the exit code is 2;
judge-free metrics named with the judged ones (``--metric tool_call_accuracy,goal_accuracy``)
are still scored and written first.
Exit codes (:mod:`agent_eval.cli.exit_codes`): 0 done; 1 ``--fail-under`` or a gate failed; 2
usage or configuration error (no judge configured, the variable named by ``--api-key-env``
unset while the endpoint is not on this machine); 3 no input readable; 4 no conversation was
scored (every one errored or was skipped: the line names the dominant reason), or one metric
scored none and some of its units errored while other metrics scored (a line per such metric);
5 the output directory cannot be written or another run holds its lock.
Every setting can come from ``agent-eval.toml`` (see :mod:`agent_eval.config`).
"""

from __future__ import annotations

import contextlib
import heapq
import io
import os
import sys
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer
from rich.console import Console
from rich.markup import escape

from agent_eval.analysis.gates import Gate, GateCount
from agent_eval.cli.analysis_options import config_path, gate_outcomes, gates_from
from agent_eval.cli.app import (
    EXIT_GATE,
    EXIT_USAGE,
    app,
    err_console,
    interrupt_exit_code,
    interrupt_message,
)
from agent_eval.cli.event_options import EventOptions, EventsFile, OtlpEndpoint
from agent_eval.cli.exit_codes import EXIT_NOTHING, exit_code
from agent_eval.cli.help_format import HelpCommand
from agent_eval.cli.judge_setup import (
    HOW_TO_CONFIGURE,
    build_judge,
    cache_endpoint,
    check_judge_kind,
    configured_model,
    judge_model,
    key_env_problem,
    missing_judge,
)
from agent_eval.cli.score_inputs import check_references, read_inputs
from agent_eval.cli.scoring_options import (
    ApiKeyEnvOpt,
    BaseUrlOpt,
    CachePathOpt,
    ConcurrencyOpt,
    ConfigOpt,
    DryRunOpt,
    FormatOpt,
    FormatterOpt,
    FormatterPathOpt,
    GateOpt,
    JsonOpt,
    JudgeOpt,
    MaxContextTokensOpt,
    MaxCostOpt,
    MaxJudgeTokensOpt,
    MaxRetriesOpt,
    MetricOpt,
    ModeOpt,
    NoCacheOpt,
    OutOpt,
    PathsArg,
    ReferencesOpt,
    RefreshCacheOpt,
    RpmOpt,
    TemperatureOpt,
    TimeoutOpt,
    TpmOpt,
    WithReferenceOpt,
    config_overrides,
)
from agent_eval.cli.tables import print_table
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config, redact_url
from agent_eval.costs import (
    NO_JUDGE,
    AgentUsageGroups,
    JudgeUsageGroups,
    PriceTable,
    UsageLine,
    remembered_prices,
    shown_cost,
    stage_table,
    usage_table,
)
from agent_eval.errors import AgentEvalError, ConfigError, JudgeNotConfiguredError
from agent_eval.formatting import load_formatters
from agent_eval.formatting.base import Formatter
from agent_eval.formatting.registry import get_formatter
from agent_eval.judges.base import Judge
from agent_eval.metrics.base import Metric
from agent_eval.metrics.claim_metric import ClaimMetric
from agent_eval.metrics.decomposition import DECOMPOSITIONS_FILENAME, DecompositionCache
from agent_eval.metrics.spec import build_metric, split_metrics
from agent_eval.otel.targets import SpanTarget, targets_by_conversation
from agent_eval.rag.labels import attach_turn_labels, load_turn_labels
from agent_eval.rag.turns import write_turns
from agent_eval.redaction import redact_text
from agent_eval.reference_calls import load_reference_calls, with_reference_calls
from agent_eval.references import load_references
from agent_eval.report.conversations import read_conversations, write_conversations
from agent_eval.report.renderings import (
    read_renderings,
    write_rendering_items,
    write_renderings,
)
from agent_eval.report.unit_contexts import write_units
from agent_eval.result import MetricResult
from agent_eval.run import event_loop
from agent_eval.run.budget import BUDGET_SKIP, Budget, budget_line
from agent_eval.run.cache import CachedPrices
from agent_eval.run.engine import Engine, new_run_id, utc_now
from agent_eval.run.judge_stack import (
    DEFAULT_RUNS_DIR,
    JudgeStack,
    default_cache_path,
    wrap_judge,
)
from agent_eval.run.outcomes import INTERRUPTED_SKIP
from agent_eval.run.plan import RunPlan, plan_run
from agent_eval.run.record import run_record
from agent_eval.run.rendering import RenderCache
from agent_eval.run.runs import RunRef, check_identity, find_run, finished_results
from agent_eval.run.spool import TraceSpool
from agent_eval.run.store import (
    ResultStore,
    RunRecord,
    iter_results,
    result_key,
)
from agent_eval.run.summary import RunSummary
from agent_eval.run.usage import RunUsage, UsageTally
from agent_eval.trace import AgentTrace

if TYPE_CHECKING:  # the --json payload models are imported for --json only (start-up)
    from agent_eval.cli.json_output import (
        CacheSummary,
        FailUnderOutcome,
        GateResult,
        MetricSummary,
        ScorePayload,
    )
    from agent_eval.ingest import IngestReport

__all__ = ["HOW_TO_CONFIGURE", "build_judge", "judge_model", "redact_argv", "run_score", "score"]

SCORE_STATISTICS = ("mean_score", "atoms")
"""What ``score`` measures for gates: ``atoms`` only for metrics scored from atoms."""

EXIT_NOTHING_SCORED = EXIT_NOTHING
"""Exit code when conversations were read but none was scored (all errored or skipped), or a
metric scored none and errored while other metrics scored."""

_SECRET_FLAGS = ("--api-key", "--key", "--token", "--password")


def redact_argv(argv: list[str], secrets: tuple[str, ...] = ()) -> tuple[str, ...]:
    """``argv`` with secrets replaced by ``***``.

    Secrets are the values of secret-looking flags, any of ``secrets``, and credentials in URLs
    (userinfo, key-like query parameters; :func:`agent_eval.redaction.redact_text`).
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


def _metrics(cfg: ScoreConfig) -> list[Metric]:
    """The metrics ``cfg.metric`` names (``a,b[x=1],c``), in order, each once."""
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


def run_score(
    cfg: ScoreConfig,
    argv: list[str],
    console: Console | None = None,
    gates: Sequence[Gate] = (),
    events: EventOptions | None = None,
    *,
    as_json: bool = False,
) -> int:
    """Run ``score`` for ``cfg``; returns the exit code (1 when ``--fail-under`` or a gate fails).

    Several metrics (``--metric a,b``) are scored in one run, one engine per metric over the
    same conversations, into the same store and run id. Judge-free metrics run with no judge
    configured; judged ones then print their plan and how to configure a judge, and the exit
    code is 2 (a configuration error: a metric asked for did not run) after the judge-free
    metrics' results are written.

    The run's reproducibility record (versions, request parameters, input digests, the config
    file without secrets) is stored with it. With ``as_json`` the tables are not printed and
    the ``score`` document (:class:`~agent_eval.cli.json_output.ScorePayload`) is written to
    stdout instead, the exit code in it.
    With ``max_judge_tokens``/``max_cost`` set, the run stops sending when the next call would
    cross the budget; its unjudged units are skipped (``budget``) and ``--resume`` continues.

    Raises:
        AgentEvalError: a usage, configuration or input error (the caller exits 2).

    """
    report = _JsonReport() if as_json else None
    out = Console(file=io.StringIO()) if as_json else console or Console()
    progress = _Progress()
    try:
        with remembered_prices(_price_memo(cfg)):
            code = _run_score(
                cfg, argv, out, gates=gates, events=events, report=report, progress=progress
            )
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: say what was kept, then stop as asked
        _report_interrupt(progress, report)
        raise
    if report is not None:
        from agent_eval.cli.json_output import emit_json

        emit_json("score", report.payload(code, dry_run=cfg.dry_run))
    return code


@dataclass
class _Progress:
    """How far a score run got: its engines and output directory once scoring started."""

    engines: list[Engine] = field(default_factory=list)
    directory: Path | None = None
    started_at: str = ""
    """When this invocation started scoring (rows started before are an earlier one's)."""


def _run_rows(directory: Path, run_id: str) -> Iterator[tuple[MetricResult, bool]]:
    """``(row, replaced)``: the run's rows, then the rows they replaced.

    Streamed one at a time from the store (:func:`iter_results`): none is kept.
    """
    for replaced in (False, True):
        for row in iter_results(directory, run_id, superseded=replaced):
            yield row, replaced


def _kept(progress: _Progress) -> list[RunSummary]:
    """Per metric, the counts of the rows the run's store holds (an interrupted run's).

    The rows stream from the store (:func:`iter_results`): none is kept.
    """
    if progress.directory is None or not progress.engines:
        return []
    run_id = progress.engines[0].run_id
    engines = {engine.metric_id: engine for engine in progress.engines}
    summaries = {
        engine.metric_id: RunSummary(
            run_id=run_id,
            metric=engine.metric_id,
            formatter=engine.formatter_identity,
            judge_model=engine.judge_model,
            out_dir=progress.directory,
        )
        for engine in progress.engines
    }
    totals = {metric: UsageTally() for metric in summaries}
    for row, replaced in _run_rows(progress.directory, run_id):
        if row.metric not in summaries:
            continue
        totals[row.metric].add(row, replaced=replaced)
        if replaced:
            continue
        # an earlier invocation's row (finished or cut short) is not ours
        engine = engines[row.metric]
        earlier = result_key(row) in engine.done or row.started_at < progress.started_at
        summaries[row.metric].add(row, keep=False, resumed=earlier)
    for metric, summary in summaries.items():
        summary.run_total = totals[metric].usage()
    return list(summaries.values())


def _report_interrupt(progress: _Progress, report: _JsonReport | None) -> None:
    """After an interrupt: what the store kept and how to continue (stderr); ``--json``'s doc.

    Never raises: the interrupt on its way out must stay the error.
    """
    try:
        kept = _kept(progress)
    except AgentEvalError as exc:  # the store cannot be read: say so, keep the interrupt
        err_console.print(f"could not read what the run kept: {escape(str(exc))}")
        kept = []
    line = interrupt_line(kept, progress.directory)
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    if report is not None:
        from agent_eval.cli.json_output import emit_interrupted

        report.summaries = kept
        with contextlib.suppress(OSError):  # stdout gone (| head): stderr has the line
            emit_interrupted(
                "score",
                interrupt_exit_code(),
                line,
                run_id=kept[0].run_id if kept else None,
                out=str(progress.directory) if progress.directory and kept else None,
                metrics=[_metric_summary(summary) for summary in kept],
            )


def interrupt_line(kept: Sequence[RunSummary], directory: Path | None) -> str:
    """The line an interrupted ``score`` ends with: what was kept and ``--resume DIR``.

    E.g. ``interrupted by Ctrl-C (SIGINT): 6 results kept in runs/x (3 scored, ...), and 4
    units cut short kept as skipped (interrupted; their 8 judge requests are counted);
    continue with --resume runs/x``.
    """
    stopped = interrupt_message()
    if directory is None or not kept:
        return f"{stopped} before scoring started: nothing was written"
    cut = sum(summary.skip_reasons[INTERRUPTED_SKIP] for summary in kept)
    rows = sum(summary.input for summary in kept)
    counts = ", ".join(
        f"{n} {what}"
        for n, what in (
            (sum(s.scored for s in kept), "scored"),
            (sum(s.skipped for s in kept) - cut, "skipped"),
            (sum(s.errored for s in kept), "errored"),
        )
        if n
    )
    line = f"{stopped}: {rows - cut} result(s) kept in {directory}"
    line += f" ({counts})" if counts else ""
    if cut:
        requests = sum(s.run_total.interrupted_requests for s in kept if s.run_total)
        line += (
            f", and {cut} unit(s) cut short kept as skipped ({INTERRUPTED_SKIP}; the "
            f"{requests} judge request(s) they sent are counted)"
        )
    return f"{line}; continue with --resume {directory}"


@dataclass
class _JsonReport:
    """What ``score --json`` reports, filled in as the run goes."""

    plans: list[RunPlan] = field(default_factory=list)
    summaries: list[RunSummary] = field(default_factory=list)
    not_scored: list[str] = field(default_factory=list)
    usage: list[UsageLine] = field(default_factory=list)
    """The usage table's judge lines (the cost of each metric)."""
    gates: list[GateResult] = field(default_factory=list)
    fail_under: list[FailUnderOutcome] = field(default_factory=list)
    inputs: dict[str, Any] | None = None
    """The ingest accounting of the inputs (``IngestReport.to_json()``)."""
    changed_since_judged: list[str] = field(default_factory=list)
    cache: CacheSummary | None = None

    def payload(self, code: int, *, dry_run: bool) -> ScorePayload:
        from agent_eval.cli.json_output import ScorePayload, plan_summary

        first = self.summaries[0] if self.summaries else None
        return ScorePayload(
            run_id=first.run_id if first else None,
            out=str(first.out_dir) if first and first.out_dir else None,
            dry_run=dry_run,
            exit_code=code,
            metrics=[_metric_summary(summary, self.usage) for summary in self.summaries],
            plans=[plan_summary(plan) for plan in self.plans],
            not_scored=self.not_scored,
            gates=self.gates,
            fail_under=self.fail_under,
            inputs=self.inputs,
            changed_since_judged=self.changed_since_judged,
            cache=self.cache,
        )


def _metric_summary(summary: RunSummary, usage: Sequence[UsageLine] = ()) -> MetricSummary:
    """``summary`` with the cost its line of the usage table shows (``None``: no line)."""
    from agent_eval.cli.json_output import MetricSummary

    key = (summary.metric, summary.formatter, summary.judge_model)
    line = next((line for line in usage if line.key == key), None)
    return MetricSummary(
        cost_usd=shown_cost(line) if line is not None else None,
        cost_estimated=line is not None and bool(line.estimated_rows) and not line.all_cached,
        judge_free=line.judge_free if line is not None else summary.judge_model == NO_JUDGE,
        metric=summary.metric,
        formatter=summary.formatter,
        judge_model=summary.judge_model,
        units=summary.input,
        scored=summary.scored,
        skipped=summary.skipped,
        errored=summary.errored,
        resumed=summary.resumed,
        mean_score=summary.mean_score,
        full_scores=summary.full_scores,
        skip_reasons=dict(summary.skip_reasons),
        error_types=dict(summary.error_types),
        input_tokens=summary.input_tokens,
        output_tokens=summary.output_tokens,
        judge_requests=summary.attempts,
        judge_calls=summary.judge_calls,
        cached_calls=summary.cached_calls,
        usage_unknown=summary.usage_unknown,
        estimated_input_tokens=summary.best_input_tokens,
        estimated_output_tokens=summary.best_output_tokens,
        atoms=summary.atoms,
        atoms_passed=summary.atoms_passed,
        atom_units=summary.atom_units,
        wall_seconds=summary.wall_seconds,
        run_total=summary.run_total.to_json() if summary.run_total is not None else None,
    )


def _price_memo(cfg: ScoreConfig) -> CachedPrices | None:
    """Prices kept in the judge-call cache file, unless the cache is off or this is a dry run."""
    if cfg.dry_run or cfg.cache == "off":
        return None
    return CachedPrices(cfg.cache_path or default_cache_path(), read=cfg.cache == "use")


def _run_score(
    cfg: ScoreConfig,
    argv: list[str],
    out: Console,
    *,
    gates: Sequence[Gate],
    events: EventOptions | None,
    report: _JsonReport | None,
    progress: _Progress,
) -> int:
    setup = _setup(cfg)
    try:
        return _run_setup(
            cfg, argv, out, setup, gates=gates, events=events, report=report, progress=progress
        )
    finally:
        setup.traces.close()  # the spooled conversations: removed once the run is over


def _run_setup(
    cfg: ScoreConfig,
    argv: list[str],
    out: Console,
    setup: _Setup,
    *,
    gates: Sequence[Gate],
    events: EventOptions | None,
    report: _JsonReport | None,
    progress: _Progress,
) -> int:
    if report is not None:
        report.plans = setup.plans()  # --json reports the plans: made for it
        report.inputs = setup.inputs.to_json() if setup.inputs is not None else None
    if cfg.dry_run:
        return _dry_run(out, setup)
    judge = setup.judge
    chosen = setup.metrics
    not_configured = 0
    if judge is None and any(m.requires_judge for m in chosen):
        missing = [p for p, m in zip(setup.plans(), chosen, strict=True) if m.requires_judge]
        chosen = [m for m in chosen if not m.requires_judge]
        not_configured = _not_configured(out, missing, cfg, [m.id for m in chosen])
        if report is not None:
            report.not_scored = [plan.metric for plan in missing]
        if not chosen:
            return not_configured
    earlier = _earlier_run(cfg)
    if earlier is not None:
        cfg = cfg.model_copy(update={"out": earlier.directory})
    stack = _wrap(judge, cfg, setup.budget) if judge is not None else None
    engines = _engines(setup, chosen, stack, cfg, earlier.run_id if earlier else new_run_id())
    if earlier is not None:
        done = finished_results(earlier, retry_errors=cfg.retry_errors is not None)
        for engine in engines:
            check_identity(earlier, engine.identity())
            engine.done = done
    progress.engines, progress.directory = engines, output_directory(cfg, engines[0].run_id)
    progress.started_at = utc_now()
    try:
        record = run_record(cfg, setup.model)
        summaries = event_loop.run(
            _score(
                engines,
                setup.traces,
                cfg,
                argv,
                record,
                events=events or EventOptions(),
                renderings=setup.renderings,
                agent=setup.agent_usage,
                report=report,
            )
        )
    finally:
        if stack is not None and stack.cache is not None:
            stack.cache.close()
    if report is not None:
        report.summaries = summaries
    return _finish(
        out,
        summaries,
        setup=setup,
        stack=stack,
        cfg=cfg,
        gates=gates,
        not_configured=not_configured,
        report=report,
    )


@dataclass(kw_only=True)
class _Setup:
    """What a score run works from, read before any judge call.

    The conversations are spooled (:class:`~agent_eval.run.spool.TraceSpool`): every pass over
    them (plans; one read for the files beside the results and the agent usage; each engine)
    reads them back one at a time, so memory is bounded by what a pass holds, not by the input.
    The plans (prompt tokens, cost) are made only when shown (``--dry-run``, no judge): a run
    that scores needs none of their counts. Every rendering goes through ``renderings``, so
    each conversation is rendered once per formatter (plan, engines, ``renderings.jsonl``).
    """

    traces: TraceSpool
    metrics: list[Metric]
    formatter: Formatter[Any]
    references: dict[str, str]
    model: str | None
    budget: Budget
    cfg: ScoreConfig
    prices: PriceTable
    renderings: RenderCache = field(default_factory=RenderCache)
    agent_usage: AgentUsageGroups = field(default_factory=AgentUsageGroups)
    """The agent's usage, counted by the run's first read of the conversations."""
    _plans: list[RunPlan] | None = None
    judge: Judge | None = None
    """The judge, built before any input was read (``None`` in a dry run or without one)."""
    inputs: IngestReport | None = None
    """The ingest accounting of the inputs (files, spans, records; ``ingest --json``'s)."""

    def plans(self) -> list[RunPlan]:
        """One plan per metric (made on first call)."""
        if self._plans is None:
            self._plans = [
                plan_run(
                    self.traces,
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


def _setup(cfg: ScoreConfig) -> _Setup:
    # usage errors (a bad --metric, formatter or judge) first: exit 2 before any input is read
    for location in cfg.formatter_path:
        load_formatters(location)
    chosen, formatter = _metrics(cfg), get_formatter(cfg.formatter)
    check_judge_kind(cfg)
    model = _plan_model(cfg) if cfg.dry_run else judge_model(cfg)
    # every run builds its judge here, a dry run too (a bad factory, config or a missing GGUF
    # file is a usage error before any input is read); a dry run then closes it, calling none
    judge = _judge_for(chosen, model, cfg) if not _key_missing(cfg) else None
    if cfg.dry_run and judge is not None:
        close_unused(judge)
        judge = None
    budget = Budget.from_config(cfg, model or cfg.judge or "")
    judged = any(m.requires_judge for m in chosen) and model is not None
    if judge is not None or (cfg.dry_run and judged):
        budget.check_priced()  # --max-cost without a price: refused, in a dry run too
    renderings = RenderCache()
    traces, inputs = read_inputs(cfg.paths, cfg.format, renderings)
    try:
        traces = _with_turn_labels(_with_tool_references(traces, cfg), cfg)
        references = _references(cfg, traces)
    except BaseException:
        traces.close()
        raise
    prices = PriceTable.from_config(cfg.prices)
    return _Setup(
        traces=traces, metrics=chosen, formatter=formatter, references=references,
        model=model, budget=budget, cfg=cfg, prices=prices, judge=judge, inputs=inputs,
        renderings=renderings,
    )  # fmt: skip


def _dry_run(out: Console, setup: _Setup) -> int:
    for plan in setup.plans():
        print_table(out, plan.table())
    line = plan_budget_line(setup.budget, setup.plans())
    if line is not None:
        out.print(line, highlight=False)
    return 0


def _engines(
    setup: _Setup, chosen: list[Metric], stack: JudgeStack | None, cfg: ScoreConfig, run_id: str
) -> list[Engine]:
    return [
        Engine(
            metric=metric,
            formatter=setup.formatter,
            judge=stack.judge if stack is not None and metric.requires_judge else None,
            run_id=run_id,
            concurrency=cfg.concurrency,
            max_context_tokens=cfg.max_context_tokens,
            references=setup.references,
            progress=True,
            console=err_console,
            keep_results=False,
            budget=setup.budget,
            renderings=setup.renderings,
            keep_interrupted=True,  # --resume scores the units an interrupt cut short again
        )
        for metric in chosen
    ]


def _finish(
    out: Console,
    summaries: list[RunSummary],
    *,
    setup: _Setup,
    stack: JudgeStack | None,
    cfg: ScoreConfig,
    gates: Sequence[Gate],
    not_configured: int = 0,
    report: _JsonReport | None = None,
) -> int:
    """Print the summaries, usage and budget line; the exit code.

    2 (``not_configured``) when judged metrics could not run, said once more, last; else 4
    when nothing was scored; else 4 when a metric scored no unit and some of its units
    errored (a dead judge endpoint: that metric did not run, whatever the others did; after
    the gates, which are still reported); else the gates' code.
    """
    spent = _spent(summaries[0])
    for summary in summaries:
        if spent is not None:  # the run's whole spend, beside this invocation's
            summary.run_total = spent.run_total(summary.metric)
        print_table(out, summary.table())
        out.print(summary.accounting_line, highlight=False)
    usage = _print_usage(out, spent, setup.agent_usage, stack, cfg)
    if report is not None:
        report.usage = usage
        report.cache = _cache_summary(stack)
    skipped = sum(summary.skip_reasons[BUDGET_SKIP] for summary in summaries)
    line = budget_line(setup.budget, skipped, str(summaries[0].out_dir or summaries[0].run_id))
    if line is not None:
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    if not_configured:  # the judge-free metrics ran, the judged ones could not: exit 2
        err_console.print(
            "[bold red]error:[/] no judge is configured, so the judged metrics were not scored "
            "(their plan is above); the judge-free metrics' results are written",
            highlight=False,
            soft_wrap=True,
        )
        return not_configured
    if all(summary.nothing_scored() is not None for summary in summaries):
        return _nothing_scored(summaries[0])
    code = _gates_code(summaries, cfg, gates, out, report)
    failed = [s for s in summaries if s.errored and s.nothing_scored() is not None]
    return _metrics_not_scored(failed) if failed else code


def _cache_summary(stack: JudgeStack | None) -> CacheSummary | None:
    """The judge-call cache's counts for ``--json`` (``None``: no judge or ``--no-cache``)."""
    cached = stack.cached if stack is not None else None
    if cached is None:
        return None
    from agent_eval.cli.json_output import CacheSummary

    return CacheSummary(
        hits=cached.hits,
        calls=cached.misses,
        endpoint=cached.endpoint,
        other_endpoint_hits=cached.other_endpoint_hits,
        other_endpoints=dict(cached.other_endpoints),
        unknown_endpoint_hits=cached.unknown_endpoint_hits,
    )


def _with_tool_references(traces: TraceSpool, cfg: ScoreConfig) -> TraceSpool:
    """``traces`` with the ``--tool-references`` file's reference calls (checked), if any."""
    if cfg.tool_references is None:
        return traces
    references = load_reference_calls(cfg.tool_references)
    check_references(references, traces.conversation_ids, cfg.tool_references)
    return traces.rewrite(lambda spooled: with_reference_calls(spooled, references))


def _gates_code(
    summaries: list[RunSummary],
    cfg: ScoreConfig,
    gates: Sequence[Gate],
    out: Console,
    report: _JsonReport | None = None,
) -> int:
    """``--fail-under`` and the gates over each metric's summary: 0, or the gate exit code.

    A ``mean_score`` gate counts the units scoring 1 (:attr:`RunSummary.full_scores`) of those
    scored ``ok``, never a sum of scores: two units scoring 0.75 are 0 successes of 2, so a
    run whose mean is below the threshold fails, as ``--fail-under`` does on the same run.
    The outcomes go to stderr and, with ``--json``, into ``report``.
    """
    code = max(_gate(summary, cfg.fail_under, out, report) for summary in summaries)
    single = len(summaries) == 1
    counts = [
        GateCount(
            subject="run" if single else summary.metric,
            successes=summary.full_scores,
            n=summary.scored,
            note=(
                f"units scoring 1; mean score {summary.mean_score:.3f}"
                if summary.fractional and summary.mean_score is not None
                else ""
            ),
        )
        for summary in summaries
    ]
    atoms = [
        GateCount(
            subject="run" if single else summary.metric,
            successes=summary.atoms_passed,
            n=summary.atoms,
        )
        for summary in summaries
        if summary.atom_units
    ]
    outcomes = gate_outcomes(gates, {"mean_score": counts, "atoms": atoms})
    if report is not None:
        from agent_eval.cli.json_output import GateResult

        report.gates = [
            GateResult(
                name=o.gate.name,
                statistic=o.gate.statistic,
                source=o.gate.source,
                threshold=o.gate.threshold,
                items=o.gate.items,
                subject=o.count.subject,
                successes=o.count.successes,
                n=o.count.n,
                needed=o.gate.required,
                passed=o.passed,
                message=o.message,
            )
            for o in outcomes
        ]
    return EXIT_GATE if any(not o.passed for o in outcomes) else code


def _with_turn_labels(traces: TraceSpool, cfg: ScoreConfig) -> TraceSpool:
    """``traces`` with the ``--turn-labels`` file attached (checked: names file and line).

    The labels are checked against every conversation at once, so this rewrite holds the
    input's conversations in memory while it runs (only with ``--turn-labels``).
    """
    if cfg.turn_labels is None:
        return traces
    rows, path = load_turn_labels(cfg.turn_labels), cfg.turn_labels
    return traces.rewrite(lambda spooled: attach_turn_labels(spooled, rows, path))


def _references(cfg: ScoreConfig, traces: TraceSpool) -> dict[str, str]:
    """The ``--references`` file's references (checked against the traces), or none."""
    if cfg.references is None:
        return {}
    references = load_references(cfg.references)
    check_references(references, traces.conversation_ids, cfg.references)
    return references


def _key_missing(cfg: ScoreConfig) -> bool:
    """A dry run whose key variable is unset: warned about, and no judge built."""
    return cfg.dry_run and key_env_problem(cfg) is not None


def close_unused(judge: Judge) -> None:
    """Close a judge built only to check it (a dry run): its clients, without a call."""
    event_loop.run(judge.aclose())


def _judge_for(chosen: list[Metric], model: str | None, cfg: ScoreConfig) -> Judge | None:
    """The judge for the judged metrics of ``chosen``; ``None`` when none is needed or set."""
    if model is None or not any(m.requires_judge for m in chosen):
        return None
    try:
        return build_judge(cfg, model)
    except JudgeNotConfiguredError:
        return None


def _earlier_run(cfg: ScoreConfig) -> RunRef | None:
    """The run ``--resume`` or ``--retry-errors`` continues, or ``None`` for a new run."""
    if cfg.resume and cfg.retry_errors:
        raise ConfigError("give --resume or --retry-errors, not both")
    run = cfg.resume or cfg.retry_errors
    return None if run is None else find_run(run, cfg.out)


def plan_budget_line(budget: Budget, plans: Sequence[RunPlan], repeats: int = 1) -> str | None:
    """Whether the plans fit the budget, in one line; ``None`` when no budget is set.

    ``repeats`` (``stability``) multiplies the plans' judge tokens and cost.
    """
    if not budget.limited:
        return None
    tokens = repeats * sum(p.prompt_tokens + p.output_tokens for p in plans)
    costs = [p.cost_usd for p in plans if not p.judge_free]
    cost = None if any(c is None for c in costs) else repeats * sum(c or 0.0 for c in costs)
    fits = budget.plan_fits(tokens, cost)
    verdict = {True: "fits", False: "does NOT fit", None: "cannot be checked (no price)"}[fits]
    return f"budget: the plan ({tokens:,} judge tokens estimated) {verdict} ({budget.remaining()})"


def _wrap(judge: Judge, cfg: ScoreConfig, budget: Budget | None = None) -> JudgeStack:
    """The judge in rate limits, the budget and the judge-call cache, as configured."""
    return wrap_judge(
        judge,
        cache_mode=cfg.cache,
        cache_path=cfg.cache_path or default_cache_path(),
        requests_per_minute=cfg.rpm,
        tokens_per_minute=cfg.tpm,
        parameters={"mode": cfg.mode},
        budget=budget,
        endpoint=cache_endpoint(cfg),
    )


class _Spent:
    """What a run's rows and the rows they replaced add up to, read once from the store.

    The rows stream from ``results.db`` one at a time (:func:`iter_results`) into the tallies
    the end of ``score`` prints: per metric the run total (:class:`UsageTally`), the usage
    table's judge lines and stage lines (:class:`JudgeUsageGroups`) and the per-unit atom
    lines (:class:`_UnitLines`). No row is kept, so the memory is that of the groups, not of
    the run's rows (a 1 GB input's 42k rows with their reasons held ~140 MiB).
    """

    def __init__(self, directory: Path, run_id: str) -> None:
        self.metrics: dict[str, UsageTally] = {}
        self.judge = JudgeUsageGroups()
        self.stages = JudgeUsageGroups(by_stage=True)
        self.units = _UnitLines()
        for row, replaced in _run_rows(directory, run_id):
            tally = self.metrics.get(row.metric)
            if tally is None:
                tally = self.metrics[row.metric] = UsageTally()
            tally.add(row, replaced=replaced)
            self.judge.add(row, replaced=replaced)
            self.stages.add(row, replaced=replaced)
            if not replaced:
                self.units.add(row)

    def run_total(self, metric: str) -> RunUsage:
        """The run's usage over every invocation, of ``metric``'s rows."""
        tally = self.metrics.get(metric)
        return tally.usage() if tally is not None else RunUsage()


def _spent(summary: RunSummary) -> _Spent | None:
    """The run's spend, from its store (``None``: not stored)."""
    if summary.out_dir is None:
        return None
    return _Spent(summary.out_dir, summary.run_id)


def _print_usage(
    out: Console,
    spent: _Spent | None,
    agent: AgentUsageGroups,
    stack: JudgeStack | None,
    cfg: ScoreConfig,
) -> list[UsageLine]:
    """Cache hits, then judge tokens and cost by metric/formatter/model, and agent usage.

    The judge lines count the run's rows and the rows they replaced (``spent``), so they add
    up to the run's total (the summary's "run total" after a ``--resume``).
    Returns the judge lines of the usage table (empty when the results were not stored).
    """
    line = stack.cache_line() if stack is not None else None
    if line is not None:
        out.print(line, highlight=False, markup=False)
    unreachable = stack.unreachable_line() if stack is not None else None
    if unreachable is not None:  # stderr: why nothing was judged, also under --json
        err_console.print(unreachable, highlight=False, markup=False, soft_wrap=True)
    warning = stack.other_endpoint_warning() if stack is not None else None
    if warning is not None:  # stderr too: a --json run shows no cache line
        err_console.print(warning, highlight=False, markup=False, soft_wrap=True)
    if spent is None:
        return []
    prices = PriceTable.from_config(cfg.prices)
    judge = spent.judge.lines(prices)
    print_table(out, usage_table(judge, agent.lines(prices)))
    stages = spent.stages.lines(prices)
    if stages:
        print_table(out, stage_table(stages))
    failing = spent.units.text()
    if failing:
        out.print(failing, highlight=False)
    return judge


def unit_lines(rows: Iterable[MetricResult], limit: int = 10) -> str:
    """Per-unit pass/fail of atom-scored rows as ``k of n``: the units with failing atoms.

    Says, per metric, how many of its scored units had every atom pass (``metric k of n``; a
    unit scored by four metrics counts once under each), then lists up to ``limit`` units
    (lowest share first; ties by metric, subject, then :data:`RESULT_KEY` order) with their
    first failing atom; ``""`` when no row carries atoms. ``rows`` is consumed once,
    streaming (:class:`_UnitLines`).
    """
    lines = _UnitLines(limit)
    for row in rows:
        lines.add(row)
    return lines.text()


class _UnitLines:
    """:func:`unit_lines` counted row by row, keeping only the ``limit`` lowest units' lines."""

    def __init__(self, limit: int = 10) -> None:
        self.limit = limit
        self.per_metric: dict[str, list[int]] = {}  # metric -> [units every atom passed, scored]
        self.failing = 0
        self._lowest: list[tuple[tuple[Any, ...], str]] = []  # (order, line), >= limit kept

    def add(self, row: MetricResult) -> None:
        """Count ``row`` (only ``ok`` rows with atoms count)."""
        atoms = row.atoms
        if row.status != "ok" or not atoms:
            return
        counts = self.per_metric.setdefault(row.metric, [0, 0])
        counts[1] += 1
        first = next((a for a in atoms if not a.passed), None)
        if first is None:
            counts[0] += 1
            return
        self.failing += 1
        order = (row.score or 0.0, row.metric, row.subject, result_key(row))
        self._lowest.append(
            (
                order,
                f"  {row.metric} {row.subject}: {sum(a.passed for a in atoms)} of {len(atoms)} "
                f"passed; first failing ({first.label}): {first.text}",
            )
        )
        if len(self._lowest) >= 2 * self.limit + 64:  # keep the lowest ``limit``
            self._lowest = heapq.nsmallest(self.limit, self._lowest, key=lambda item: item[0])

    def text(self) -> str:
        """The lines (``""`` when no row carried atoms)."""
        if not self.per_metric:
            return ""
        shares = "; ".join(
            f"{metric} {k} of {n}" for metric, (k, n) in sorted(self.per_metric.items())
        )
        lowest = heapq.nsmallest(self.limit, self._lowest, key=lambda item: item[0])
        lines = [f"units with every atom passed: {shares}", *(line for _, line in lowest)]
        if self.failing > self.limit:
            lines.append(f"  ... and {self.failing - self.limit} more (see results.jsonl)")
        return "\n".join(lines)


def run_config(engines: Sequence[Engine], cfg: ScoreConfig) -> dict[str, Any]:
    """The ``runs`` table config: the first engine's identity, every metric's under ``metrics``."""
    config = engines[0].identity() | {"mode": cfg.mode, "base_url": redact_url(cfg.base_url)}
    if len(engines) > 1:
        config["metrics"] = {engine.metric.id: engine.identity() for engine in engines}
    return config


async def _score(
    engines: list[Engine],
    traces: TraceSpool,
    cfg: ScoreConfig,
    argv: list[str],
    record: dict[str, Any],
    *,
    events: EventOptions,
    renderings: RenderCache,
    agent: AgentUsageGroups,
    report: _JsonReport | None = None,
) -> list[RunSummary]:
    run_id = engines[0].run_id
    directory = output_directory(cfg, run_id)
    secret = os.environ.get(cfg.api_key_env, "")
    judges = {id(e.judge): e.judge for e in engines if e.judge is not None}
    pinned = _pin_decompositions(engines, cfg)
    with ResultStore(directory, exclusive=True) as store:
        store.start_run(
            RunRecord(
                run_id=run_id,
                started_at=utc_now(),
                config=run_config(engines, cfg),
                argv=redact_argv(argv, (secret,)),
                record=record,
            )
        )
        # what the judge saw, for `agent-eval report` (the formatter is pure: same text again)
        formatters = {e.formatter.identity: e.formatter for e in engines if e.metric.uses_formatter}
        identities = sorted(formatters)
        targets: dict[str, SpanTarget] = {}
        first = _first_pass(
            traces,
            [formatters[identity] for identity in identities],
            renderings,
            agent,
            targets if events.enabled else None,
        )
        if engines and engines[0].done:  # resumed: keep what the finished rows were judged on
            for _ in first:
                pass
            texts = dict(traces.sorted_renderings(identities))
            kept = _changed_since_judged(engines, traces, directory, renderings, texts)
            if report is not None:
                report.changed_since_judged = list(kept.changed)
            write_renderings(directory, texts)
            write_conversations(directory, kept.conversations)
        else:
            write_conversations(directory, first)  # the same read renders them
            write_rendering_items(directory, traces.sorted_renderings(identities))
        if any(e.metric.unit_kind == "answer" for e in engines):
            write_units(directory, traces)  # the contexts atoms quote
            write_turns(directory, traces)  # the per-turn RAG view, for `agent-eval rag`
        emitter = events.build(directory, targets)
        summaries = []
        try:
            for engine in engines:
                engine.store = store
                if emitter is not None:
                    engine.on_result = (*engine.on_result, emitter.emit)
                summaries.append(await engine.run(traces, total=len(traces)))
        finally:
            for judge in judges.values():
                await judge.aclose()
            if pinned is not None:
                pinned.close()
            if emitter is not None:  # export failures are counted and shown, never fatal
                err_console.print(emitter.close().line(), highlight=False, soft_wrap=True)
        return summaries


def _first_pass(
    traces: Iterable[AgentTrace],
    formatters: Sequence[Formatter[Any]],
    renderings: RenderCache,
    agent: AgentUsageGroups,
    targets: dict[str, SpanTarget] | None,
) -> Iterator[AgentTrace]:
    """``traces``, each rendered with ``formatters`` and counted on the way.

    One read of the spooled conversations gives what the run needs of each before any judge
    call: its renderings (``renderings.jsonl``; the spool keeps each one made here for the
    engines), the agent usage table's counts (``agent``) and, when evaluation events are on,
    its span target (``targets``, as :func:`targets_by_conversation`: the last conversation of
    an id wins). The consumer (``conversations.jsonl``'s writer) is the same read, so a fresh
    run reads each conversation twice in all: here and in the engine (s6: five times).
    """
    for trace in traces:
        for formatter in formatters:
            renderings.render(trace, formatter)
        agent.add(trace)
        if targets is not None:
            targets.update(targets_by_conversation((trace,)))
        yield trace


MAX_CHANGED_SHOWN = 10
"""Conversation ids the ``--resume`` warning lists before ``...``."""


@dataclass
class _Kept:
    """What a continued run keeps of its earlier invocation's view of the conversations."""

    changed: tuple[str, ...]
    """Finished conversations whose rendering (or, for judge-free metrics, messages) changed."""
    conversations: list[AgentTrace]
    """What ``conversations.jsonl`` holds: a changed conversation none of whose units is
    judged again keeps the messages its verdicts were given on."""


def _changed_since_judged(
    engines: Sequence[Engine],
    traces: Iterable[AgentTrace],
    directory: Path,
    renderings: RenderCache,
    texts: dict[tuple[str, str], str],
) -> _Kept:
    """Find the finished conversations that changed since they were judged; warn on stderr.

    ``--resume`` and ``--retry-errors`` never re-judge a finished unit (documented), but a
    re-run on a newer export (spans still arriving) can hold more of a conversation than its
    verdict saw. A conversation changed when its rendering with a kept row's formatter differs
    from the earlier ``renderings.jsonl`` (judge-free metrics: its messages differ from the
    earlier ``conversations.jsonl``). The verdict is kept, and so is what it was given on:
    for a changed conversation with no unit left to judge, ``texts`` (updated in place) keeps
    the earlier rendering and the result keeps the earlier conversation, so the report shows
    what the judge saw. The warning names the conversations (the first
    :data:`MAX_CHANGED_SHOWN`). Only a resumed run comes here (``engines[0].done`` holds its
    finished rows), and it holds the run's renderings and kept conversations while it compares
    them (a fresh run streams them from the spool).
    """
    judged: dict[str, set[str]] = {}  # conversation id -> metrics with a finished row
    for row in engines[0].done.values():
        judged.setdefault(row.conversation_id, set()).add(row.metric)
    earlier_texts = read_renderings(directory)
    earlier = read_conversations(directory, judged)
    changed: list[str] = []
    conversations = []
    for trace in traces:
        cid = trace.conversation_id
        metrics = judged.get(cid, set())
        if not any(
            _differs(engine, trace, earlier_texts, earlier.get(cid), renderings)
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
        err_console.print(
            f"warning: {len(changed)} finished conversation(s) changed since they were judged "
            f"(kept: --resume never re-judges a finished conversation, and the report shows "
            f"what the judge saw; to judge them as they are now, score into a new --out): "
            f"{shown}{more}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return _Kept(changed=tuple(changed), conversations=conversations)


def _differs(
    engine: Engine,
    trace: AgentTrace,
    earlier_texts: dict[tuple[str, str], str],
    earlier: AgentTrace | None,
    renderings: RenderCache,
) -> bool:
    """Whether ``trace`` reads otherwise for ``engine`` than when its finished row was judged.

    The engine's rendering against the earlier ``renderings.jsonl`` text; for a metric that
    reads no rendering, the messages against the earlier ``conversations.jsonl``. Nothing
    earlier to compare with (a run from before these files): not changed.
    """
    if engine.metric.uses_formatter:
        old = earlier_texts.get((trace.conversation_id, engine.formatter_identity))
        return old is not None and old != renderings.render(trace, engine.formatter)
    return earlier is not None and earlier.messages != trace.messages


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


def output_directory(cfg: ScoreConfig, run_id: str) -> Path:
    """Where a score run writes: ``--out``, else ``runs/RUN_ID``."""
    return cfg.out or Path("runs") / run_id


def decompositions_path(out: Path | None) -> Path:
    """``OUT/decompositions.db``, or ``runs/decompositions.db`` without ``--out``."""
    return (out if out is not None else DEFAULT_RUNS_DIR) / DECOMPOSITIONS_FILENAME


def _pin_decompositions(engines: Sequence[Engine], cfg: ScoreConfig) -> DecompositionCache | None:
    """Give the claim-level metrics the run's decomposition cache (``--redecompose``: refresh)."""
    claim_metrics = [e.metric for e in engines if isinstance(e.metric, ClaimMetric)]
    if not claim_metrics:
        return None
    cache = DecompositionCache(decompositions_path(cfg.out), refresh=cfg.redecompose)
    for metric in claim_metrics:
        metric.decompositions = cache
    return cache


def _plan_model(cfg: ScoreConfig) -> str | None:
    """The judge model for a dry run: an unset key variable is a warning, not an error."""
    problem = key_env_problem(cfg)
    if problem is not None:
        message = f"{problem} (a dry run calls no judge)"
        err_console.print(
            f"[bold yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True
        )
    return configured_model(cfg)


def _not_configured(
    out: Console, plans: list[RunPlan], cfg: ScoreConfig, judge_free: Sequence[str] = ()
) -> int:
    """Print the judged metrics' plans and how to configure a judge; the exit code (2)."""
    for plan in plans:
        print_table(out, plan.table())
    err_console.print(
        f"[bold red]error:[/] {escape(missing_judge(cfg))}", highlight=False, soft_wrap=True
    )
    how = HOW_TO_CONFIGURE.format(default=DEFAULT_JUDGE)
    if judge_free:  # the judge-free metrics still run: say what was not scored
        unscored = ", ".join(plan.metric for plan in plans)
        how = how.replace(
            "so nothing was scored",
            f"so {unscored} {'was' if len(plans) == 1 else 'were'} not scored "
            f"({', '.join(judge_free)} need none and are scored)",
        )
    err_console.print(
        how,
        highlight=False,
        markup=False,
        soft_wrap=True,
    )
    return EXIT_USAGE


def _nothing_scored(summary: RunSummary) -> int:
    """Say in one line why no conversation was scored, and where to look; exit code 4."""
    where = summary.out_dir or summary.run_id
    see = (
        f"list the errors with: agent-eval errors {where}"
        if summary.errored
        else "the skip reasons are in the summary above"
    )
    message = f"{summary.nothing_scored()}; {see}"
    err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return EXIT_NOTHING_SCORED


def _metrics_not_scored(failed: Sequence[RunSummary]) -> int:
    """Name each metric that scored nothing though others did, and why; exit code 4.

    ``error: goal_accuracy@1: nothing was scored: all 27 conversations errored (mostly
    judge_unavailable: 27 of 27); the other metrics' results are written; list the errors
    with: agent-eval errors runs/fixtures``.
    """
    for summary in failed:
        where = summary.out_dir or summary.run_id
        message = (
            f"{summary.metric}: {summary.nothing_scored()}; the other metrics' results are "
            f"written; list the errors with: agent-eval errors {where}"
        )
        err_console.print(f"[bold red]error:[/] {escape(message)}", highlight=False, soft_wrap=True)
    return EXIT_NOTHING_SCORED


def _gate(
    summary: RunSummary, fail_under: float | None, out: Console, report: _JsonReport | None
) -> int:
    """``--fail-under`` on one metric's mean score: 0, or the gate exit code (1).

    The line names the metric (a run of several metrics fails on one of them).
    """
    if fail_under is None:
        return 0
    mean = summary.mean_score
    passed = mean is not None and mean >= fail_under
    if report is not None:
        from agent_eval.cli.json_output import FailUnderOutcome

        report.fail_under.append(
            FailUnderOutcome(
                metric=summary.metric, mean_score=mean, threshold=fail_under, passed=passed
            )
        )
    if not passed:
        shown = "nothing scored" if mean is None else f"mean score {mean:.3f}"
        err_console.print(
            f"gate failed: {summary.metric} {shown} < --fail-under {fail_under}",
            highlight=False,
            markup=False,
        )
        return EXIT_GATE
    out.print(
        f"gate passed: {summary.metric} mean score {mean:.3f} >= {fail_under}",
        highlight=False,
        markup=False,
    )
    return 0


@app.command(cls=HelpCommand)
def score(  # noqa: PLR0917  (a typer command: one parameter per flag)
    paths: PathsArg = None,
    metric: MetricOpt = None,
    with_reference: WithReferenceOpt = None,
    references: ReferencesOpt = None,
    tool_references: Annotated[
        Path | None,
        typer.Option(help="JSONL/CSV of {conversation_id, tool_calls}: expected tool calls."),
    ] = None,
    turn_labels: Annotated[
        Path | None,
        typer.Option(help="JSONL of per-turn labels: {conversation_id, turn, relevance, ...}."),
    ] = None,
    formatter: FormatterOpt = None,
    formatter_path: FormatterPathOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    mode: ModeOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    max_context_tokens: MaxContextTokensOpt = None,
    temperature: TemperatureOpt = None,
    out: OutOpt = None,
    config: ConfigOpt = None,
    dry_run: DryRunOpt = False,
    fail_under: Annotated[
        float | None, typer.Option(help="Exit 1 when a metric's mean score is below this.")
    ] = None,
    format: FormatOpt = None,
    no_cache: NoCacheOpt = False,
    refresh_cache: RefreshCacheOpt = False,
    cache_path: CachePathOpt = None,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_judge_tokens: MaxJudgeTokensOpt = None,
    max_cost: MaxCostOpt = None,
    resume: Annotated[
        str | None, typer.Option(help="Continue an interrupted run: RUN_ID or its directory.")
    ] = None,
    retry_errors: Annotated[
        str | None, typer.Option(help="Score again only the errored conversations of RUN.")
    ] = None,
    gate: GateOpt = None,
    redecompose: Annotated[
        bool,
        typer.Option(
            "--redecompose",
            help="Claim-level metrics split answers again instead of reusing the statements "
            "pinned in OUT/decompositions.db.",
        ),
    ] = False,
    otlp_endpoint: OtlpEndpoint = None,
    events_file: EventsFile = False,
    as_json: JsonOpt = False,
) -> None:
    """Score conversations with metrics; results go to DIR/results.jsonl and results.db.

    Judge-free metrics (tool_call_accuracy, trajectory_match, tool_errors, loops) need no
    judge. Exit codes: 0 done, at least one conversation scored; 1 --fail-under or a --gate
    failed; 2 a usage or configuration error (no judge configured for a judged metric, even
    when judge-free ones were scored; the variable named by --api-key-env unset); 3 no input
    readable; 4 nothing scored (every conversation errored or was skipped), or a metric
    scored nothing and errored (a dead judge endpoint) while others scored, named on stderr
    (see agent-eval errors DIR); 5 the output cannot be written, or another run holds its
    lock; 130 Ctrl-C and 143 SIGTERM, after keeping every finished result and what the units
    cut short spent (continue with --resume DIR).

    Cost: prices from the [prices] config table, then genai-prices (bundled, never fetched);
    n/a for an unknown model. Usage the endpoint did not report is estimated and marked ~;
    calls answered from the judge-call cache are counted as cached and cost $0 in this run.
    """
    overrides = config_overrides(locals()) | {
        "tool_references": tool_references,
        "turn_labels": turn_labels,
        "formatter": formatter,
        "fail_under": fail_under,
        "resume": resume,
        "retry_errors": retry_errors,
        "redecompose": redecompose or None,
    }
    try:
        gates = gates_from(config_path(config), gate or [], statistics=SCORE_STATISTICS)
        events = EventOptions(otlp_endpoint=otlp_endpoint, events_file=events_file)
        cfg = load_config(config, **overrides)
        code = run_score(cfg, sys.argv, gates=gates, events=events, as_json=as_json)
    except AgentEvalError as exc:
        err_console.print(
            f"[bold red]error:[/] {escape(str(exc))}", highlight=False, soft_wrap=True
        )
        raise typer.Exit(exit_code(exc)) from None
    raise typer.Exit(code)
