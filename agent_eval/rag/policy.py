"""The run-level RAG policy: gates, not weighted means.

Declared in ``agent-eval.toml`` (or any TOML file) under ``[rag]``::

    [rag.filter]                 # a filter, not a weight: below it a turn fails, whatever else
    metric = "faithfulness"
    threshold = 1.0
    statements = 4               # optional: the atoms per turn the threshold assumes (4 of 4)

    [rag.thresholds.answer_relevance]
    threshold = 0.75             # the turn's pass mark on this quality (rubric 4 of 5)
    turns = 20                   # expected N: the run must have measured exactly 20 turns
    share = 0.9                  # turns that must pass: ceil(0.9 x 20) = 18 of 20 (default 1)

    [rag.weights]                # optional; only then a weighted mean is printed, as a trend
    answer_relevance = 0.5
    answer_correctness = 0.5

A turn **passes** when it passes the filter and every quality threshold, each of them
measured. The filter is applied first: a turn whose faithfulness is below the threshold fails
every quality, so a very relevant, wholly invented answer can never pass on its relevance. A
turn whose filter metric was skipped because there was nothing to check (``no_statements``: a
refusal; ``no_context``) does not fail the filter, and a turn without a score for a declared
quality (skipped, errored, or no row) does not fail that quality's threshold; but neither was
measured, so such a turn never counts as passing: it is listed apart, as not measured, with
the metric and reason (``groundedness skipped (no_context)``). A turn with no filter result at
all fails the filter (``not measured``: never passed unchecked). A quality's gate counts the
turns that pass the filter and its threshold, of the turns where the quality was measured, and
requires ``ceil(share x turns)`` of exactly ``turns`` (the semantics of
:mod:`agent_eval.analysis.gates`: a run measured over a different number fails, saying so).

No weighted average exists unless ``[rag.weights]`` is configured; it is then reported as a
**trend indicator** with its weights, never as a gate: a turn failing the filter contributes 0,
turns missing a weighted metric are left out.
"""

from __future__ import annotations

import math
import tomllib
from collections import Counter
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_eval.errors import ConfigError
from agent_eval.rag.turns import TurnRow

__all__ = [
    "NOT_CHECKED",
    "Filter",
    "PolicyOutcome",
    "QualityThreshold",
    "RagPolicy",
    "TurnVerdict",
    "apply_policy",
    "load_policy",
]

NOT_CHECKED = frozenset({"no_statements", "no_context", "no_claims"})
"""Skip reasons of the filter metric that mean there was nothing to check (the filter passes)."""


class Filter(BaseModel):
    """The filter: ``metric`` below ``threshold`` fails the turn, whatever its other scores."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    metric: str = "faithfulness"
    threshold: float = Field(default=1.0, ge=0.0, le=1.0)
    statements: int | None = Field(default=None, ge=1)

    def describe(self) -> str:
        """``faithfulness >= 1 (4 of 4 statements)``."""
        text = f"{self.metric} >= {self.threshold:g}"
        if self.statements:
            need = math.ceil(round(self.threshold * self.statements, 9))
            text += f" ({need} of {self.statements} statements)"
        return text


class QualityThreshold(BaseModel):
    """A quality's per-turn pass mark and its run gate over an expected number of turns."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    threshold: float = Field(ge=0.0, le=1.0)
    turns: int = Field(ge=1)
    share: float = Field(default=1.0, ge=0.0, le=1.0)

    @property
    def required(self) -> int:
        """Turns that must pass: ``ceil(share x turns)``."""
        return math.ceil(round(self.share * self.turns, 9))


class RagPolicy(BaseModel):
    """A ``[rag]`` table: the filter, the qualities' thresholds, optional trend weights."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    filter: Filter = Filter()
    thresholds: dict[str, QualityThreshold] = Field(default_factory=dict)
    weights: dict[str, float] | None = None


@dataclass
class TurnVerdict:
    """A turn under the policy.

    Attributes:
        subject: ``conversation_id/turn:K``.
        passed: Passed the filter and every threshold, each measured.
        reasons: Every reason it failed.
        unmeasured: The filter or qualities it was not measured by, with why
            (``groundedness skipped (no_context)``); such a turn never passes.

    """

    subject: str
    passed: bool
    reasons: list[str] = field(default_factory=list)
    unmeasured: list[str] = field(default_factory=list)


@dataclass
class QualityOutcome:
    """One quality's gate: ``passing`` of ``measured`` turns, against its declaration."""

    quality: str
    declared: QualityThreshold
    passing: int
    measured: int

    @property
    def passed(self) -> bool:
        """Measured over exactly the declared turns, and enough of them passed."""
        return self.measured == self.declared.turns and self.passing >= self.declared.required

    def describe(self) -> str:
        """E.g. ``answer_relevance >= 0.75: 3 of 4 turns pass, needs 3 of 4: passed``."""
        d = self.declared
        head = f"{self.quality} >= {d.threshold:g}: {self.passing} of {self.measured} turns pass"
        if self.measured != d.turns:
            return (
                f"{head}; declared over {d.turns} turns but measured over {self.measured}: FAILED"
            )
        verdict = "passed" if self.passed else "FAILED"
        return f"{head}, needs {d.required} of {d.turns}: {verdict}"


@dataclass
class PolicyOutcome:
    """The policy over a run's turns."""

    policy: RagPolicy
    turns: list[TurnVerdict]
    qualities: list[QualityOutcome]
    filter_failures: int
    trend: float | None = None
    trend_turns: int = 0

    @property
    def passed(self) -> bool:
        """Every quality gate passed."""
        return all(q.passed for q in self.qualities)

    def lines(self) -> list[str]:
        """The outcome as text lines (filter, each gate, passing turns, the trend if any)."""
        passing = sum(t.passed for t in self.turns)
        out = [
            f"filter: {self.policy.filter.describe()}; {self.filter_failures} of "
            f"{len(self.turns)} turns fail it (and so fail every quality)",
            *(q.describe() for q in self.qualities),
            f"turns passing the filter and every threshold: {passing} of {len(self.turns)}",
        ]
        unmeasured = [t for t in self.turns if t.unmeasured and not t.reasons]
        if unmeasured:
            why = Counter(u for t in unmeasured for u in t.unmeasured)
            out.append(
                f"turns not measured by the filter or a threshold (never counted as passing): "
                f"{len(unmeasured)} of {len(self.turns)}: "
                + ", ".join(f"{reason} {n}" for reason, n in sorted(why.items()))
            )
        if self.policy.weights:
            weights = ", ".join(f"{k}={v:g}" for k, v in self.policy.weights.items())
            value = "n/a" if self.trend is None else f"{self.trend:.3f}"
            out.append(
                f"trend indicator (weighted mean, weights: {weights}; not a gate): {value} "
                f"over {self.trend_turns} turns"
            )
        return out


def load_policy(path: str | Path) -> RagPolicy | None:
    """The ``[rag]`` table of a TOML file, ``None`` when it has none.

    Raises:
        ConfigError: unreadable TOML or an invalid ``[rag]`` table (names the file and field).

    """
    try:
        data = tomllib.loads(Path(path).read_text(encoding="utf-8"))
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read config: {exc}") from exc
    table = data.get("rag")
    if table is None:
        return None
    try:
        return RagPolicy.model_validate(table)
    except ValidationError as exc:
        problems = "; ".join(
            f"rag.{'.'.join(map(str, e['loc']))}: {e['msg']}" for e in exc.errors()
        )
        raise ConfigError(f"{path}: invalid [rag] policy: {problems}") from exc


def _filter(row: TurnRow, policy: RagPolicy) -> str | None:
    """Why the turn fails the filter, else ``None``."""
    name = policy.filter.metric
    result = row.results.get(name)
    if result is None:
        return f"{name} not measured"
    if result.status == "skipped" and result.error_type in NOT_CHECKED:
        return None  # not failed; :func:`_unmeasured` lists it as not measured
    if result.status != "ok" or result.score is None:
        return f"{name} {result.status} ({result.error_type})"
    if result.score < policy.filter.threshold:
        return f"{name} {result.score:.3g} < {policy.filter.threshold:g} (filter)"
    return None


def _unmeasured(row: TurnRow, name: str) -> str | None:
    """``name skipped (no_context)`` when the turn has no score for ``name``, else ``None``."""
    result = row.results.get(name)
    if result is None:
        return f"{name} not measured"
    if result.status != "ok" or result.score is None:
        return f"{name} {result.status} ({result.error_type})"
    return None


def apply_policy(rows: Sequence[TurnRow], policy: RagPolicy) -> PolicyOutcome:
    """Judge every turn, every quality gate and (with weights) the trend indicator."""
    verdicts: list[TurnVerdict] = []
    passing = {q: 0 for q in policy.thresholds}
    measured = {q: 0 for q in policy.thresholds}
    filter_failures = 0
    trend_sum, trend_turns = 0.0, 0
    for row in rows:
        reasons: list[str] = []
        filtered = _filter(row, policy)
        if filtered is not None:
            reasons.append(filtered)
            filter_failures += 1
        names = dict.fromkeys([*([] if filtered else [policy.filter.metric]), *policy.thresholds])
        unmeasured = [u for u in (_unmeasured(row, n) for n in names) if u is not None]
        for quality, declared in policy.thresholds.items():
            score = row.score(quality)
            if score is None:
                continue
            measured[quality] += 1
            if score >= declared.threshold and filtered is None:
                passing[quality] += 1
            elif score < declared.threshold:
                reasons.append(f"{quality} {score:.3g} < {declared.threshold:g}")
        if policy.weights:
            scores = [row.score(name) for name in policy.weights]
            if all(s is not None for s in scores):
                total = sum(policy.weights.values()) or 1.0
                value = sum(
                    w * (s or 0.0) for w, s in zip(policy.weights.values(), scores, strict=True)
                )
                trend_sum += 0.0 if filtered is not None else value / total
                trend_turns += 1
        verdicts.append(
            TurnVerdict(
                row.turn.subject,
                passed=not reasons and not unmeasured,
                reasons=reasons,
                unmeasured=unmeasured,
            )
        )
    qualities = [
        QualityOutcome(q, d, passing[q], measured[q]) for q, d in policy.thresholds.items()
    ]
    return PolicyOutcome(
        policy=policy,
        turns=verdicts,
        qualities=qualities,
        filter_failures=filter_failures,
        trend=trend_sum / trend_turns if trend_turns else None,
        trend_turns=trend_turns,
    )
