"""The report's views of the agent across a run: where tools fail, verdicts against shape, names.

Computed from the run's stored conversations (:class:`~agent_eval._trace.AgentTrace`) and its
result rows:

- :func:`tool_failures`: per tool, the calls the model requested, the calls that failed (a
  tool span's recorded error, or a result flagged as an error; one call counts once) and their
  error types; and every span error of the run by error type (tool runs and other spans).
- :func:`shape_views`: for each variant, the mean score of its ``ok`` rows (repeat 0) by the
  shape of their conversation: turns (user messages), tool calls, failed tool calls and the
  agent's own tokens, each in a few bins.
- :func:`display_name`: a readable name for a conversation whose id is a bare trace id.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Callable, Mapping, Sequence

from pydantic import BaseModel, ConfigDict

from agent_eval._natural_order import natural_key
from agent_eval._result import MetricResult
from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.report._trajectory import failed_calls, first_user_text, tool_call_count

__all__ = [
    "SHAPES",
    "ErrorTypeFailures",
    "ShapeBin",
    "ShapeView",
    "ToolFailures",
    "display_name",
    "shape_views",
    "start_time",
    "tool_failures",
]

_HEX_ID = re.compile(r"[0-9a-f]{32}")
NAME_LIMIT = 60
"""Characters of the first user message a readable name keeps."""


def display_name(conversation_id: str, trace: AgentTrace | None) -> str:
    """A readable name for a conversation whose id is a bare trace id, else the id.

    A conversation grouped by trace id (no ``gen_ai.conversation.id`` or ``session.id``) is
    named by its first user message, cut to :data:`NAME_LIMIT` characters, and the first 8
    characters of its id, which keep two conversations that open alike apart:
    ``What's the weather in Paris? · d95bafc8``.
    """
    if trace is None or not _id_less(conversation_id, trace):
        return conversation_id
    text = first_user_text(trace)
    if not text:
        return conversation_id
    if len(text) > NAME_LIMIT:
        text = text[: NAME_LIMIT - 1].rstrip() + "…"
    return f"{text} · {conversation_id[:8]}"


def _id_less(conversation_id: str, trace: AgentTrace) -> bool:
    return conversation_id in trace.trace_ids or bool(_HEX_ID.fullmatch(conversation_id))


def start_time(trace: AgentTrace | None) -> int | None:
    """When the conversation's first span started (Unix ns), ``None`` without span times."""
    if trace is None:
        return None
    return min((s.start_ns for s in trace.spans if s.start_ns), default=None)


class ToolFailures(BaseModel):
    """One tool's calls and failures across the run.

    Attributes:
        tool: The tool name.
        calls: Calls the model requested.
        failures: Calls that failed.
        error_types: ``{error type: failed calls}``, most first.
        conversation_ids: The conversations with a failed call of the tool.

    """

    model_config = ConfigDict(frozen=True)

    tool: str
    calls: int
    failures: int
    error_types: dict[str, int]
    conversation_ids: list[str]

    @property
    def failure_rate(self) -> float | None:
        """``failures / calls``; ``None`` without calls."""
        return self.failures / self.calls if self.calls else None


class ErrorTypeFailures(BaseModel):
    """The run's span errors (and flagged tool results) of one error type.

    Attributes:
        error_type: ``exception.type`` / ``error.type``, ``error`` when none was recorded,
            ``flagged result`` for tool results the source flagged.
        count: Errors of that type.
        where: ``{tool or span name: count}``.
        conversation_ids: The conversations they occurred in.

    """

    model_config = ConfigDict(frozen=True)

    error_type: str
    count: int
    where: dict[str, int]
    conversation_ids: list[str]


def tool_failures(
    traces: Mapping[str, AgentTrace],
) -> tuple[list[ToolFailures], list[ErrorTypeFailures]]:
    """Failures per tool (tools with a call or a failure) and per error type, most first."""
    calls: Counter[str] = Counter()
    failed: dict[str, Counter[str]] = {}
    hit: dict[str, set[str]] = {}
    for cid, trace in traces.items():
        for m in trace.messages:
            if isinstance(m, AssistantMessage):
                calls.update(c.name for c in m.tool_calls or ())
        for tool, error_type in failed_calls(trace).values():
            failed.setdefault(tool, Counter())[error_type] += 1
            hit.setdefault(tool, set()).add(cid)
    tools = [
        ToolFailures(
            tool=tool,
            calls=calls.get(tool, 0),
            failures=sum(failed.get(tool, Counter()).values()),
            error_types=dict(failed.get(tool, Counter()).most_common()),
            conversation_ids=sorted(hit.get(tool, ()), key=natural_key),
        )
        for tool in {*calls, *failed}
    ]
    tools.sort(key=lambda t: (-t.failures, -(t.failure_rate or 0), natural_key(t.tool)))
    return tools, _error_types(traces)


def _error_types(traces: Mapping[str, AgentTrace]) -> list[ErrorTypeFailures]:
    where: dict[str, Counter[str]] = {}
    hit: dict[str, set[str]] = {}
    for cid, trace in traces.items():
        spans = {e.span_id for e in trace.errors}
        for e in trace.errors:
            kind = e.error_type or "error"
            where.setdefault(kind, Counter())[e.tool_name or e.span_name or "(unnamed span)"] += 1
            hit.setdefault(kind, set()).add(cid)
        for key, (tool, kind) in failed_calls(trace).items():
            if kind == "flagged result" and key not in spans:
                where.setdefault(kind, Counter())[tool] += 1
                hit.setdefault(kind, set()).add(cid)
    out = [
        ErrorTypeFailures(
            error_type=kind,
            count=sum(counts.values()),
            where=dict(counts.most_common()),
            conversation_ids=sorted(hit[kind], key=natural_key),
        )
        for kind, counts in where.items()
    ]
    return sorted(out, key=lambda e: (-e.count, e.error_type))


SHAPES: dict[str, Callable[[AgentTrace], int]] = {
    "turns": lambda t: sum(isinstance(m, UserMessage) for m in t.messages),
    "tool calls": tool_call_count,
    "failed tool calls": lambda t: len(failed_calls(t)),
    "agent tokens": lambda t: sum(u.input_tokens + u.output_tokens for u in t.usage),
}
"""The conversation shapes verdicts are set against: name -> measure of an AgentTrace."""


class ShapeBin(BaseModel):
    """Rows whose conversation's measure falls in ``[low, high]``.

    Attributes:
        low / high: The bin's bounds (inclusive).
        n: ``ok`` rows in it.
        mean_score: Their mean score.
        failing: Rows with score below 1 (verdict ``0``, or a fractional score).

    """

    model_config = ConfigDict(frozen=True)

    low: int
    high: int
    n: int
    mean_score: float
    failing: int

    @property
    def label(self) -> str:
        """``3`` or ``3–5``."""
        return str(self.low) if self.low == self.high else f"{self.low}–{self.high}"


class ShapeView(BaseModel):
    """One variant's scores against each conversation shape (:data:`SHAPES`).

    Attributes:
        variant: The variant's name.
        n: ``ok`` rows (repeat 0) of a stored conversation.
        shapes: ``{shape: bins}``, bins in increasing order; a shape all rows share one
            value of has one bin.

    """

    model_config = ConfigDict(frozen=True)

    variant: str
    n: int
    shapes: dict[str, list[ShapeBin]]


MAX_BINS = 5
"""Bins per shape: one per value when it has at most this many values, else quantile bins."""


def _bounds(ranked: Sequence[int]) -> list[tuple[int, int]]:
    """Bins of sorted values: one per value when few, else split at the quintiles."""
    values = sorted(set(ranked))
    if len(values) <= MAX_BINS:
        return [(v, v) for v in values]
    cuts = (ranked[len(ranked) * i // MAX_BINS] for i in range(1, MAX_BINS))
    lows = sorted({values[0], *cuts})
    highs = [following - 1 for following in lows[1:]] + [values[-1]]
    return [
        (lo, max(v for v in values if lo <= v <= hi)) for lo, hi in zip(lows, highs, strict=True)
    ]


def _bins(pairs: Sequence[tuple[int, float]]) -> list[ShapeBin]:
    out = []
    for lo, hi in _bounds(sorted(v for v, _ in pairs)):
        scores = [s for v, s in pairs if lo <= v <= hi]
        out.append(
            ShapeBin(
                low=lo,
                high=hi,
                n=len(scores),
                mean_score=sum(scores) / len(scores),
                failing=sum(s < 1 for s in scores),
            )
        )
    return out


def shape_views(
    rows: Sequence[tuple[str, MetricResult]], traces: Mapping[str, AgentTrace]
) -> list[ShapeView]:
    """Each variant's ``ok`` rows of repeat 0 binned by their conversation's shapes.

    Args:
        rows: ``(variant, row)`` pairs; rows of conversations not stored are left out.
        traces: The run's conversations.

    """
    by_variant: dict[str, list[tuple[AgentTrace, float]]] = {}
    for variant, r in rows:
        trace = traces.get(r.conversation_id)
        if r.repeat == 0 and r.status == "ok" and r.score is not None and trace is not None:
            by_variant.setdefault(variant, []).append((trace, r.score))
    views = []
    for variant, scored in by_variant.items():
        measured = {id(t): {name: f(t) for name, f in SHAPES.items()} for t, _ in scored}
        shapes = {
            name: _bins([(measured[id(t)][name], score) for t, score in scored]) for name in SHAPES
        }
        views.append(ShapeView(variant=variant, n=len(scored), shapes=shapes))
    return views
