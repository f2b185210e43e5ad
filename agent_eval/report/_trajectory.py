"""A conversation's trajectory as a timeline: turns, LLM calls, tool runs, agents and handoffs.

:func:`trajectory` lays out one :class:`~agent_eval._trace.AgentTrace` as the rows the HTML
report draws. With span times (:attr:`AgentTrace.spans`, read at ingest) every step has its
start, duration, depth in the span tree and a bar on its turn's time axis; without them (chat
logs, datasets) the steps come from the messages, in order, without times.

- **Turns** start at each user message: an LLM call belongs to the turn of the last user
  message its input held when it started (the first span each message was read from); any
  other span to the turn of the first LLM call beneath it, else of the last one before it. Each
  turn has its own time axis (a conversation's turns are often minutes apart), and its header
  says when it started after the first.
- **Errors**: a span's recorded errors (:attr:`AgentTrace.errors`), and tool results the
  source flagged as errors (:attr:`ToolMessage.is_error`).
- **Handoffs**: an LLM call whose agent differs from the previous LLM call's (the agent that
  answers changed; an agent span wrapping another is no handoff).
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterable
from dataclasses import dataclass, field

from agent_eval._trace import AgentTrace, AssistantMessage, SpanTiming, ToolMessage, UserMessage

__all__ = [
    "AXIS",
    "Step",
    "Trajectory",
    "failed_calls",
    "first_user_text",
    "tool_call_count",
    "trajectory",
]

AXIS = 100
"""Width of a turn's time axis in the bars' units (percent of the bar column)."""
_LABEL = 80
"""Characters of a user message a turn's header shows."""


@dataclass(frozen=True, slots=True)
class Step:
    """One row of a trajectory.

    Attributes:
        kind: ``turn`` (a user message starts a turn), ``llm``, ``tool``, ``agent``,
            ``retriever``, ``chain`` or ``other``.
        label: What the row shows: the model, tool, agent or span name; a turn's user message.
        turn: The turn it belongs to, from 1 (0: before any user message).
        depth: Ancestors among the trajectory's spans (indentation).
        agent: The agent of the step, when known.
        start_ms: Milliseconds after the conversation's first span started; ``None`` without
            times.
        duration_ms: The span's duration in milliseconds; ``None`` without times.
        error: ``type: message`` of the step's error, when it failed.
        handoff_from: For an LLM call (or a reply), the agent that answered before it when it
            differs (a handoff).
        tokens: ``(input, output)`` tokens of an LLM call, when recorded.
        x / width: The bar on the turn's axis, in :data:`AXIS` units (``width`` 0: no bar).

    """

    kind: str
    label: str
    turn: int = 0
    depth: int = 0
    agent: str | None = None
    start_ms: float | None = None
    duration_ms: float | None = None
    error: str | None = None
    handoff_from: str | None = None
    tokens: tuple[int, int] | None = None
    x: int = 0
    width: int = 0


@dataclass(frozen=True, slots=True)
class Trajectory:
    """A conversation's steps and their counts.

    Attributes:
        steps: The rows, turn by turn, in start order.
        timed: Whether the steps have times (the conversation's spans were read).
        duration_ms: From the first span's start to the last span's end, when timed.
        turns: User messages.
        llm_calls / tool_calls / tool_errors: LLM calls, tool calls (requested by the model),
            failed tool calls.
        agents: Agent names in order of first appearance.
        handoffs: LLM calls whose agent differs from the previous call's.

    """

    steps: list[Step]
    timed: bool
    duration_ms: float | None = None
    turns: int = 0
    llm_calls: int = 0
    tool_calls: int = 0
    tool_errors: int = 0
    agents: list[str] = field(default_factory=list)
    handoffs: int = 0


def first_user_text(trace: AgentTrace) -> str:
    """The first user message with text, on one line (``""`` when there is none)."""
    for m in trace.messages:
        if isinstance(m, UserMessage) and m.content.strip():
            return " ".join(m.content.split())
    return ""


def _short(text: str, limit: int = _LABEL) -> str:
    text = " ".join(text.split())
    return text if len(text) <= limit else text[: limit - 1].rstrip() + "…"


def _span_errors(trace: AgentTrace) -> dict[str, str]:
    """``{span id: "type: message"}`` of the spans that recorded an error."""
    out: dict[str, str] = {}
    for e in trace.errors:
        out.setdefault(e.span_id, f"{e.error_type or 'error'}: {e.message}".strip(": "))
    return out


def _flagged_results(trace: AgentTrace) -> dict[str, str]:
    """``{tool call id or span id: first line}`` of tool results flagged as errors."""
    out: dict[str, str] = {}
    for m in trace.messages:
        if isinstance(m, ToolMessage) and m.is_error:
            text = _short(m.content or "flagged as an error", 200)
            for key in (m.tool_call_id, *m.span_ids[:1]):
                if key:
                    out.setdefault(key, text)
    return out


def failed_calls(trace: AgentTrace) -> dict[str, tuple[str, str]]:
    """Failed tool calls: ``{call id or span id: (tool name, error type)}``, each once.

    A tool span's recorded error (its ``exception.type`` / ``error.type``, else ``error``) and
    a tool result flagged as an error (``flagged result``) of the same call count once.
    """
    failed: dict[str, tuple[str, str]] = {}
    for e in trace.errors:
        if e.tool_name or e.tool_call_id:
            key = e.tool_call_id or e.span_id
            failed.setdefault(key, (e.tool_name or "(unknown tool)", e.error_type or "error"))
    names = {c.id: c.name for m in trace.messages if isinstance(m, AssistantMessage)
             for c in m.tool_calls or () if c.id}  # fmt: skip
    for m in trace.messages:
        if isinstance(m, ToolMessage) and m.is_error:
            key = m.tool_call_id or (m.span_ids[0] if m.span_ids else f"#{id(m)}")
            name = m.tool_name or names.get(m.tool_call_id or "", "(unknown tool)")
            failed.setdefault(key, (name, "flagged result"))
    return failed


def tool_call_count(trace: AgentTrace) -> int:
    """Tool calls the model requested (every assistant message's ``tool_calls``)."""
    return sum(len(m.tool_calls or ()) for m in trace.messages if isinstance(m, AssistantMessage))


def trajectory(trace: AgentTrace) -> Trajectory:
    """The conversation's trajectory (see the module docstring)."""
    timed = [s for s in trace.spans if s.start_ns]
    steps = _timed_steps(trace, timed) if timed else _message_steps(trace)
    agents = list(dict.fromkeys(s.agent for s in steps if s.agent))
    start = min((s.start_ns for s in timed), default=0)
    end = max((s.end_ns for s in timed), default=0)
    return Trajectory(
        steps=steps,
        timed=bool(timed),
        duration_ms=(end - start) / 1e6 if timed and end >= start else None,
        turns=sum(isinstance(m, UserMessage) for m in trace.messages),
        llm_calls=sum(s.kind == "llm" for s in steps),
        tool_calls=tool_call_count(trace),
        tool_errors=len(failed_calls(trace)),
        agents=agents,
        handoffs=sum(s.handoff_from is not None for s in steps),
    )


def _message_steps(trace: AgentTrace) -> list[Step]:
    """Steps from the messages alone (no span times): turns, replies, tool calls."""
    flagged = _flagged_results(trace)
    steps: list[Step] = []
    turn, agent = 0, None
    for m in trace.messages:
        if isinstance(m, UserMessage):
            turn += 1
            steps.append(Step(kind="turn", label=_short(m.content), turn=turn))
        elif isinstance(m, AssistantMessage):
            handoff = agent if m.agent_name and agent and m.agent_name != agent else None
            agent = m.agent_name or agent
            steps.append(Step(kind="llm", label=m.model or "reply", turn=turn,
                              agent=m.agent_name, handoff_from=handoff))  # fmt: skip
            steps += [
                Step(
                    kind="tool",
                    label=c.name,
                    turn=turn,
                    depth=1,
                    agent=m.agent_name,
                    error=flagged.get(c.id or ""),
                )
                for c in m.tool_calls or ()
            ]
    return steps


def _turn_starts(trace: AgentTrace, spans: dict[str, SpanTiming]) -> list[int]:
    """Start (Unix ns) of the span each user message was first read from, in order."""
    starts = []
    for m in trace.messages:
        if isinstance(m, UserMessage) and m.span_ids and m.span_ids[0] in spans:
            starts.append(spans[m.span_ids[0]].start_ns)
    return sorted(starts)


def _turns(trace: AgentTrace, timed: list[SpanTiming]) -> dict[str, int]:
    """``{span id: turn}`` (see the module docstring)."""
    by_id = {s.span_id: s for s in timed}
    starts = _turn_starts(trace, by_id)
    turns = {
        s.span_id: (bisect_right(starts, s.start_ns) if starts else 1)
        for s in timed
        if s.kind == "llm"
    }
    ordered = sorted(timed, key=lambda s: s.start_ns)
    llm_order = [s for s in ordered if s.kind == "llm"]
    for s in ordered:
        if s.span_id in turns:
            continue
        below = next((c for c in llm_order if _within(c, s)), None)
        before = [c for c in llm_order if c.start_ns <= s.start_ns]
        chosen = below or (before[-1] if before else None)
        turns[s.span_id] = turns[chosen.span_id] if chosen is not None else (1 if starts else 0)
    return turns


def _ancestors(span: SpanTiming, by_id: dict[str, SpanTiming]) -> Iterable[SpanTiming]:
    seen = {span.span_id}
    parent = by_id.get(span.parent_span_id or "")
    while parent is not None and parent.span_id not in seen:
        yield parent
        seen.add(parent.span_id)
        parent = by_id.get(parent.parent_span_id or "")


def _within(child: SpanTiming, outer: SpanTiming) -> bool:
    """``child`` started while ``outer`` ran, in the same trace.

    That is a span beneath it, or one whose ancestors in between were not kept.
    """
    return child.trace_id == outer.trace_id and outer.start_ns <= child.start_ns <= max(
        outer.end_ns, outer.start_ns
    )


def _label(span: SpanTiming) -> str:
    if span.kind == "llm":
        return span.model or span.name or "LLM call"
    if span.kind == "tool":
        return span.tool_name or span.name or "tool"
    if span.kind == "agent":
        return span.agent_name or span.name or "agent"
    return span.name or span.kind


def _timed_steps(trace: AgentTrace, timed: list[SpanTiming]) -> list[Step]:
    """Steps from the spans, with turn headers, each turn on its own time axis."""
    by_id = {s.span_id: s for s in timed}
    turns = _turns(trace, timed)
    errors = {**_flagged_results(trace), **_span_errors(trace)}
    t0 = min(s.start_ns for s in timed)
    users = [m for m in trace.messages if isinstance(m, UserMessage)]
    ordered = sorted(
        timed, key=lambda s: (turns[s.span_id], s.start_ns, len(list(_ancestors(s, by_id))))
    )
    steps: list[Step] = []
    previous_agent: str | None = None
    for turn in dict.fromkeys(turns[s.span_id] for s in ordered):
        group = [s for s in ordered if turns[s.span_id] == turn]
        lo, hi = min(s.start_ns for s in group), max(max(s.end_ns, s.start_ns) for s in group)
        text = (
            users[turn - 1].content if 0 < turn <= len(users) else "(before the first user message)"
        )
        steps.append(Step(kind="turn", label=_short(text), turn=turn, start_ms=(lo - t0) / 1e6,
                          duration_ms=(hi - lo) / 1e6, width=AXIS))  # fmt: skip
        for s in group:
            handoff = None
            if s.kind == "llm" and s.agent_name:
                if previous_agent and s.agent_name != previous_agent:
                    handoff = previous_agent
                previous_agent = s.agent_name
            steps.append(_step(s, turn, by_id, (lo, hi, t0), errors, handoff))
    return steps


def _step(  # noqa: PLR0917  (private: the turn's context, computed once per turn)
    s: SpanTiming,
    turn: int,
    by_id: dict[str, SpanTiming],
    axis: tuple[int, int, int],
    errors: dict[str, str],
    handoff: str | None,
) -> Step:
    lo, hi, t0 = axis
    span = max(hi - lo, 1)
    end = max(s.end_ns, s.start_ns)
    x = round((s.start_ns - lo) * AXIS / span)
    tokens = None
    if s.input_tokens is not None or s.output_tokens is not None:
        tokens = (s.input_tokens or 0, s.output_tokens or 0)
    return Step(
        kind=s.kind,
        label=_label(s),
        turn=turn,
        depth=len(list(_ancestors(s, by_id))),
        agent=s.agent_name,
        start_ms=(s.start_ns - t0) / 1e6,
        duration_ms=s.duration_ms,
        error=errors.get(s.span_id) or errors.get(s.tool_call_id or "\0"),
        handoff_from=handoff,
        tokens=tokens,
        x=min(x, AXIS - 1),
        width=max(1, min(AXIS - min(x, AXIS - 1), round((end - s.start_ns) * AXIS / span))),
    )
