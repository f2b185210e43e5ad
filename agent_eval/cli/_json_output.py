"""The ``--json`` documents of every command that prints a summary: one shape per command.

Every document is one JSON object on stdout (nothing else goes to stdout with ``--json``;
progress, warnings and gate outcomes go to stderr). It starts with two envelope keys:

- ``schema_version``: :data:`SCHEMA_VERSION`. It is raised when a key changes meaning or is
  removed; keys may be added within a version.
- ``command``: the command, as typed (``"score"``, ``"runs list"``, ``"cache info"``).

A command that fails before it printed its document (a usage, configuration, input or output
error: exit 2 to 5) prints the error document instead (:class:`ErrorPayload`, written by the
``agent-eval`` entry point :func:`agent_eval.cli._app.main`): the envelope, ``exit_code`` and
``error`` (``message``: the one-line error that stderr shows as well; ``type``: the error's
class, e.g. ``UnknownPluginError``, ``DecodeError``, ``NoSuchOption`` for an unknown flag). A
command whose document was printed (``score`` exiting 2 for a judged metric with no judge)
carries its exit code in it and prints nothing more; a gate failure (exit 1) is no error. The
error document was added within schema version 1 (before it, a failure printed nothing).

The other keys are the command's payload, the fields of the pydantic model
:data:`PAYLOADS` names for the command (``calibrate``: by ``kind``):

==============  ================================================================================
command         payload
==============  ================================================================================
score           :class:`ScorePayload` (one :class:`MetricSummary` per metric; the plans)
compare         :class:`ComparePayload` (``comparison``: ``analysis.paired.VariantComparison``)
stability       :class:`StabilityPayload` (``stability``: ``analysis.stability.Stability``)
calibrate       ``kind`` and the fields of ``Calibration`` / ``OrdinalCalibration`` /
                ``ClaimCalibration`` (:mod:`agent_eval.analysis`)
rag             :class:`RagPayload`
runs list       :class:`RunsListPayload`
runs show       the fields of :class:`~agent_eval.run._store.RunRecord`, ``usage`` and
                ``unscored`` (a serve run's conversations its shutdown left unscored:
                ``agent_eval.live._unscored.UnscoredEntry``; ``[]`` for other runs)
runs diff       the fields of :class:`~agent_eval.run._run_diff.RunDiff`
cache info      :class:`CacheInfoPayload`
errors          :class:`ErrorsPayload`
judges list     :class:`JudgesPayload`
export phoenix  :class:`ExportPayload`
ingest          the fields of ``IngestReport.to_json()`` (files, spans, conversations) and
                ``records`` (``IngestReport.records_json()``: read, used, skipped)
formatters list ``formatters``: one object per registered formatter release
==============  ================================================================================
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import orjson
from pydantic import BaseModel, ConfigDict, Field

if TYPE_CHECKING:
    from agent_eval.run._plan import RunPlan
    from agent_eval.run._run_diff import RunDiff
    from agent_eval.run._store import RunRecord

__all__ = [
    "PAYLOADS",
    "SCHEMA_VERSION",
    "CacheInfoPayload",
    "CacheSummary",
    "ComparePayload",
    "ErrorDetail",
    "ErrorPayload",
    "ErrorsPayload",
    "ExportPayload",
    "FailUnderOutcome",
    "GateResult",
    "InterruptedPayload",
    "JudgeEntry",
    "JudgesPayload",
    "MetricSummary",
    "PlanSummary",
    "RagPayload",
    "RunsListPayload",
    "ScorePayload",
    "StabilityPayload",
    "documents_written",
    "emit_error",
    "emit_interrupted",
    "emit_json",
    "plan_summary",
]

SCHEMA_VERSION = 1
"""The version of every ``--json`` document's shape."""


class _Payload(BaseModel):
    model_config = ConfigDict(extra="forbid")


class MetricSummary(_Payload):
    """One metric's result in ``score --json`` (:class:`~agent_eval.run._summary.RunSummary`).

    ``units = scored + skipped + errored``; tokens are the judge's, over every call, retries
    included; ``mean_score`` is ``None`` when nothing was scored. ``judge_calls`` counts the
    calls asked, ``cached_calls`` those answered from the judge-call cache (free in this run);
    ``usage_unknown`` rows had a reply without usage, and ``estimated_input_tokens`` /
    ``estimated_output_tokens`` put those rows' request-based estimates in place of their
    lower bounds.

    The usage counts (tokens, requests, calls) are this invocation's: after ``--resume``, the
    rows finished earlier (``resumed``) count in ``run_total`` only, which sums the run's
    whole spend over every invocation, its rows and the rows they replaced
    (:meth:`agent_eval.run._usage.RunUsage.to_json`; ``None`` when the results were not
    stored).

    ``cost_usd`` is the judge cost the terminal's usage table and the HTML report show for
    the metric, over the run (every invocation, replaced rows included;
    :func:`agent_eval._costs.shown_cost`): USD at the ``[prices]`` table, then genai-prices,
    over the estimated token sums; ``0.0`` when every call was answered from the cache;
    ``None`` when the judge model has no price (the table's ``n/a``) or no judge was called
    (``judge_free``: the table's ``no judge``). ``cost_estimated`` says it includes the
    estimate of rows without a usage report (the table's ``~ est.``).
    """

    metric: str
    formatter: str
    judge_model: str
    units: int
    scored: int
    skipped: int
    errored: int
    resumed: int
    mean_score: float | None
    full_scores: int = 0
    """``ok`` units scoring 1: the successes a ``mean_score`` gate counts."""
    skip_reasons: dict[str, int]
    error_types: dict[str, int]
    input_tokens: int
    output_tokens: int
    judge_requests: int
    judge_calls: int
    cached_calls: int
    usage_unknown: int
    estimated_input_tokens: int
    estimated_output_tokens: int
    atoms: int
    atoms_passed: int
    atom_units: int
    wall_seconds: float
    cost_usd: float | None = None
    cost_estimated: bool = False
    judge_free: bool = False
    run_total: dict[str, Any] | None = None


class PlanSummary(_Payload):
    """One metric's plan in ``score --json`` (:class:`~agent_eval.run._plan.RunPlan`).

    Token counts are o200k estimates; ``cost_usd`` is ``None`` without a price.
    """

    metric: str
    formatter: str
    judge_model: str | None
    conversations: int
    units: int
    to_score: int
    skipped: dict[str, int]
    judge_calls: int
    prompt_tokens: int
    output_tokens: int
    cost_usd: float | None
    judge_free: bool
    priced_as: str | None = None


class GateResult(_Payload):
    """One gate's outcome on one measured count (``score --json``'s ``gates``).

    ``needed`` is ``ceil(threshold × items)``; ``passed`` is false also when the count was
    measured over another number of items than the gate declares (``n != items``).
    ``message`` is the line stderr shows.
    """

    name: str
    statistic: str
    source: str
    threshold: float
    items: int
    subject: str
    successes: int
    n: int
    needed: int
    passed: bool
    message: str


class FailUnderOutcome(_Payload):
    """``--fail-under`` on one metric: its mean score against the threshold."""

    metric: str
    mean_score: float | None
    threshold: float
    passed: bool


class CacheSummary(_Payload):
    """The judge-call cache in one run (``score --json``'s ``cache``).

    ``hits`` answered from the cache, ``calls`` sent to the endpoint; ``endpoint`` is this
    run's, bare (no credentials or query); ``other_endpoint_hits`` of the hits came from
    entries another endpoint filled (``other_endpoints``: those endpoints, with counts), and
    ``unknown_endpoint_hits`` from entries that name no endpoint (written by an agent-eval that
    did not keep it; which endpoint answered is unknown).
    """

    hits: int
    calls: int
    endpoint: str | None
    other_endpoint_hits: int
    other_endpoints: dict[str, int]
    unknown_endpoint_hits: int


class ScorePayload(_Payload):
    """``score --json``: the plans (always) and, unless a dry run, each metric's summary.

    Attributes:
        run_id / out: The run and its output directory (``None`` for a dry run).
        dry_run: Whether this was ``--dry-run`` (no judge called, ``metrics`` empty).
        exit_code: The command's exit code (:mod:`agent_eval.cli._exit_codes`).
        metrics: One summary per metric scored, in ``--metric`` order.
        plans: One plan per metric.
        not_scored: Judged metrics not scored because no judge is configured.
        gates: Every declared gate's outcome per measured count (empty: no gate).
        fail_under: ``--fail-under``'s outcome per metric (empty without the flag).
        inputs: The ingest accounting of the inputs, the document ``ingest --json`` prints
            (``files``, ``spans``, ``logs``, ``records_ignored``, ``skipped``...).
        changed_since_judged: With ``--resume``/``--retry-errors``: the finished
            conversations whose rendering changed since they were judged (kept, not
            re-judged).
        cache: The judge-call cache's hits and calls (``None`` without a judge or with
            ``--no-cache``).

    """

    run_id: str | None
    out: str | None
    dry_run: bool
    exit_code: int
    metrics: list[MetricSummary]
    plans: list[PlanSummary]
    not_scored: list[str] = []
    gates: list[GateResult] = []
    fail_under: list[FailUnderOutcome] = []
    inputs: dict[str, Any] | None = None
    changed_since_judged: list[str] = []
    cache: CacheSummary | None = None


class ComparePayload(_Payload):
    """``compare --json``: the run and its comparison (``VariantComparison`` as JSON).

    With ``--dry-run``: ``dry_run`` true, no run, no comparison, one plan per formatter.
    """

    run_id: str | None
    out: str | None
    comparison: dict[str, Any] | None
    dry_run: bool = False
    plans: list[PlanSummary] = []


class StabilityPayload(_Payload):
    """``stability --json``: the run and its stability (``Stability`` as JSON).

    With ``--dry-run``: ``dry_run`` true, no run, the plan of one repeat and ``repeats``.
    """

    run_id: str | None
    out: str | None
    stability: dict[str, Any] | None
    dry_run: bool = False
    plans: list[PlanSummary] = []
    repeats: int | None = None


class RagPayload(_Payload):
    """``rag --json``: the turns, failure counts, reviewer agreement and policy outcome.

    Every turn with its results, failures and failing statements
    (:meth:`~agent_eval.run._turns.TurnRow.failing_statements`), failure counts by stage, each
    reviewer's agreement with the labels, and the policy's outcome
    (:meth:`~agent_eval.rag._policy.PolicyOutcome.to_json`: each gate with its metric,
    threshold, turns measured and needed, passed, turns not measured, and its sentence as
    ``text``; ``None`` without a policy).
    """

    turns: list[dict[str, Any]]
    failures: dict[str, dict[str, int]]
    agreement: list[dict[str, Any]]
    policy: dict[str, Any] | None


class RunsListPayload(_Payload):
    """``runs list --json``: the runs of a directory, oldest first (``RunRecord`` fields)."""

    runs: list[dict[str, Any]]


class CacheInfoPayload(_Payload):
    """``cache info --json``: the cache file, entries, bytes on disk, age range, by model."""

    path: str
    entries: int
    size_bytes: int
    oldest: str | None
    newest: str | None
    models: dict[str, int]


class ErrorsPayload(_Payload):
    """``errors --json``: a run's errored rows (ids, metric, formatter, error type/message).

    ``steering`` lists the units whose content tries to steer the judge, each with its flags
    (:meth:`agent_eval.analysis._steering.SteeredUnit.to_json`); empty when none.
    """

    run_id: str
    errors: list[dict[str, Any]]
    steering: list[dict[str, Any]] = Field(default_factory=list)


class ErrorDetail(_Payload):
    """Why a command failed: the one-line message (as on stderr) and the error's class name."""

    message: str
    type: str


class ErrorPayload(_Payload):
    """The document of a ``--json`` command that failed before printing its own (exit 2-5).

    ``command`` (the envelope's) is the command as typed, ``""`` when none could be told.
    """

    exit_code: int
    error: ErrorDetail


class InterruptedPayload(ErrorPayload):
    """``score --json`` stopped by Ctrl-C (exit 130) or SIGTERM (143): the counts so far.

    The error document's keys (``error.type`` ``Interrupted``, ``error.message`` the line
    stderr shows: results kept, and ``--resume DIR``), and the run, its directory and one
    :class:`MetricSummary` per metric counting the rows the store kept (``units`` is the rows
    so far, units cut short by the interrupt among them as skipped ``interrupted``;
    ``None`` / empty when scoring had not started).
    """

    run_id: str | None
    out: str | None
    metrics: list[MetricSummary]


def plan_summary(plan: RunPlan) -> PlanSummary:
    """A :class:`~agent_eval.run._plan.RunPlan` as its JSON payload."""
    # not dataclasses.asdict: it rebuilds the skip Counter from (reason, n) pairs, counting them
    fields = {f.name: getattr(plan, f.name) for f in dataclasses.fields(plan)}
    return PlanSummary.model_validate(fields | {"skipped": dict(plan.skipped)})


class ExportPayload(_Payload):
    """``export phoenix --json``: where, which run, and what was written.

    ``not_written`` lists the conversation ids whose annotation failed (exit 5 when any), one
    entry per annotation; ``not_written_annotations`` names each of them by
    ``conversation_id``, ``unit_id``, ``metric`` and ``target`` (``session`` or
    ``span <span id>``) (added within schema version 1);
    ``written_by_kind`` splits ``written`` into ``session`` and ``span`` annotations (added
    within schema version 1).
    """

    endpoint: str
    run_id: str
    written: int
    written_by_kind: dict[str, int] = {}
    not_written: list[str]
    not_written_annotations: list[dict[str, str]] = []
    skipped: dict[str, int]
    errors: list[str]


class JudgeEntry(_Payload):
    """One registered judge: its kind, ``module:Class``, whether the CLI can build it."""

    kind: str
    cls: str
    cli: bool
    summary: str


class JudgesPayload(_Payload):
    """``judges list --json``: the registered judges, and entry points that failed to load."""

    judges: list[JudgeEntry]
    broken: dict[str, str]


PAYLOADS: Mapping[str, type[BaseModel] | None] = {
    "score": ScorePayload,
    "compare": ComparePayload,
    "stability": StabilityPayload,
    "rag": RagPayload,
    "runs list": RunsListPayload,
    "cache info": CacheInfoPayload,
    "errors": ErrorsPayload,
    "judges list": JudgesPayload,
    "export phoenix": ExportPayload,
    "calibrate": None,  # the calibration model of --kind, plus "kind"
    "runs show": None,  # RunRecord's fields
    "runs diff": None,  # RunDiff's fields
    "ingest": None,  # IngestReport.to_json(), records
    "formatters list": None,
}
"""The payload model of each command's ``--json`` document (``None``: see the table above)."""


def _default(value: object) -> object:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        return dataclasses.asdict(value)
    return str(value)  # paths


def emit_json(command: str, payload: BaseModel | Mapping[str, Any] | RunRecord | RunDiff) -> None:
    """Write ``command``'s document to stdout: the envelope keys, then ``payload``'s fields.

    ``payload`` is a pydantic model (dumped in JSON mode), a dataclass or a mapping.
    """
    if isinstance(payload, BaseModel):
        data: Mapping[str, Any] = payload.model_dump(mode="json")
    elif dataclasses.is_dataclass(payload):
        data = dataclasses.asdict(payload)
    else:
        data = payload
    document = {"schema_version": SCHEMA_VERSION, "command": command, **data}
    text = orjson.dumps(document, default=_default, option=orjson.OPT_INDENT_2).decode()
    _written[0] += 1
    from agent_eval.cli._quiet import machine_stdout  # written with --quiet too

    stdout = machine_stdout()
    stdout.write(text + "\n")
    stdout.flush()


_written = [0]  # documents written by emit_json in this process


def documents_written() -> int:
    """How many documents :func:`emit_json` wrote in this process."""
    return _written[0]


def emit_error(command: str, exit_code: int, message: str, error_type: str) -> None:
    """Write the :class:`ErrorPayload` document of ``command``, failed with ``exit_code``."""
    detail = ErrorDetail(message=message, type=error_type)
    emit_json(command, ErrorPayload(exit_code=exit_code, error=detail))


def emit_interrupted(
    command: str,
    exit_code: int,
    message: str,
    *,
    run_id: str | None,
    out: str | None,
    metrics: list[MetricSummary],
) -> None:
    """Write the :class:`InterruptedPayload` document of ``command`` (exit 130 or 143)."""
    detail = ErrorDetail(message=message, type="Interrupted")
    payload = InterruptedPayload(
        exit_code=exit_code, error=detail, run_id=run_id, out=out, metrics=metrics
    )
    emit_json(command, payload)
