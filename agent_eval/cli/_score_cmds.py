"""``agent-eval score PATH...``: score conversations with a metric, a formatter and a judge.

Ingests the inputs, plans the run (conversations, judge calls, prompt tokens, estimated cost),
and, unless ``--dry-run``, scores every conversation through the engine, writing
``DIR/results.jsonl`` and ``DIR/results.db`` as results complete. A progress bar goes to stderr;
the summary table and the line ``scored + skipped + errored = units`` follow.

With no judge configured the plan is shown with how to configure one, and the exit code is 2;
judge-free metrics named with the judged ones (``--metric tool_call_accuracy,goal_accuracy``)
are still scored and written first.
Exit codes (:mod:`agent_eval.cli._exit_codes`): 0 done; 1 ``--fail-under`` or a gate failed; 2
usage or configuration error (no judge configured, the variable named by ``--api-key-env``
unset while the endpoint is not on this machine); 3 no input readable; 4 no conversation was
scored (every one errored or was skipped: the line names the dominant reason), or one metric
scored none and some of its units errored while other metrics scored (a line per such metric);
5 the output directory cannot be written or another run holds its lock.
Every setting can come from ``agent-eval.toml`` (see :mod:`agent_eval.config`).
"""

from __future__ import annotations

import io
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import Annotated

import typer
from rich.console import Console
from rich.markup import escape

from agent_eval._costs import (
    remembered_prices,
)
from agent_eval.analysis._gates import Gate
from agent_eval.cli._analysis_options import config_path, gates_from
from agent_eval.cli._app import (
    app,
    err_console,
    interrupt_exit_code,
)
from agent_eval.cli._event_options import EventOptions, EventsFile, OtlpEndpoint
from agent_eval.cli._exit_codes import exit_code
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._judge_setup import (
    HOW_TO_CONFIGURE,
    build_judge,
    built_settings,
    cache_endpoint,
    check_judge_kind,
    configured_model,
    judge_model,
    key_env_problem,
)
from agent_eval.cli._score_inputs import read_inputs, read_inputs_on_ray
from agent_eval.cli._score_output import (
    EXIT_NOTHING_SCORED,
    finish,
    interrupt_line,
    not_configured,
    plan_budget_line,
    print_dry_run,
)
from agent_eval.cli._score_report import ScoreReport, metric_summary
from agent_eval.cli._scoring_options import (
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
from agent_eval.config import ScoreConfig, load_config
from agent_eval.errors import AgentEvalError, JudgeNotConfiguredError
from agent_eval.formatting import load_formatters
from agent_eval.formatting._registry import get_formatter
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import Metric
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._artifacts import decompositions_path
from agent_eval.run._cache import CachedPrices
from agent_eval.run._judge_stack import default_cache_path
from agent_eval.run._session import (
    Executor,
    RunSession,
    SessionHooks,
    build_metrics,
    output_directory,
    redact_argv,
    run_config,
)
from agent_eval.run._spend import RunSpend, unit_lines

__all__ = [
    "EXIT_NOTHING_SCORED",
    "HOW_TO_CONFIGURE",
    "build_judge",
    "close_unused",
    "decompositions_path",
    "judge_model",
    "output_directory",
    "plan_budget_line",
    "redact_argv",
    "run_config",
    "run_score",
    "score",
    "unit_lines",
]

SCORE_STATISTICS = ("mean_score", "atoms")
"""What ``score`` measures for gates: ``atoms`` only for metrics scored from atoms."""


_Spent = RunSpend  # the name tests and older callers import


def _notice(line: str) -> None:
    """A session's notice, on stderr as plain text."""
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)


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

    The run is a :class:`~agent_eval.run._session.RunSession` (several metrics in one run, one
    engine per metric over the same conversations, into the same store and run id; resume,
    the judge stack, the run directory); this function parses nothing and prints what the
    session returns. Judge-free metrics run with no judge configured; judged ones then print
    their plan and how to configure a judge, and the exit code is 2 after the judge-free
    metrics' results are written. With ``as_json`` the tables are not printed and the
    ``score`` document (:class:`~agent_eval.cli._json_output.ScorePayload`) is written to
    stdout instead, the exit code in it.

    Raises:
        AgentEvalError: a usage, configuration or input error (the caller exits 2).

    """
    report = ScoreReport() if as_json else None
    out = Console(file=io.StringIO()) if as_json else console or Console()
    held: list[RunSession] = []
    try:
        with remembered_prices(_price_memo(cfg)):
            code = _run_score(cfg, argv, out, gates=gates, events=events, report=report, held=held)
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: say what was kept, then stop as asked
        _report_interrupt(held[0] if held else None, report)
        raise
    if report is not None:
        from agent_eval.cli._json_output import emit_json

        emit_json("score", report.payload(code, dry_run=cfg.dry_run))
    return code


def _report_interrupt(session: RunSession | None, report: ScoreReport | None) -> None:
    """After an interrupt: what the store kept and how to continue (stderr); ``--json``'s doc.

    Never raises: the interrupt on its way out must stay the error.
    """
    try:
        kept = session.kept() if session is not None else []
    except AgentEvalError as exc:  # the store cannot be read: say so, keep the interrupt
        err_console.print(f"could not read what the run kept: {escape(str(exc))}")
        kept = []
    directory = session.directory if session is not None else None
    line = interrupt_line(kept, directory)
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    if report is not None:
        import contextlib

        from agent_eval.cli._json_output import emit_interrupted

        report.summaries = kept
        with contextlib.suppress(OSError):  # stdout gone (| head): stderr has the line
            emit_interrupted(
                "score",
                interrupt_exit_code(),
                line,
                run_id=kept[0].run_id if kept else None,
                out=str(directory) if directory and kept else None,
                metrics=[metric_summary(summary) for summary in kept],
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
    report: ScoreReport | None,
    held: list[RunSession],
) -> int:
    session = _session(cfg, argv, events)
    held.append(session)
    try:
        if cfg.engine == "local":
            traces, inputs = read_inputs(cfg.paths, cfg.format, session.renderings)
        else:  # read and regrouped on the cluster the run scores on
            address = cfg.engine.partition(":")[2] or None
            traces, inputs = read_inputs_on_ray(cfg.paths, cfg.format, address, session.renderings)
        session.read(traces, inputs)
        return _run_session(cfg, out, session, gates=gates, report=report)
    finally:
        session.close()  # the spooled conversations: removed once the run is over


def _session(cfg: ScoreConfig, argv: list[str], events: EventOptions | None) -> RunSession:
    """The run's session, its judge built: usage errors before any input is read (exit 2)."""
    for location in cfg.formatter_path:
        load_formatters(location)
    chosen, formatter = build_metrics(cfg), get_formatter(cfg.formatter)
    check_judge_kind(cfg)
    model = _plan_model(cfg) if cfg.dry_run else judge_model(cfg)
    # every run builds its judge here, a dry run too (a bad factory, config or a missing GGUF
    # file is a usage error before any input is read); a dry run then closes it, calling none
    judge = _judge_for(chosen, model, cfg) if not _key_missing(cfg) else None
    if cfg.dry_run and judge is not None:
        close_unused(judge)
        judge = None
    session = RunSession(
        cfg, judge=judge, model=model, metrics=chosen, formatter=formatter,
        endpoint=cache_endpoint(cfg), argv=argv, events=events or EventOptions(),
        hooks=SessionHooks(notice=_notice, progress=err_console),
        executor=_executor(cfg, model if judge is not None else None),
    )  # fmt: skip
    judged = any(m.requires_judge for m in chosen) and model is not None
    if judge is not None or (cfg.dry_run and judged):
        session.budget.check_priced()  # --max-cost without a price: refused, in a dry run too
    return session


def _executor(cfg: ScoreConfig, model: str | None) -> Executor | None:
    """The engine ``--engine`` picks: ``None`` for this process, else the Ray executor.

    Raises:
        ConfigError: ``--engine ray`` without Ray installed (names the extra).

    """
    if cfg.engine == "local":
        return None
    from agent_eval.run.cluster import RayExecutor, RayOptions, require_ray

    require_ray()  # a usage error before any input is read
    _, _, address = cfg.engine.partition(":")
    settings = built_settings(cfg, model) if model is not None else None
    env = (cfg.api_key_env, "OPENAI_BASE_URL")  # what the judge reads from the environment
    options = RayOptions(address=address or None, workers=cfg.workers, judge=settings, env=env)
    return RayExecutor(options)


def _run_session(
    cfg: ScoreConfig,
    out: Console,
    session: RunSession,
    *,
    gates: Sequence[Gate],
    report: ScoreReport | None,
) -> int:
    if report is not None:
        report.plans = session.plans()  # --json reports the plans: made for it
        report.inputs = session.inputs.to_json() if session.inputs is not None else None
    if cfg.dry_run:
        return print_dry_run(out, session)
    unconfigured = 0
    if session.judge is None and any(m.requires_judge for m in session.metrics):
        judge_free = [m.id for m in session.metrics if not m.requires_judge]
        missing = session.without_judged()
        unconfigured = not_configured(out, missing, cfg, judge_free)
        if report is not None:
            report.not_scored = [plan.metric for plan in missing]
        if not session.metrics:
            return unconfigured
    summaries = event_loop.run(session.run())
    if report is not None:
        report.summaries = summaries
        report.changed_since_judged = list(session.changed_since_judged)
    return finish(
        out, summaries, session=session, gates=gates, not_configured=unconfigured, report=report
    )


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


def _plan_model(cfg: ScoreConfig) -> str | None:
    """The judge model for a dry run: an unset key variable is a warning, not an error."""
    problem = key_env_problem(cfg)
    if problem is not None:
        message = f"{problem} (a dry run calls no judge)"
        err_console.print(
            f"[bold yellow]warning:[/] {escape(message)}", highlight=False, soft_wrap=True
        )
    return configured_model(cfg)


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
    engine: Annotated[
        str | None,
        typer.Option(
            metavar="ENGINE",
            help="Where to score: local (one process, the default), ray (the cluster "
            "RAY_ADDRESS names, else a local one) or ray:ADDRESS; needs the ray extra.",
        ),
    ] = None,
    workers: Annotated[
        int | None,
        typer.Option(
            help="Scoring actors of --engine ray (one CPU each; default: the cluster's CPUs).",
        ),
    ] = None,
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
        "engine": engine,
        "workers": workers,
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
