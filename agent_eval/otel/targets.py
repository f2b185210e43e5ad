"""The evaluated span of a result: where its ``gen_ai.evaluation.result`` event is parented.

The GenAI conventions ask for the evaluation event to be parented to the GenAI operation span
that was evaluated. For a conversation (goal accuracy) that is its **last LLM span**: the span
whose output was the conversation's last assistant message. An
:class:`~agent_eval.trace.AgentTrace` keeps, for each message, the ids of the spans it was read
from, first sighting first, so the producing span of an assistant message is the first of its
``span_ids``.

A conversation assembled from several traces records no span-to-trace map; its evaluated span
is taken to lie in its last trace (``trace_ids[-1]``), which holds for agents whose turns are
traces in time order. A conversation that never was spans (chat logs) has no target; its event
is emitted without a parent span.

``score`` and ``serve`` record the targets of a run in ``OUT/span-targets.jsonl``
(``{"conversation_id", "trace_id", "span_id"}`` a line; the last line per conversation wins),
so that ``agent-eval export phoenix RUN`` can annotate the evaluated spans later.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import orjson

from agent_eval.trace import AgentTrace, AssistantMessage

__all__ = [
    "TARGETS_NAME",
    "SpanTarget",
    "conversation_target",
    "read_targets",
    "targets_by_conversation",
    "write_targets",
]

TARGETS_NAME = "span-targets.jsonl"
"""The file in a run directory that maps conversation ids to their evaluated spans."""


@dataclass(frozen=True, slots=True)
class SpanTarget:
    """The span an evaluation event is parented to.

    Attributes:
        trace_id: 32 lowercase hex characters.
        span_id: 16 lowercase hex characters.

    """

    trace_id: str
    span_id: str


def conversation_target(trace: AgentTrace) -> SpanTarget | None:
    """The last LLM span of ``trace`` (see the module docstring), or ``None`` without spans."""
    if not trace.trace_ids:
        return None
    for message in reversed(trace.messages):
        if isinstance(message, AssistantMessage) and message.span_ids:
            return SpanTarget(trace_id=trace.trace_ids[-1], span_id=message.span_ids[0])
    return None


def targets_by_conversation(traces: Iterable[AgentTrace]) -> dict[str, SpanTarget]:
    """``{conversation_id: target}`` for every conversation that has one."""
    found: dict[str, SpanTarget] = {}
    for trace in traces:
        target = conversation_target(trace)
        if target is not None:
            found[trace.conversation_id] = target
    return found


def write_targets(directory: str | Path, targets: Mapping[str, SpanTarget]) -> Path:
    """Append ``targets`` to ``DIR/span-targets.jsonl``; returns the path.

    Raises:
        OSError: the file cannot be written.

    """
    path = Path(directory) / TARGETS_NAME
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("ab") as handle:
        for conversation_id, target in targets.items():
            line = {
                "conversation_id": conversation_id,
                "trace_id": target.trace_id,
                "span_id": target.span_id,
            }
            handle.write(orjson.dumps(line) + b"\n")
    return path


def read_targets(directory: str | Path) -> dict[str, SpanTarget]:
    """``{conversation_id: target}`` from ``DIR/span-targets.jsonl`` (empty when absent).

    Lines that do not parse (a run killed mid-line) are left out.
    """
    path = Path(directory) / TARGETS_NAME
    if not path.is_file():
        return {}
    found: dict[str, SpanTarget] = {}
    for line in path.read_bytes().splitlines():
        try:
            data = orjson.loads(line)
            found[str(data["conversation_id"])] = SpanTarget(
                trace_id=str(data["trace_id"]), span_id=str(data["span_id"])
            )
        except (orjson.JSONDecodeError, KeyError, TypeError):
            continue
    return found
