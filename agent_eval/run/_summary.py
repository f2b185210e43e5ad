"""What a run did: :class:`RunSummary`, built result by result, and its terminal table.

The summary states the engine's accounting contract in every run: each input conversation
ends ``ok`` (scored), ``skipped`` with a reason or ``error`` with a reason, and
``scored + skipped + errored = units``.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from agent_eval._costs import stage_tokens
from agent_eval._result import CONVERSATION_UNIT, MetricResult

if TYPE_CHECKING:
    from rich.table import Table

    from agent_eval.run._usage import RunUsage

__all__ = ["FULL_SCORE", "RunSummary"]

FULL_SCORE_SLACK = 1e-9
FULL_SCORE = 1.0 - FULL_SCORE_SLACK
"""The least score counted as a full score (1 up to float rounding of ``k / k``)."""


@dataclass(kw_only=True)
class RunSummary:
    """Counts, score and usage of one run (mutable while the run goes on).

    Attributes:
        run_id: The run's id.
        metric / formatter / judge_model: The run's identity (formatter with parameters).
        out_dir: Where the results store is, or ``None`` when results were not stored.
        input: Units taken in (conversations, for conversation metrics).
        scored / skipped / errored: Rows by status (``ok``, ``skipped``, ``error``).
        resumed: Of these, rows already finished by an earlier, interrupted run (not re-judged).
        score_sum: Sum of the scores of the ``ok`` rows.
        full_scores: ``ok`` rows scoring 1 (a binary verdict 1; every tool call, atom or check
            of a fractional metric passed): the successes a ``mean_score`` gate counts. A row
            scoring 0.75 is not one, so the gate's share is never above :attr:`mean_score`.
        input_tokens / output_tokens: Judge tokens over every call, retries included. These
            and the other usage counts below are this invocation's: a resumed row's calls
            were made by an earlier one, and count in :attr:`run_total` only.
        attempts: Judge requests made, retries included (0 for cached replies).
        judge_calls / cached_calls: Judge calls asked, and of them those answered from the
            judge-call cache (free in this run).
        usage_unknown: Rows with a judge call whose usage the endpoint did not report.
        best_input_tokens / best_output_tokens: The token sums with those rows' estimates
            (:attr:`MetricResult.best_tokens`) in place of their lower bounds.
        wall_seconds: Wall time of the run, seconds.
        skip_reasons / error_types: Rows by reason.
        atoms / atoms_passed: Atoms over the ``ok`` rows scored from atoms (claim-level
            metrics: no verdict, the score is the share of atoms passed), and how many of them
            passed: the run's "k of n". Rows whose atoms only explain a score computed
            otherwise (``tool_call_accuracy``'s matched calls, an F1 or recall) are not counted.
        atom_units: ``ok`` rows scored from atoms.
        conversation_units: Whether every unit so far is a whole conversation (the noun of
            the summary's lines); ``False`` once a unit is a turn or another part.
        stage_tokens: ``{stage: [requests, input tokens, output tokens, estimated rows]}``
            summed over the rows of metrics that name their stages (``details["stages"]``);
            a stage without a usage report counts its estimate (and one estimated row), so
            the stages add up to the best token sums.
        results: The result rows, in completion order (when the run keeps them).
        run_total: What the run's judge calls spent over every invocation (its rows and the
            rows they replaced), when known (set from the store at the end of ``score``);
            the table shows it, labelled, beside this invocation's figures when they differ.

    """

    run_id: str
    metric: str
    formatter: str
    judge_model: str
    out_dir: Path | None = None
    input: int = 0
    scored: int = 0
    skipped: int = 0
    errored: int = 0
    resumed: int = 0
    score_sum: float = 0.0
    full_scores: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    attempts: int = 0
    judge_calls: int = 0
    cached_calls: int = 0
    usage_unknown: int = 0
    best_input_tokens: int = 0
    best_output_tokens: int = 0
    wall_seconds: float = 0.0
    skip_reasons: Counter[str] = field(default_factory=Counter)
    error_types: Counter[str] = field(default_factory=Counter)
    atoms: int = 0
    atoms_passed: int = 0
    atom_units: int = 0
    stage_tokens: dict[str, list[int]] = field(default_factory=dict)
    results: list[MetricResult] = field(default_factory=list, repr=False)
    """Left out of ``repr``: ``asyncio.run`` formats the main task's result (a list of
    summaries) with ``%r`` as it ends on Python 3.11, ~33 us per row twice per run."""
    conversation_units: bool = True
    run_total: RunUsage | None = None

    def add(self, result: MetricResult, *, keep: bool = True, resumed: bool = False) -> None:
        """Count ``result`` (one unit); a ``resumed`` one's usage is not this invocation's."""
        self.input += 1
        self.conversation_units &= result.unit_id == CONVERSATION_UNIT
        self.resumed += int(resumed)
        if not resumed:
            self._add_usage(result)
        if result.status == "ok":
            self.scored += 1
            self.score_sum += result.score or 0.0
            self.full_scores += int((result.score or 0.0) >= FULL_SCORE)
            if result.atoms is not None and result.verdict is None:  # scored from its atoms
                self.atom_units += 1
                self.atoms += len(result.atoms)
                self.atoms_passed += sum(atom.passed for atom in result.atoms)
        elif result.status == "skipped":
            self.skipped += 1
            self.skip_reasons[result.error_type or "?"] += 1
        else:
            self.errored += 1
            self.error_types[result.error_type or "?"] += 1
        if keep:
            self.results.append(result)

    def _add_usage(self, result: MetricResult) -> None:
        self.input_tokens += result.input_tokens
        self.output_tokens += result.output_tokens
        self.attempts += result.attempts
        self.judge_calls += result.judge_calls
        self.cached_calls += result.cached_calls
        self.usage_unknown += int(not result.usage_known)
        best_in, best_out = result.best_tokens
        self.best_input_tokens += best_in
        self.best_output_tokens += best_out
        self._add_stages(result)

    def _add_stages(self, result: MetricResult) -> None:
        stages = result.details.get("stages")
        if not isinstance(stages, dict):
            return
        for stage, usage in stages.items():
            if isinstance(usage, dict):
                sums = self.stage_tokens.setdefault(stage, [0, 0, 0, 0])
                attempts = usage.get("attempts")
                tokens_in, tokens_out, estimated = stage_tokens(usage, result.usage_known)
                sums[0] += attempts if isinstance(attempts, int) else 0
                sums[1] += tokens_in
                sums[2] += tokens_out
                sums[3] += int(estimated)

    def tokens_text(self) -> str:
        """The judge tokens in words: reported, estimated (marked) or none spent (cached).

        ``"1200 in, 80 out"``; ``"~5400 in, ~310 out (estimated: 3 of 10 rows had no usage
        report; o200k count of their requests and replies)"``; ``"none spent: all 12 judge
        calls answered from the cache"``.
        """
        if self.judge_calls and self.cached_calls == self.judge_calls:
            return f"none spent: all {self.judge_calls} judge calls answered from the cache"
        if not self.usage_unknown:
            return f"{self.input_tokens} in, {self.output_tokens} out"
        return (
            f"~{self.best_input_tokens} in, ~{self.best_output_tokens} out (estimated: "
            f"{self.usage_unknown} of {self.input - self.resumed} rows had no usage report; "
            "o200k count of their requests and replies)"
        )

    def requests_text(self) -> str:
        """Requests sent, with the calls answered from the cache.

        ``"12 (988 of 1000 calls cached: 0 tokens, $0 in this run)"``, or just ``"14"`` with
        no cache hit.
        """
        if not self.cached_calls:
            return str(self.attempts)
        share = (
            f"all {self.judge_calls} calls"
            if self.cached_calls == self.judge_calls
            else f"{self.cached_calls} of {self.judge_calls} calls"
        )
        return f"{self.attempts} ({share} cached: 0 tokens, $0 in this run)"

    @property
    def _scope(self) -> str:
        """`` (this invocation)`` when the run's total differs from it (shown apart), or ``""``."""
        total = self.run_total
        if total is None or not (self.resumed or total.replaced_rows):
            return ""
        return " (this invocation)"

    @property
    def mean_score(self) -> float | None:
        """Mean score of the scored rows (0-1), ``None`` when nothing was scored."""
        return self.score_sum / self.scored if self.scored else None

    @property
    def fractional(self) -> bool:
        """Whether some ``ok`` row scored strictly between 0 and 1 (a fractional metric)."""
        return abs(self.score_sum - self.full_scores) > FULL_SCORE_SLACK * max(1, self.scored)

    def nothing_scored(self) -> str | None:
        """Why no conversation was scored, in one line; ``None`` when some were (or no input).

        Names the dominant error type and skip reason, e.g. ``nothing was scored: all 4
        conversations errored (mostly judge_unavailable: 4 of 4)``.
        """
        if self.scored or not self.input:
            return None
        parts = [
            f"{count} {what} (mostly {_dominant(reasons, count)})"
            for count, what, reasons in (
                (self.errored, "errored", self.error_types),
                (self.skipped, "were skipped", self.skip_reasons),
            )
            if count
        ]
        if len(parts) == 1:
            every = f"all {self.input} {self.noun}" if self.input > 1 else f"the {self.noun[:-1]}"
            return f"nothing was scored: {every} " + parts[0].split(" ", 1)[1]
        return "nothing was scored: " + " and ".join(parts)

    @property
    def noun(self) -> str:
        """``"conversations"``, or ``"units"`` when a unit is a turn or another part of one."""
        return "conversations" if self.conversation_units else "units"

    @property
    def balanced(self) -> bool:
        """Whether ``scored + skipped + errored == units`` (``input``)."""
        return self.scored + self.skipped + self.errored == self.input

    @property
    def accounting_line(self) -> str:
        """``scored + skipped + errored = units: 8 + 1 + 1 = 10`` (``!=`` if it ever fails)."""
        sign = "=" if self.balanced else "!="
        return (
            f"scored + skipped + errored {sign} units: "
            f"{self.scored} + {self.skipped} + {self.errored} {sign} {self.input}"
        )

    def table(self) -> Table:
        """The end-of-run summary as a rich table."""
        from rich.markup import escape  # rich only where the summary is printed
        from rich.table import Table

        table = Table(title=f"run {self.run_id}", show_header=False, title_justify="left")
        table.add_column("what", style="bold")
        table.add_column("value")
        mean = "n/a" if self.mean_score is None else f"{self.mean_score:.3f}"
        rows = [
            ("metric", self.metric),
            ("formatter", self.formatter),
            ("judge", self.judge_model),
            ("ok (scored)", str(self.scored)),
            ("skipped", _with_reasons(self.skipped, self.skip_reasons)),
            ("error", _with_reasons(self.errored, self.error_types)),
            ("mean score", f"{mean} over {self.scored} scored"),
            (f"judge tokens{self._scope}", self.tokens_text()),
            (f"judge requests{self._scope}", self.requests_text()),
        ]
        if self.atom_units:
            rows.insert(
                7,
                (
                    "atoms passed",
                    f"{self.atoms_passed} of {self.atoms} over {self.atom_units} scored units",
                ),
            )
        rows += [
            (f"stage {stage}", _stage_text(*sums)) for stage, sums in self.stage_tokens.items()
        ]
        rows += [
            ("wall time", f"{self.wall_seconds:.2f} s"),
        ]
        if self.resumed:
            rows.append(("resumed", f"{self.resumed} already finished, not re-judged"))
        if self._scope and self.run_total is not None:
            rows.append(("run total (all invocations)", self.run_total.text()))
        if self.out_dir is not None:
            rows.append(("results", str(self.out_dir)))
        for what, value in rows:
            table.add_row(what, escape(value))  # ids such as NAME@1[k=v]: not markup
        return table


def _stage_text(requests: int, tokens_in: int, tokens_out: int, estimated: int) -> str:
    """``"13 requests, 420 in, 35 out"``; ``~`` marks and names estimated counts."""
    if not estimated:
        return f"{requests} requests, {tokens_in} in, {tokens_out} out"
    return (
        f"{requests} requests, ~{tokens_in} in, ~{tokens_out} out (estimated: {estimated} "
        "row(s) had no usage report)"
    )


def _with_reasons(count: int, reasons: Counter[str]) -> str:
    if not reasons:
        return str(count)
    return f"{count} (" + ", ".join(f"{k}: {v}" for k, v in sorted(reasons.items())) + ")"


def _dominant(reasons: Counter[str], count: int) -> str:
    reason, n = reasons.most_common(1)[0] if reasons else ("?", count)
    return f"{reason}: {n} of {count}"
