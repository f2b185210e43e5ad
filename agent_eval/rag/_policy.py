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
refusal; ``no_context``) does not fail the filter (it passes it, for the qualities' gates). A
turn whose filter metric was skipped for any other reason (``final_reply_missing``, ...) or
errored does not fail the filter either, but it does not pass it: its qualities never count as
passing. A turn without a score for a declared quality (skipped, errored, or no row) does not
fail that quality's threshold. None of these was measured, so such a turn never counts as
passing: it is listed apart, as not measured, with the metric and reason (``groundedness
skipped (no_context)``, ``faithfulness error (judge_error)``), whatever else it failed. A turn
with no filter result at all fails the filter (``not measured``: never passed unchecked). A
quality's gate counts the turns that pass the filter and its threshold, of the turns where the
quality was measured, and requires ``ceil(share x turns)`` of exactly ``turns`` (the semantics
of :mod:`agent_eval.analysis._gates`: a run measured over a different number fails, saying so).

:meth:`PolicyOutcome.to_json` gives the same outcome as data (``rag --json``): one entry per
gate (the filter first) with its metric, threshold, the turns it measured, how many it needs,
whether it passed and the turns it did not measure, each with its sentence as ``text``.

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
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from agent_eval.errors import ConfigError
from agent_eval.run._turns import TurnRow

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
    not_measured: list[tuple[str, str]] = field(default_factory=list)
    """``(subject, why)`` of each turn without a score for the quality."""

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

    def to_json(self) -> dict[str, Any]:
        """The gate as data (see :meth:`PolicyOutcome.to_json`)."""
        d = self.declared
        return {
            "name": self.quality,
            "metric": self.quality,
            "threshold": d.threshold,
            "turns": d.turns,
            "share": d.share,
            "measured": self.measured,
            "passing": self.passing,
            "needed": d.required,
            "passed": self.passed,
            "not_measured": _listed(self.not_measured),
            "text": self.describe(),
        }


@dataclass
class PolicyOutcome:
    """The policy over a run's turns.

    Attributes:
        filter_failures: Turns failing the filter (below its threshold, or no filter result).
        filter_measured: Turns with a filter score.
        filter_not_measured: ``(subject, why)`` of each turn without a filter score.

    """

    policy: RagPolicy
    turns: list[TurnVerdict]
    qualities: list[QualityOutcome]
    filter_failures: int
    trend: float | None = None
    trend_turns: int = 0
    filter_measured: int = 0
    filter_not_measured: list[tuple[str, str]] = field(default_factory=list)

    @property
    def passed(self) -> bool:
        """Every quality gate passed."""
        return all(q.passed for q in self.qualities)

    def _filter_line(self) -> str:
        line = (
            f"filter: {self.policy.filter.describe()}; {self.filter_failures} of "
            f"{len(self.turns)} turns fail it (and so fail every quality)"
        )
        skipped = sum(1 for _, why in self.filter_not_measured if not why.endswith("not measured"))
        if skipped:
            line += f"; {skipped} not measured by it (listed below)"
        return line

    def _unmeasured_line(self) -> str | None:
        unmeasured = [t for t in self.turns if t.unmeasured]
        if not unmeasured:
            return None
        why = Counter(u for t in unmeasured for u in t.unmeasured)
        return (
            f"turns not measured by the filter or a threshold (never counted as passing): "
            f"{len(unmeasured)} of {len(self.turns)}: "
            + ", ".join(f"{reason} {n}" for reason, n in sorted(why.items()))
        )

    def _trend_line(self) -> str | None:
        if not self.policy.weights:
            return None
        weights = ", ".join(f"{k}={v:g}" for k, v in self.policy.weights.items())
        value = "n/a" if self.trend is None else f"{self.trend:.3f}"
        return (
            f"trend indicator (weighted mean, weights: {weights}; not a gate): {value} "
            f"over {self.trend_turns} turns"
        )

    def _passing_line(self) -> str:
        passing = sum(t.passed for t in self.turns)
        return f"turns passing the filter and every threshold: {passing} of {len(self.turns)}"

    def lines(self) -> list[str]:
        """The outcome as text lines.

        The filter, each gate, the passing turns, the turns not measured and the trend if any.
        """
        optional = (self._unmeasured_line(), self._trend_line())
        return [
            self._filter_line(),
            *(q.describe() for q in self.qualities),
            self._passing_line(),
            *(line for line in optional if line is not None),
        ]

    def to_json(self) -> dict[str, Any]:
        """The outcome as data, for ``rag --json``.

        Returns:
            ``{"passed", "gates", "turns", "turns_passing", "not_measured", "trend", "text"}``:
            ``gates`` holds the filter first (``{"name": "filter", "metric", "threshold",
            "statements", "measured", "failing", "needed": None, "passed": None,
            "not_measured", "text"}``: the filter gates turns, not the run, so it has no pass
            mark of its own) and then each quality's gate (``{"name", "metric", "threshold",
            "turns", "share", "measured", "passing", "needed", "passed", "not_measured",
            "text"}``); each ``not_measured`` is ``[{"subject", "reason"}]``. ``not_measured``
            at the top lists every turn not measured by the filter or a threshold with its
            reasons, ``trend`` is ``None`` without weights, ``text`` the lines of
            :meth:`lines`.

        """
        f = self.policy.filter
        gates: list[dict[str, Any]] = [
            {
                "name": "filter",
                "metric": f.metric,
                "threshold": f.threshold,
                "statements": f.statements,
                "measured": self.filter_measured,
                "failing": self.filter_failures,
                "needed": None,
                "passed": None,
                "not_measured": _listed(self.filter_not_measured),
                "text": self._filter_line(),
            },
            *(q.to_json() for q in self.qualities),
        ]
        trend = self._trend_line()
        return {
            "passed": self.passed,
            "gates": gates,
            "turns": len(self.turns),
            "turns_passing": sum(t.passed for t in self.turns),
            "not_measured": [
                {"subject": t.subject, "reasons": list(t.unmeasured)}
                for t in self.turns
                if t.unmeasured
            ],
            "trend": None
            if trend is None
            else {
                "value": self.trend,
                "weights": dict(self.policy.weights or {}),
                "turns": self.trend_turns,
                "text": trend,
            },
            "text": self.lines(),
        }


def _listed(pairs: Sequence[tuple[str, str]]) -> list[dict[str, str]]:
    return [{"subject": subject, "reason": why} for subject, why in pairs]


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


def _filter(row: TurnRow, policy: RagPolicy) -> tuple[str | None, bool]:
    """``(why the turn fails the filter or None, whether it passes the filter)``.

    A skip for nothing to check (:data:`NOT_CHECKED`) passes; any other skip or an error
    neither fails nor passes (:func:`_unmeasured` lists it); no result at all fails.
    """
    name = policy.filter.metric
    result = row.results.get(name)
    if result is None:
        return f"{name} not measured", False
    if result.status == "skipped" and result.error_type in NOT_CHECKED:
        return None, True
    if result.status != "ok" or result.score is None:
        return None, False
    if result.score < policy.filter.threshold:
        return f"{name} {result.score:.3g} < {policy.filter.threshold:g} (filter)", False
    return None, True


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
    not_measured: dict[str, list[tuple[str, str]]] = {q: [] for q in policy.thresholds}
    filter_not_measured: list[tuple[str, str]] = []
    filter_failures = filter_measured = 0
    trend_sum, trend_turns = 0.0, 0
    for row in rows:
        subject = row.turn.subject
        reasons: list[str] = []
        filtered, passes_filter = _filter(row, policy)
        if filtered is not None:
            reasons.append(filtered)
            filter_failures += 1
        missing_filter = _unmeasured(row, policy.filter.metric)
        if missing_filter is None:
            filter_measured += 1
        else:
            filter_not_measured.append((subject, missing_filter))
        # a turn without any filter result already fails it, saying so: not listed twice
        no_filter_row = policy.filter.metric not in row.results
        names = dict.fromkeys(
            [*([] if no_filter_row else [policy.filter.metric]), *policy.thresholds]
        )
        unmeasured = [u for u in (_unmeasured(row, n) for n in names) if u is not None]
        for quality, declared in policy.thresholds.items():
            score = row.score(quality)
            if score is None:
                not_measured[quality].append((subject, _unmeasured(row, quality) or ""))
                continue
            measured[quality] += 1
            if score >= declared.threshold and passes_filter:
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
                subject,
                passed=not reasons and not unmeasured,
                reasons=reasons,
                unmeasured=unmeasured,
            )
        )
    qualities = [
        QualityOutcome(q, d, passing[q], measured[q], not_measured[q])
        for q, d in policy.thresholds.items()
    ]
    return PolicyOutcome(
        policy=policy,
        turns=verdicts,
        qualities=qualities,
        filter_failures=filter_failures,
        trend=trend_sum / trend_turns if trend_turns else None,
        trend_turns=trend_turns,
        filter_measured=filter_measured,
        filter_not_measured=filter_not_measured,
    )
