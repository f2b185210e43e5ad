"""What ``score --json`` reports: the run's document, filled in as the run goes.

:class:`ScoreReport` collects the plans, summaries, usage lines, gate outcomes and the judge-call
cache's counts of one ``score``, and makes the :class:`~agent_eval.cli._json_output.ScorePayload`
printed on stdout; the payload models are imported only when the report is made (start-up).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from agent_eval._costs import NO_JUDGE, UsageLine, shown_cost
from agent_eval.run._judge_stack import JudgeStack
from agent_eval.run._plan import RunPlan
from agent_eval.run._summary import RunSummary

if TYPE_CHECKING:
    from agent_eval.cli._json_output import (
        CacheSummary,
        FailUnderOutcome,
        GateResult,
        MetricSummary,
        ScorePayload,
    )

__all__ = ["ScoreReport", "cache_summary", "metric_summary"]


@dataclass
class ScoreReport:
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
        """The ``score`` document for exit code ``code``."""
        from agent_eval.cli._json_output import ScorePayload, plan_summary

        first = self.summaries[0] if self.summaries else None
        return ScorePayload(
            run_id=first.run_id if first else None,
            out=str(first.out_dir) if first and first.out_dir else None,
            dry_run=dry_run,
            exit_code=code,
            metrics=[metric_summary(summary, self.usage) for summary in self.summaries],
            plans=[plan_summary(plan) for plan in self.plans],
            not_scored=self.not_scored,
            gates=self.gates,
            fail_under=self.fail_under,
            inputs=self.inputs,
            changed_since_judged=self.changed_since_judged,
            cache=self.cache,
        )


def metric_summary(summary: RunSummary, usage: Sequence[UsageLine] = ()) -> MetricSummary:
    """``summary`` with the cost its line of the usage table shows (``None``: no line)."""
    from agent_eval.cli._json_output import MetricSummary

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


def cache_summary(stack: JudgeStack | None) -> CacheSummary | None:
    """The judge-call cache's counts for ``--json`` (``None``: no judge or ``--no-cache``)."""
    cached = stack.cached if stack is not None else None
    if cached is None:
        return None
    from agent_eval.cli._json_output import CacheSummary

    return CacheSummary(
        hits=cached.hits,
        calls=cached.misses,
        endpoint=cached.endpoint,
        other_endpoint_hits=cached.other_endpoint_hits,
        other_endpoints=dict(cached.other_endpoints),
        unknown_endpoint_hits=cached.unknown_endpoint_hits,
    )
