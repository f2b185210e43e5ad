"""What ``agent-eval score`` prints of a finished run session, and the exit code it ends with.

:func:`finish` prints each metric's summary table and accounting line, the judge-call cache
line, the usage and stage tables, the atom lines and the budget line, applies ``--fail-under``
and the gates, and returns the exit code (:mod:`agent_eval.cli._exit_codes`);
:func:`not_configured` prints the plans of the judged metrics that could not run;
:func:`interrupt_line` is the line an interrupted run ends with.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

from rich.console import Console
from rich.markup import escape

from agent_eval._costs import AgentUsageGroups, PriceTable, UsageLine, stage_table, usage_table
from agent_eval.analysis._gates import Gate, GateCount
from agent_eval.cli._analysis_options import gate_outcomes
from agent_eval.cli._app import EXIT_GATE, EXIT_USAGE, err_console, interrupt_message
from agent_eval.cli._exit_codes import EXIT_NOTHING
from agent_eval.cli._judge_setup import HOW_TO_CONFIGURE, missing_judge
from agent_eval.cli._score_report import ScoreReport, cache_summary
from agent_eval.cli._tables import print_table
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig
from agent_eval.run._budget import BUDGET_SKIP, Budget, budget_line
from agent_eval.run._judge_stack import JudgeStack
from agent_eval.run._outcomes import INTERRUPTED_SKIP
from agent_eval.run._plan import RunPlan
from agent_eval.run._session import RunSession
from agent_eval.run._spend import RunSpend
from agent_eval.run._summary import RunSummary

__all__ = [
    "EXIT_NOTHING_SCORED",
    "finish",
    "interrupt_line",
    "not_configured",
    "plan_budget_line",
    "print_dry_run",
]

EXIT_NOTHING_SCORED = EXIT_NOTHING
"""Exit code when conversations were read but none was scored (all errored or skipped), or a
metric scored none and errored while other metrics scored."""


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


def print_dry_run(out: Console, session: RunSession) -> int:
    """Print each metric's plan and the budget line of a dry run; exit code 0."""
    for plan in session.plans():
        print_table(out, plan.table())
    line = plan_budget_line(session.budget, session.plans())
    if line is not None:
        out.print(line, highlight=False)
    return 0


def finish(
    out: Console,
    summaries: list[RunSummary],
    *,
    session: RunSession,
    gates: Sequence[Gate],
    not_configured: int = 0,
    report: ScoreReport | None = None,
) -> int:
    """Print the summaries, usage and budget line; the exit code.

    2 (``not_configured``) when judged metrics could not run, said once more, last; else 4
    when nothing was scored; else 4 when a metric scored no unit and some of its units
    errored (a dead judge endpoint: that metric did not run, whatever the others did; after
    the gates, which are still reported); else the gates' code.
    """
    cfg, stack = session.cfg, session.stack
    spent = session.spent(summaries)
    for summary in summaries:
        if spent is not None:  # the run's whole spend, beside this invocation's
            summary.run_total = spent.run_total(summary.metric)
        print_table(out, summary.table())
        out.print(summary.accounting_line, highlight=False)
    usage = _print_usage(out, spent, session.agent_usage, stack, cfg)
    if report is not None:
        report.usage = usage
        report.cache = cache_summary(stack)
    skipped = sum(summary.skip_reasons[BUDGET_SKIP] for summary in summaries)
    line = budget_line(session.budget, skipped, str(summaries[0].out_dir or summaries[0].run_id))
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


def _gates_code(
    summaries: list[RunSummary],
    cfg: ScoreConfig,
    gates: Sequence[Gate],
    out: Console,
    report: ScoreReport | None = None,
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
        from agent_eval.cli._json_output import GateResult

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


def _print_usage(
    out: Console,
    spent: RunSpend | None,
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


def not_configured(
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
    summary: RunSummary, fail_under: float | None, out: Console, report: ScoreReport | None
) -> int:
    """``--fail-under`` on one metric's mean score: 0, or the gate exit code (1).

    The line names the metric (a run of several metrics fails on one of them).
    """
    if fail_under is None:
        return 0
    mean = summary.mean_score
    passed = mean is not None and mean >= fail_under
    if report is not None:
        from agent_eval.cli._json_output import FailUnderOutcome

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
