"""agent-eval CLI commands: ``calibrate``, ``compare`` and ``stability``.

``calibrate`` reads a run (or an external predictions file) and labels; ``compare`` and
``stability`` score conversations (:mod:`agent_eval.analysis._scoring`) and then analyse the
results. Each prints rich tables, or a JSON summary with ``--json``, and evaluates the declared
gates (exit code 1 when one fails). The work lives in :mod:`agent_eval.cli._analysis_runs`,
imported when a command runs, so that the statistics and plotting libraries do not slow down
every ``agent-eval`` command.
"""

from __future__ import annotations

import sys
from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any

import typer

from agent_eval.analysis._gates import GateCount
from agent_eval.cli._analysis_options import (
    apply_gates,
    config_path,
    exit_nothing_scored,
    exit_on_failed_gates,
    gates_from,
    usage_errors,
)
from agent_eval.cli._app import app
from agent_eval.cli._help_format import HelpCommand
from agent_eval.cli._judge_setup import check_judge_kind
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
from agent_eval.errors import ConfigError

if TYPE_CHECKING:
    from agent_eval.analysis._gates import Gate
    from agent_eval.config import ScoreConfig

__all__ = ["calibrate_cmd", "compare_cmd", "stability_cmd"]

LabelsOpt = Annotated[
    Path | None, typer.Option("--labels", help="JSONL/CSV of {conversation_id, label}.")
]
LabelFieldOpt = Annotated[
    str | None,
    typer.Option(
        "--label-field",
        help="Column holding the label (default: auto); with --inputs, a label the traces "
        "carry, a nested one by its dotted path: human_ratings.faithfulness.",
    ),
]


@app.command("calibrate", cls=HelpCommand)
def calibrate_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    run: Annotated[
        Path | None, typer.Argument(help="Run directory, results.db or results.jsonl.")
    ] = None,
    labels: LabelsOpt = None,
    predictions: Annotated[
        Path | None,
        typer.Option(
            "--predictions", help="External verdicts: JSONL/CSV {conversation_id, verdict}."
        ),
    ] = None,
    inputs: Annotated[
        list[Path] | None,
        typer.Option(
            "--inputs",
            help="Traces carrying labels (e.g. tau-bench rewards); repeatable, one path each: "
            "--inputs A --inputs B.",
        ),
    ] = None,
    label_field: LabelFieldOpt = None,
    prediction_field: Annotated[
        str | None, typer.Option("--prediction-field", help="Column holding the verdict.")
    ] = None,
    metric: Annotated[
        str | None,
        typer.Option(
            "--metric",
            help="The metric to calibrate (needed when the run scored several; exit 2 lists "
            "them). A bare name is its default identity, as score takes it: tool_call_accuracy "
            "is tool_call_accuracy@1, not tool_call_accuracy[order=superset].",
        ),
    ] = None,
    formatter: Annotated[
        str | None, typer.Option("--formatter", help="Only this formatter identity.")
    ] = None,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
    kind: Annotated[
        str,
        typer.Option(
            "--kind",
            help="binary: verdicts vs 0/1 labels (kappa); ordinal: scores vs ratings such as "
            "1-4 (Spearman, Kendall); claims: atoms vs labelled claims of --inputs, matched by "
            "text.",
        ),
    ] = "binary",
) -> None:
    """Agreement of judge verdicts with labels: accuracy, Cohen's kappa [95% CI], confusion.

    --kind ordinal: Spearman's rho and Kendall's tau-b [95% CI] of the scores against ratings;
    --kind claims: agreement of the atoms with claim-level labels where they can be matched.
    A unit scored from atoms counts as verdict 1 in binary calibration when every atom passed.
    """
    with usage_errors():
        from agent_eval.cli import _analysis_runs as runs

        if kind not in ("binary", "ordinal", "claims"):
            raise ConfigError(f"--kind is binary, ordinal or claims, not {kind!r}")
        if kind != "binary":
            if run is None:
                raise ConfigError(f"--kind {kind} needs a RUN")
            if gate:
                raise ConfigError(f"--gate applies to --kind binary (accuracy), not {kind}")
            if kind == "ordinal":
                ordinal = runs.ordinal_calibration_for(
                    run, labels, inputs=inputs, label_field=label_field, metric=metric,
                    formatter=formatter,
                )  # fmt: skip
                runs.show_ordinal(ordinal, as_json)
            else:
                claims = runs.claim_calibration_for(
                    run, inputs=inputs, metric=metric, formatter=formatter
                )
                runs.show_claim_calibration(claims, as_json)
            return
        gates = gates_from(config_path(config), gate or [], statistics=("accuracy",))
        cal = runs.calibration_for(
            run, labels, predictions, inputs=inputs, label_field=label_field,
            prediction_field=prediction_field, metric=metric, formatter=formatter,
        )  # fmt: skip
        runs.show_calibration(cal, as_json)
        counts = {"accuracy": [GateCount(subject="labels", successes=cal.n_agree, n=cal.n)]}
    exit_on_failed_gates(apply_gates(gates, counts))


# -- compare and stability: scoring options shared with `agent-eval score` -----------------

COMPARE_STATISTICS = ("mean_score", "agreement", "accuracy")
"""What ``compare`` measures (``accuracy`` only with labels, given or carried by the traces)."""


def _scoring_setup(
    options: Mapping[str, Any],
    statistics: tuple[str, ...],
    formatters: Sequence[str] = (),
    **extra: Any,
) -> tuple[ScoreConfig, list[Gate]]:
    """The scoring settings and declared gates of ``compare``/``stability``.

    Args:
        options: The command's parameters (its ``locals()``): the shared scoring options of
            :mod:`agent_eval.cli._scoring_options`, ``gate`` and ``config``.
        statistics: What the command measures (a ``--gate`` for another is refused).
        formatters: The formatters to score under (``compare``); else ``cfg.formatter``.
        extra: More ``[score]`` overrides (``formatter``).

    The metric, the formatters and the gates are checked here, before any input is read.

    Raises:
        ConfigError / InputError: An invalid setting, metric, formatter or gate, or no input
            paths.

    """
    from agent_eval.cli import _analysis_runs as runs
    from agent_eval.formatting import load_formatters
    from agent_eval.formatting._registry import get_formatter

    cfg = runs.scoring_config(options["config"], **config_overrides(options), **extra)
    for location in cfg.formatter_path:
        load_formatters(location)
    gates = gates_from(config_path(options["config"]), options["gate"] or [], statistics=statistics)
    runs.check_metric(cfg)  # usage errors before any input is read: exit 2
    check_judge_kind(cfg)
    for name in formatters or [cfg.formatter]:
        get_formatter(name)
    return cfg, gates


@app.command("compare", cls=HelpCommand)
def compare_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    paths: PathsArg,
    formatters: Annotated[
        str,
        typer.Option(
            "--formatters",
            help="Comma-separated formatter identities, >= 2 (commas in [params] kept).",
        ),
    ],
    metric: MetricOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    mode: ModeOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    max_context_tokens: MaxContextTokensOpt = None,
    with_reference: WithReferenceOpt = None,
    references: ReferencesOpt = None,
    temperature: TemperatureOpt = None,
    formatter_path: FormatterPathOpt = None,
    labels: LabelsOpt = None,
    label_field: LabelFieldOpt = None,
    out: OutOpt = None,
    cache_path: CachePathOpt = None,
    no_cache: NoCacheOpt = False,
    refresh_cache: RefreshCacheOpt = False,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_judge_tokens: MaxJudgeTokensOpt = None,
    max_cost: MaxCostOpt = None,
    input_format: FormatOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
) -> None:
    """Score the same conversations under each formatter and compare the verdicts pairwise.

    Ctrl-C or SIGTERM (exit 130 / 143) keeps the results finished and each unit cut short
    (skipped: interrupted, with the requests it sent), and says what the run spent.
    """
    with usage_errors():
        from agent_eval.metrics._spec import split_metrics

        # commas inside [params] belong to the identity: transcript@1[a=1,b=2],json@1
        names = split_metrics(formatters)
        if len(names) < 2 or len(set(names)) != len(names):
            raise ConfigError(f"--formatters needs two or more distinct formatters, got {names}")
        cfg, gates = _scoring_setup(locals(), COMPARE_STATISTICS, names)
        from agent_eval.cli import _analysis_runs as runs

        if cfg.dry_run:
            runs.print_plans(cfg, names, as_json=as_json)
            return

        run_id, directory, cmp = runs.compare_for(
            cfg, names, labels=labels, label_field=label_field, argv=sys.argv, as_json=as_json
        )
        runs.emit(as_json, run_id, directory, name="comparison", model=cmp)
        counts = runs.variant_counts(cmp)
    if not any(p.n_paired for p in cmp.pairs):
        scored = ", ".join(
            f"{v.variant} {v.n_ok} ok, {v.n_skipped} skipped, {v.n_error} errored"
            for v in cmp.variants
        )
        see = (
            f"list the errors with: agent-eval errors {directory}"
            if any(v.n_error for v in cmp.variants)
            else "the skip reasons are above"
        )
        exit_nothing_scored(
            "nothing to compare: no conversation was scored ok under two formatters "
            f"({scored}); {see}"
        )
    exit_on_failed_gates(apply_gates(gates, counts))


@app.command("stability", cls=HelpCommand)
def stability_cmd(  # noqa: PLR0917  (one parameter per CLI option)
    paths: PathsArg,
    repeats: Annotated[int, typer.Option("--repeats", min=2, help="K judge runs (>= 2).")] = 5,
    formatter: FormatterOpt = None,
    metric: MetricOpt = None,
    judge: JudgeOpt = None,
    base_url: BaseUrlOpt = None,
    api_key_env: ApiKeyEnvOpt = None,
    mode: ModeOpt = None,
    concurrency: ConcurrencyOpt = None,
    timeout: TimeoutOpt = None,
    max_retries: MaxRetriesOpt = None,
    max_context_tokens: MaxContextTokensOpt = None,
    with_reference: WithReferenceOpt = None,
    references: ReferencesOpt = None,
    temperature: TemperatureOpt = None,
    formatter_path: FormatterPathOpt = None,
    out: OutOpt = None,
    cache_path: CachePathOpt = None,
    no_cache: NoCacheOpt = False,
    refresh_cache: RefreshCacheOpt = False,
    rpm: RpmOpt = None,
    tpm: TpmOpt = None,
    max_judge_tokens: MaxJudgeTokensOpt = None,
    max_cost: MaxCostOpt = None,
    input_format: FormatOpt = None,
    dry_run: DryRunOpt = False,
    as_json: JsonOpt = False,
    gate: GateOpt = None,
    config: ConfigOpt = None,
    redecompose: Annotated[
        bool,
        typer.Option(
            "--redecompose",
            help="Claim-level metrics: split answers anew in every repeat instead of judging "
            "the pinned statements.",
        ),
    ] = False,
) -> None:
    """Judge each conversation K times (repeat 0 may come from the cache) and measure agreement.

    Repeats 1..K-1 always call the judge; repeat 0 may be answered from the judge-call cache,
    as a score run of the same configuration would be (--refresh-cache or --no-cache: all K
    calls fresh).
    Claim-level metrics (faithfulness, groundedness) judge the same pinned atoms in every
    repeat and report the flip rate per atom as well as per score.
    Ctrl-C or SIGTERM (exit 130 / 143) keeps the results finished and each unit cut short
    (skipped: interrupted, with the requests it sent), and says what the run spent.
    """
    with usage_errors():
        cfg, gates = _scoring_setup(
            locals(), ("unanimity",), formatter=formatter, redecompose=redecompose or None
        )
        from agent_eval.cli import _analysis_runs as runs

        if cfg.dry_run:
            runs.print_plans(cfg, [cfg.formatter], repeats=repeats, as_json=as_json)
            return

        run_id, directory, st = runs.stability_for(cfg, repeats, sys.argv, as_json=as_json)
        runs.emit(as_json, run_id, directory, name="stability", model=st)
        unanimous = st.n_conversations - st.n_flipping
        count = GateCount(subject="repeats", successes=unanimous, n=st.n_conversations)
    if not st.n_conversations:
        exit_nothing_scored(
            "nothing measured: no conversation was scored ok in two or more repeats; list the "
            f"errors with: agent-eval errors {directory}"
        )
    exit_on_failed_gates(apply_gates(gates, {"unanimity": [count]}))
