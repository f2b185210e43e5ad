"""The work behind ``calibrate``, ``compare`` and ``stability``: scoring, analysis, output.

Settings come from the ``[score]`` table of ``agent-eval.toml`` and the flags, exactly as for
``agent-eval score`` (:func:`agent_eval.config.load_config`); the judge is built the same way
(:func:`agent_eval.cli._score_cmds.build_judge`) and wrapped the same way
(:func:`agent_eval.run._judge_stack.wrap_judge`: rate limits, then the judge-call cache in
``OUT/judge-cache.db`` unless ``--cache-path`` names another file; ``--no-cache`` bypasses it,
``--refresh-cache`` re-asks and overwrites). Prices come from ``[prices]``, then genai-prices.
"""

from __future__ import annotations

import contextlib
import os
from collections import Counter
from collections.abc import Callable, Coroutine, Iterable, Sequence
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from rich.console import RenderableType

from agent_eval._costs import PriceTable
from agent_eval._references import load_references
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace
from agent_eval.analysis._calibration import Calibration, calibrate, calibrate_results
from agent_eval.analysis._claim_calibration import (
    ClaimCalibration,
    calibrate_claims,
    claim_labels_from_traces,
)
from agent_eval.analysis._gates import GateCount
from agent_eval.analysis._labels import (
    LABELS_NAME,
    label_paths,
    labels_from_traces,
    ratings_from_traces,
    read_binary_file,
    read_rating_file,
    write_labels,
)
from agent_eval.analysis._ordinal import OrdinalCalibration, calibrate_ordinal_results
from agent_eval.analysis._paired import VariantComparison, compare_formatters
from agent_eval.analysis._scoring import score_repeats, score_variants
from agent_eval.analysis._stability import Stability, measure_stability
from agent_eval.cli._analysis_options import load_run_results, out_console, warn_formatter_drift
from agent_eval.cli._app import (
    INTERRUPTED_TYPE,
    err_console,
    interrupt_exit_code,
    interrupt_message,
)
from agent_eval.cli._json_output import (
    ComparePayload,
    StabilityPayload,
    emit_json,
    plan_summary,
)
from agent_eval.cli._judge_setup import cache_endpoint, key_env_problem
from agent_eval.cli._score_cmds import (
    HOW_TO_CONFIGURE,
    build_judge,
    close_unused,
    judge_model,
    plan_budget_line,
    redact_argv,
)
from agent_eval.cli._tables import print_table
from agent_eval.config import DEFAULT_JUDGE, ScoreConfig, load_config
from agent_eval.errors import AgentEvalError, ConfigError, InputError, JudgeNotConfiguredError
from agent_eval.ingest._pipeline import ingest
from agent_eval.judges._base import Judge
from agent_eval.metrics._base import Metric
from agent_eval.metrics._claim_metric import ClaimMetric
from agent_eval.metrics._decomposition import DECOMPOSITIONS_FILENAME, DecompositionCache
from agent_eval.metrics._spec import build_metric, split_metrics
from agent_eval.report._terminal import (
    calibration_table,
    claim_calibration_tables,
    comparison_tables,
    ordinal_table,
    stability_tables,
)
from agent_eval.run import _event_loop as event_loop
from agent_eval.run._artifacts import read_renderings, tokens_by_formatter
from agent_eval.run._budget import BUDGET_SKIP, Budget, budget_line
from agent_eval.run._cache import JudgeCache
from agent_eval.run._engine import new_run_id
from agent_eval.run._judge_stack import JudgeStack, default_cache_path, wrap_judge
from agent_eval.run._record import run_record
from agent_eval.run._spool import TraceSpool

__all__ = [
    "calibration_for",
    "check_metric",
    "compare_for",
    "emit",
    "interrupted_line",
    "labels_for",
    "print_plans",
    "run_compare",
    "run_repeats",
    "scoring_config",
    "show_calibration",
    "stability_for",
    "variant_counts",
]


def scoring_config(config: Path | None, **overrides: Any) -> ScoreConfig:
    """The ``[score]`` settings overridden by the flags; inputs are required.

    Raises:
        ConfigError: An invalid setting. InputError: No input paths.

    """
    cfg = load_config(config, **overrides)
    if not cfg.paths:
        raise InputError("no input: give PATH... (files, directories or globs)")
    return cfg


def _traces(cfg: ScoreConfig) -> TraceSpool:
    """The inputs' conversations, spooled as ingest emits them (the caller closes the spool).

    Every pass of ``compare``/``stability`` (plans, renderings, each variant or repeat) reads
    them back one at a time (:class:`~agent_eval.run._spool.TraceSpool`), so no command holds
    the input's conversations.

    Raises:
        InputError: no conversation in the inputs (or ingest's own input errors).

    """
    traces = TraceSpool.collect(ingest(cfg.paths, format=cfg.format))
    if not len(traces):
        traces.close()
        raise InputError(f"no conversations found in {', '.join(cfg.paths)}")
    return traces


def _metric(cfg: ScoreConfig, out: Path | None = None) -> Metric:
    """The one metric ``cfg.metric`` names (``NAME[@V][params]``); compare/stability take one.

    Claim-level metrics pin their decompositions in ``out/decompositions.db``
    (``--redecompose``: every repeat decomposes anew).
    """
    specs = split_metrics(cfg.metric)
    if len(specs) != 1:
        raise ConfigError(f"--metric: give exactly one metric here, not {cfg.metric!r}")
    metric = build_metric(
        specs[0], with_reference=cfg.with_reference, temperature=cfg.temperature, seed=cfg.seed
    )
    if out is not None and isinstance(metric, ClaimMetric):
        metric.decompositions = DecompositionCache(
            out / DECOMPOSITIONS_FILENAME, refresh=cfg.redecompose
        )
    return metric


def check_metric(cfg: ScoreConfig) -> None:
    """Build the metric ``cfg`` names once, to report a bad ``--metric`` before any work.

    Raises:
        ConfigError / UnknownPluginError: not exactly one metric, or an unknown or invalid one.

    """
    _metric(cfg)


def _judge(cfg: ScoreConfig) -> Judge:
    model = judge_model(cfg)
    if model is None:
        raise JudgeNotConfiguredError(HOW_TO_CONFIGURE.format(default=DEFAULT_JUDGE))
    return build_judge(cfg, model)


def _budget(cfg: ScoreConfig, inner: Judge) -> Budget:
    """The run's budget (``--max-judge-tokens``, ``--max-cost``), checked to be priceable."""
    budget = Budget.from_config(cfg, inner.model)
    budget.check_priced()
    return budget


def _say_budget(budget: Budget, rows: Sequence[MetricResult], where: Path) -> None:
    skipped = sum(r.status == "skipped" and r.error_type == BUDGET_SKIP for r in rows)
    line = budget_line(budget, skipped, str(where), resumable=False)
    if line is not None:
        err_console.print(line, highlight=False, markup=False, soft_wrap=True)


def _stack(
    cfg: ScoreConfig, inner: Judge, out: Path, *, cached: bool, budget: Budget | None = None
) -> JudgeStack:
    """``inner`` in the rate limits and budget, and (when ``cached``) the judge-call cache."""
    return wrap_judge(
        inner,
        cache_mode=cfg.cache if cached else "off",
        cache_path=cfg.cache_path or default_cache_path(),
        requests_per_minute=cfg.rpm,
        tokens_per_minute=cfg.tpm,
        parameters={"mode": cfg.mode},
        endpoint=cache_endpoint(cfg),
        budget=budget,
    )


def _run_dir(cfg: ScoreConfig) -> tuple[str, Path]:
    run_id = new_run_id()
    return run_id, cfg.out or Path("runs") / run_id


async def _closing(
    judge: Judge, work: Coroutine[Any, Any, list[MetricResult]]
) -> list[MetricResult]:
    try:
        return await work
    finally:
        await judge.aclose()


def variant_counts(cmp: VariantComparison) -> dict[str, list[GateCount]]:
    """Gate counts of a comparison: mean score and label accuracy by variant, agreement by pair."""
    counts: dict[str, list[GateCount]] = {
        "mean_score": [
            GateCount(subject=v.variant, successes=v.n_pass, n=v.n_ok) for v in cmp.variants
        ],
        "agreement": [
            GateCount(subject=f"{p.variant_a} vs {p.variant_b}", successes=p.n_agree, n=p.n_paired)
            for p in cmp.pairs
        ],
    }
    if any(v.n_labelled for v in cmp.variants):
        counts["accuracy"] = [
            GateCount(subject=v.variant, successes=v.label_agree, n=v.n_labelled)
            for v in cmp.variants
        ]
    return counts


def labels_for(
    labels: dict[str, int] | None, traces: Iterable[AgentTrace]
) -> dict[str, int] | None:
    """The labels given, else those the traces carry, else ``None``."""
    return labels if labels is not None else (labels_from_traces(traces) or None)


def _redacted(cfg: ScoreConfig, argv: Sequence[str]) -> tuple[str, ...]:
    """``argv`` with secret flags and the judge API key removed (as ``score`` records it)."""
    return redact_argv(list(argv), (os.environ.get(cfg.api_key_env, ""),))


def interrupted_line(directory: Path, run_id: str) -> str:
    """What an interrupted ``compare`` / ``stability`` kept in ``directory`` and spent.

    E.g. ``interrupted by Ctrl-C (SIGINT): 3 result(s) kept in runs/x (3 scored), and 1 unit(s)
    cut short kept as skipped (interrupted; the 2 judge request(s) they sent are counted);
    judge usage: 8 requests, 900 in, 80 out over 4 rows (...); agent-eval runs show runs/x``.
    The usage is :class:`~agent_eval.run._usage.RunUsage` over the rows kept. Never raises: the
    interrupt on its way out must stay the error.
    """
    from agent_eval.run._outcomes import INTERRUPTED_SKIP
    from agent_eval.run._store import load_results
    from agent_eval.run._usage import usage_of

    stopped = interrupt_message()
    try:
        rows = load_results(directory, run_id=run_id)
    except AgentEvalError as exc:
        return f"{stopped}; what the run kept in {directory} cannot be read: {exc}"
    if not rows:
        return f"{stopped} before a result was kept in {directory}"
    usage = usage_of(rows)
    cut = usage.interrupted_rows
    statuses: Counter[str] = Counter(r.status for r in rows if r.error_type != INTERRUPTED_SKIP)
    counts = ", ".join(
        f"{statuses[s]} {w}" for s, w in (("ok", "scored"), ("skipped", "skipped"),
                                           ("error", "errored")) if statuses[s]
    )  # fmt: skip
    line = f"{stopped}: {len(rows) - cut} result(s) kept in {directory}"
    line += f" ({counts})" if counts else ""
    if cut:
        line += (
            f", and {cut} unit(s) cut short kept as skipped ({INTERRUPTED_SKIP}; the "
            f"{usage.interrupted_requests} judge request(s) they sent are counted)"
        )
    return f"{line}; judge usage: {usage.text()}; agent-eval runs show {directory}"


def _say_interrupted(command: str, directory: Path, run_id: str, as_json: bool) -> None:
    """Print :func:`interrupted_line` on stderr and, with ``--json``, as the error document."""
    line = interrupted_line(directory, run_id)
    err_console.print(line, highlight=False, markup=False, soft_wrap=True)
    if as_json:
        from agent_eval.cli._json_output import emit_error

        with contextlib.suppress(OSError):  # stdout gone (| head): stderr has the line
            emit_error(command, interrupt_exit_code(), line, INTERRUPTED_TYPE)


def run_compare(
    cfg: ScoreConfig, formatters: list[str], argv: Sequence[str] = (), *, as_json: bool = False
) -> tuple[str, Path, TraceSpool, list[MetricResult]]:
    """Score ``cfg.paths`` under each formatter, sharing one cached judge.

    Interrupted (Ctrl-C, SIGTERM), it says what the run kept and what its judge calls spent,
    the units cut short included (:func:`interrupted_line`; with ``as_json`` also as the
    ``Interrupted`` error document), and re-raises.

    Args:
        cfg: The scoring settings.
        formatters: Formatter identities, in report order.
        argv: The command line, recorded with the run (secrets removed here).
        as_json: ``--json`` was given.

    Returns:
        ``(run_id, output directory, traces, result rows)``; the traces are spooled
        (:func:`_traces`) and the caller closes them.

    Raises:
        AgentEvalError: Input, configuration or store errors (a judge failure is a row).

    """
    inner = _judge(cfg)  # a bad judge or an unpriced --max-cost: exit 2 before any input
    budget = _budget(cfg, inner)
    traces = _traces(cfg)
    try:
        run_id, out = _run_dir(cfg)
        references = load_references(cfg.references) if cfg.references else None
        stack = _stack(cfg, inner, out, cached=True, budget=budget)
        work = score_variants(
            traces, formatters=formatters, metric=_metric(cfg), judge=stack.judge, out=out,
            run_id=run_id, concurrency=cfg.concurrency, max_context_tokens=cfg.max_context_tokens,
            references=references, argv=_redacted(cfg, argv), budget=budget,
            record=run_record(cfg, inner.model, {"formatters": formatters}),
        )  # fmt: skip
        try:
            rows = event_loop.run(_closing(inner, work))
        except KeyboardInterrupt:
            _say_interrupted("compare", out, run_id, as_json)
            raise
        finally:
            if stack.cache is not None:
                stack.cache.close()
        _say_budget(budget, rows, out)
        return run_id, out, traces, rows
    except BaseException:  # the caller closes the spool it is given, not one it never got
        traces.close()
        raise


def run_repeats(
    cfg: ScoreConfig, repeats: int, argv: Sequence[str] = (), *, as_json: bool = False
) -> tuple[str, Path, list[MetricResult]]:
    """Score ``cfg.paths`` ``repeats`` times with ``cfg.formatter`` (repeats 1.. uncached).

    ``argv`` is the command line, recorded with the run (secrets removed here). Interrupted,
    it says what was kept and spent, as :func:`run_compare` does (``as_json``: ``--json``).

    Returns:
        ``(run_id, output directory, result rows)``.

    Raises:
        AgentEvalError: Input, configuration or store errors (a judge failure is a row).

    """
    inner = _judge(cfg)  # a bad judge or an unpriced --max-cost: exit 2 before any input
    budget = _budget(cfg, inner)
    with contextlib.closing(_traces(cfg)) as traces:
        run_id, out = _run_dir(cfg)
        references = load_references(cfg.references) if cfg.references else None
        limited = _stack(cfg, inner, out, cached=False, budget=budget).judge
        cache = None if cfg.cache == "off" else JudgeCache(cfg.cache_path or default_cache_path())
        work = score_repeats(
            traces, repeats=repeats, formatter=cfg.formatter, metric=_metric(cfg, out),
            judge=limited, cache=cache, out=out, run_id=run_id, concurrency=cfg.concurrency,
            max_context_tokens=cfg.max_context_tokens, references=references,
            cache_mode="refresh" if cfg.cache == "refresh" else "use", argv=_redacted(cfg, argv),
            budget=budget, record=run_record(cfg, inner.model, {"repeats": repeats}),
            cache_parameters={"mode": cfg.mode},
        )  # fmt: skip
        try:
            rows = event_loop.run(_closing(inner, work))
        except KeyboardInterrupt:
            _say_interrupted("stability", out, run_id, as_json)
            raise
        finally:
            if cache is not None:
                cache.close()
        _say_budget(budget, rows, out)
        return run_id, out, rows


def _metric_matches(row_metric: str, wanted: str | None) -> bool:
    """Whether ``row_metric`` is (a variant of) the metric ``wanted`` names, as ``score`` takes it.

    A bare name matches every version and parameter set of that name (:func:`_narrow_bare`
    then picks the default identity); a version or parameters
    (``tool_call_accuracy[order=superset]``) match that exact identity.
    """
    if wanted is None:
        return True
    if _is_bare(wanted):
        return row_metric.partition("@")[0].partition("[")[0] == wanted
    return row_metric == build_metric(wanted).id


def _is_bare(metric: str) -> bool:
    return "@" not in metric and "[" not in metric


def _narrow_bare(rows: list[MetricResult], metric: str) -> list[MetricResult]:
    """The rows of the identity a bare ``--metric NAME`` means.

    ``NAME`` means what ``score --metric NAME`` scores: the registered version with default
    parameters (``tool_call_accuracy`` is ``tool_call_accuracy@1``, not
    ``tool_call_accuracy@1[order=superset]``). A run that holds one identity of that name only
    (an older version, or one parameter set) is calibrated on it.

    Raises:
        ConfigError: The run holds several identities of ``NAME`` and none is the default one.

    """
    identities = sorted({r.metric for r in rows})
    if len(identities) <= 1:
        return rows
    try:
        default = build_metric(metric).id
    except AgentEvalError:  # not registered here (a plugin not installed): no default to pick
        default = None
    if default in identities:
        return [r for r in rows if r.metric == default]
    raise ConfigError(
        f"the run scored {len(identities)} variants of {metric} ({', '.join(identities)}); "
        f"calibrate one at a time: --metric '{identities[0]}'"
    )


def _select(
    results: list[MetricResult], metric: str | None, formatter: str | None
) -> list[MetricResult]:
    rows = [
        r for r in results if _metric_matches(r.metric, metric) and formatter in (None, r.formatter)
    ]
    if metric is not None and _is_bare(metric):
        rows = _narrow_bare(rows, metric)
    if results and not rows:
        have = sorted({f"{r.metric} {r.formatter}" for r in results})
        raise ConfigError(f"no results match --metric/--formatter; the run has: {'; '.join(have)}")
    metrics = sorted({r.metric for r in rows})
    if metric is None and len(metrics) > 1:  # a multi-metric run: calibrate one at a time
        raise ConfigError(
            f"the run scored {len(metrics)} metrics ({', '.join(metrics)}); calibrate one at a "
            f"time: --metric {metrics[0]}"
        )
    formatters = sorted({r.formatter for r in rows})
    if formatter is None and len(formatters) > 1:
        raise ConfigError(
            f"the run scored under {len(formatters)} formatters ({', '.join(formatters)}); "
            f"calibrate one at a time: --formatter {formatters[0]}"
        )
    warn_formatter_drift(rows)  # rows of several runs: one name@version, two fingerprints
    return rows


def _labels(labels: Path | None, inputs: list[Path] | None, field: str | None) -> dict[str, int]:
    if labels is not None:
        return read_binary_file(labels, field=field)
    if inputs:
        traces = list(ingest(inputs))
        found = labels_from_traces(traces, field=field)
        if found:
            return found
        if field:
            raise ConfigError(_no_such_label(field, traces))
        raise ConfigError("the --inputs traces carry no labels; give --labels FILE")
    raise ConfigError(
        "calibrate needs labels: --labels FILE, or --inputs PATH with labelled traces"
    )


def _no_such_label(field: str, traces: list[AgentTrace]) -> str:
    """``no trace carries label 'X' (labels found: ...)``, with how to name a nested one."""
    found = label_paths(traces)
    shown = ", ".join(found[:20]) + (f", ... ({len(found)} in all)" if len(found) > 20 else "")
    return (
        f"no trace of --inputs carries label {field!r} (labels found: {shown or 'none'}); "
        "name a nested label by its dotted path, e.g. --label-field human_ratings.faithfulness"
    )


def show_calibration(cal: Calibration, as_json: bool) -> None:
    """Print the calibration as a rich table, or JSON on stdout."""
    if as_json:
        emit_json("calibrate", {"kind": "binary", **cal.model_dump(mode="json")})
    else:
        print_table(out_console, calibration_table(cal))


def calibration_for(
    run: Path | None,
    labels: Path | None,
    predictions: Path | None,
    *,
    inputs: list[Path] | None,
    label_field: str | None,
    prediction_field: str | None,
    metric: str | None,
    formatter: str | None,
) -> Calibration:
    """Calibrate a run's verdicts, or an external predictions file, against labels.

    Raises:
        ConfigError: Neither or both of ``run`` and ``predictions``; no labels.
        InputError / StoreError: Unreadable labels, predictions or results.

    """
    truth = _labels(labels, inputs, label_field)
    if predictions is not None:
        if run is not None:
            raise ConfigError("give either a RUN or --predictions FILE, not both")
        cal = calibrate(read_binary_file(predictions, field=prediction_field), truth)
        return _overlapping(cal, f"the predictions ({predictions})")
    if run is None:
        raise ConfigError("calibrate needs a RUN directory or --predictions FILE")
    cal = calibrate_results(_select(load_run_results(run), metric, formatter), truth)
    return _overlapping(cal, f"the run ({run})")


def _some(ids: list[str], shown: int = 2) -> str:
    more = f", ... ({len(ids)} in all)" if len(ids) > shown else ""
    return ", ".join(repr(i) for i in ids[:shown]) + more


def _overlapping(cal: Calibration, verdicts_from: str) -> Calibration:
    """``cal``, when its verdicts and labels share conversation ids; unmatched ids are warned.

    Raises:
        InputError: No conversation has both a verdict and a label (names ids of each side).

    """
    if cal.n == 0:
        if not cal.unlabelled:
            raise InputError(f"{verdicts_from} holds no ok verdicts to calibrate")
        if not cal.unpredicted:
            raise InputError(
                "the labels hold no label (an empty file, or a review file whose label column "
                "was left empty): fill in labels, then calibrate again"
            )
        raise InputError(
            f"{verdicts_from} and the labels share no conversation ids: the verdicts are for "
            f"{_some(cal.unlabelled)}; the labels for {_some(cal.unpredicted)}. Label the "
            "conversations by the conversation_id that the run's results use"
        )
    if cal.unlabelled or cal.unpredicted:
        absent = [i for i in cal.unpredicted if i not in cal.not_scored]
        reasons = Counter(cal.not_scored.values())
        scored = (
            f"{len(cal.not_scored)} of them the run did not score ("
            + ", ".join(f"{r} {n}" for r, n in sorted(reasons.items()))
            + f"), {len(absent)} the run does not have (e.g. {_some(absent) or 'none'})"
            if cal.not_scored
            else f"e.g. {_some(cal.unpredicted) or 'none'}"
        )
        err_console.print(
            f"warning: {len(cal.unlabelled)} verdict(s) have no label (e.g. "
            f"{_some(cal.unlabelled) or 'none'}) and {len(cal.unpredicted)} label(s) have no "
            f"verdict ({scored}); calibrated on the {cal.n} "
            "conversations with both",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
    return cal


def compare_for(
    cfg: ScoreConfig,
    names: list[str],
    *,
    labels: Path | None,
    label_field: str | None,
    argv: Sequence[str] = (),
    as_json: bool = False,
) -> tuple[str, Path, VariantComparison]:
    """Score under each formatter and compare; writes ``OUT/comparison.json``.

    The labels used (given or carried by the traces) go to ``OUT/labels.jsonl`` for the report.

    Returns:
        ``(run_id, output directory, comparison)``.

    """
    truth = read_binary_file(labels, field=label_field) if labels else None
    run_id, directory, traces, results = run_compare(cfg, names, argv, as_json=as_json)
    compared = {r.formatter for r in results}  # an earlier run in OUT under the same names
    warn_formatter_drift(r for r in load_run_results(directory) if r.formatter in compared)
    with contextlib.closing(traces):
        used = labels_for(truth, traces)
    if used:
        write_labels(directory / LABELS_NAME, used)
    cmp = compare_formatters(
        results,
        labels=used,
        pricing=PriceTable.from_config(cfg.prices).cost,
        rendered_tokens=tokens_by_formatter(read_renderings(directory)),
    )
    (directory / "comparison.json").write_text(cmp.model_dump_json(indent=2), "utf-8")
    return run_id, directory, cmp


def stability_for(
    cfg: ScoreConfig, repeats: int, argv: Sequence[str] = (), *, as_json: bool = False
) -> tuple[str, Path, Stability]:
    """Score K times and measure stability; writes ``OUT/stability.json``.

    Returns:
        ``(run_id, output directory, stability)``.

    """
    run_id, directory, results = run_repeats(cfg, repeats, argv, as_json=as_json)
    st = measure_stability(results)
    (directory / "stability.json").write_text(st.model_dump_json(indent=2), "utf-8")
    return run_id, directory, st


_COMMANDS = {"comparison": "compare", "stability": "stability"}
"""The command whose ``--json`` document carries each summary."""

_TABLES: dict[str, Callable[[Any], RenderableType]] = {
    "comparison": comparison_tables,
    "stability": stability_tables,
}


def print_plans(
    cfg: ScoreConfig, formatters: Sequence[str], repeats: int = 1, *, as_json: bool = False
) -> None:
    """``--dry-run`` of ``compare``/``stability``: the plan of each formatter; no judge call.

    ``repeats`` (stability) multiplies the judge calls and cost shown in the last line. With
    ``as_json`` the ``compare`` (or, with ``repeats``, ``stability``) document is printed.

    Raises:
        AgentEvalError: unreadable inputs, an unknown metric or formatter.

    """
    from agent_eval.formatting._registry import get_formatter
    from agent_eval.run._plan import plan_run

    budget = _dry_run_budget(cfg)  # the judge built (not called) first: a bad one is exit 2
    plans = []
    with contextlib.closing(_traces(cfg)) as traces:
        metric = _metric(cfg)
        references = load_references(cfg.references) if cfg.references else None
        for name in formatters:  # one read of the spooled conversations per formatter
            plan = plan_run(
                traces,
                metric=metric,
                formatter=get_formatter(name),
                judge_model=cfg.judge,
                references=references,
                max_context_tokens=cfg.max_context_tokens,
                prices=PriceTable.from_config(cfg.prices),
                default_model=DEFAULT_JUDGE,
            )
            plans.append(plan)
            if not as_json:
                print_table(out_console, plan.table())
    if as_json:
        common: dict[str, Any] = {"run_id": None, "out": None, "dry_run": True}
        summaries = [plan_summary(plan) for plan in plans]
        if repeats > 1:
            emit_json("stability", StabilityPayload(**common, stability=None, plans=summaries,
                                                    repeats=repeats))  # fmt: skip
        else:
            emit_json("compare", ComparePayload(**common, comparison=None, plans=summaries))
        return
    if repeats > 1:
        out_console.print(f"x {repeats} repeats: the judge calls and cost above, {repeats} times")
    line = plan_budget_line(budget, plans, repeats) if budget is not None else None
    if line is not None:
        out_console.print(line, highlight=False)


def _dry_run_budget(cfg: ScoreConfig) -> Budget | None:
    """The budget of a dry run, after building and closing its judge; ``None`` without one.

    As ``score --dry-run``: the judge is built, so that a bad factory or config is a usage
    error now rather than in the real run, and ``--max-cost`` for an unpriced model is refused.
    """
    if key_env_problem(cfg) is not None:  # the real run says so; a dry run calls no judge
        return None
    model = judge_model(cfg)
    if model is None:
        return None
    try:
        judge = build_judge(cfg, model)
    except JudgeNotConfiguredError:
        return None
    close_unused(judge)
    return _budget(cfg, judge)


def emit(as_json: bool, run_id: str, directory: Path, *, name: str, model: BaseModel) -> None:
    """Print a comparison or stability summary: rich tables, or JSON with run id and directory."""
    if as_json:
        payload = {"run_id": run_id, "out": str(directory), name: model.model_dump(mode="json")}
        emit_json(_COMMANDS[name], payload)
    else:
        print_table(out_console, _TABLES[name](model))
        out_console.print(f"results in {directory} (run {run_id})", highlight=False, soft_wrap=True)


def ordinal_calibration_for(
    run: Path,
    labels: Path | None,
    *,
    inputs: list[Path] | None,
    label_field: str | None,
    metric: str | None,
    formatter: str | None,
) -> OrdinalCalibration:
    """Calibrate a run's scores against ordinal ratings (a file, or labels the traces carry).

    Raises:
        ConfigError: No ratings given; no shared subject.
        InputError / StoreError: Unreadable ratings or results.

    """
    if labels is not None:
        ratings = read_rating_file(labels, field=label_field)
    elif inputs and label_field:
        traces = list(ingest(inputs))
        ratings = ratings_from_traces(traces, field=label_field)
        if not ratings:
            raise InputError(_no_such_label(label_field, traces))
    else:
        raise ConfigError(
            "--kind ordinal needs ratings: --labels FILE, or --inputs PATH with --label-field "
            "NAME (a per-turn or conversation label holding the rating; a nested one by its "
            "dotted path, e.g. human_ratings.faithfulness)"
        )
    cal = calibrate_ordinal_results(_select(load_run_results(run), metric, formatter), ratings)
    if cal.n == 0:
        raise InputError(
            f"no unit of the run ({run}) has both an ok score and a rating; run ids: "
            f"{_some(cal.unlabelled)}; rating ids: {_some(cal.unpredicted)}"
        )
    return cal


def claim_calibration_for(
    run: Path, *, inputs: list[Path] | None, metric: str | None, formatter: str | None
) -> ClaimCalibration:
    """Calibrate a run's atoms against the claim labels of ``inputs`` (matched by text).

    Raises:
        ConfigError: No ``--inputs``, or they carry no claim labels.
        InputError / StoreError: Unreadable inputs or results.

    """
    if not inputs:
        raise ConfigError('--kind claims needs --inputs PATH whose turns carry labels["claims"]')
    labels = claim_labels_from_traces(ingest(inputs))
    if not labels:
        raise ConfigError('the --inputs traces carry no claim labels (labels["claims"])')
    cal = calibrate_claims(_select(load_run_results(run), metric, formatter), labels)
    if cal.n_matched == 0:
        raise InputError(
            f"no atom of the run ({run}) matched a labelled claim ({cal.n_units} units with "
            "both); are they the same answers?"
        )
    return cal


def show_ordinal(cal: OrdinalCalibration, as_json: bool) -> None:
    """Print the ordinal calibration as a rich table, or JSON on stdout."""
    if as_json:
        emit_json("calibrate", {"kind": "ordinal", **cal.model_dump(mode="json")})
    else:
        print_table(out_console, ordinal_table(cal))


def show_claim_calibration(cal: ClaimCalibration, as_json: bool) -> None:
    """Print the claim-level calibration as rich tables, or JSON on stdout."""
    if as_json:
        emit_json("calibrate", {"kind": "claims", **cal.model_dump(mode="json")})
    else:
        print_table(out_console, claim_calibration_tables(cal))
