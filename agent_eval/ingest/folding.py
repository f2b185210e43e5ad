"""Fold the calls of a bare instrumented client into the conversation they belong to.

An OpenAI client instrumented on its own (no agent span above it, no conversation id) records
every LLM call as a trace of its own, so grouping by trace makes one "conversation" per call.
When a later call's input replays an earlier call's whole transcript, the earlier one is only a
prefix of the later: scoring both would score the same conversation several times, cut short.
:class:`PrefixFolder` holds such single-trace, id-less conversations until the input ends and
folds every one whose messages are a prefix of a later one's into that later one (its trace ids,
usage and errors kept, with a note), so each conversation is emitted once, whole. The messages
the earlier ones share keep what the earlier traces saw of them: their span ids first (the LLM
span that produced a message comes first), and an assistant message its agent when the later
replay names none. Only
conversations read from the same file are folded: two files recording the same calls (two
instrumentations, or two exports) stay two conversations.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_eval.ingest.message_identity import MessageKey, message_key
from agent_eval.trace import AgentTrace, AssistantMessage, Message, ModelUsage

__all__ = ["PrefixFolder", "is_bare_call_trace"]


def is_bare_call_trace(trace: AgentTrace) -> bool:
    """A conversation named after its only trace: it had no conversation id to group by."""
    return trace.trace_ids == (trace.conversation_id,)


@dataclass
class _Held:
    trace: AgentTrace
    keys: tuple[MessageKey, ...]
    folded: list[AgentTrace] = field(default_factory=list)


class PrefixFolder:
    """Collects bare-call conversations; :meth:`drain` returns them folded, in arrival order."""

    def __init__(self) -> None:
        self._held: list[_Held] = []

    def add(self, trace: AgentTrace) -> None:
        """Hold ``trace``; earlier held conversations that it extends are folded into it."""
        keys = tuple(message_key(m) for m in trace.messages)
        held = _Held(trace, keys)
        kept: list[_Held] = []
        for earlier in self._held:
            same_file = earlier.trace.source.files == trace.source.files
            if (
                same_file
                and len(earlier.keys) <= len(keys)
                and keys[: len(earlier.keys)] == earlier.keys
            ):
                held.folded += [*earlier.folded, earlier.trace]
            else:
                kept.append(earlier)
        self._held = [*kept, held]

    def drain(self) -> list[tuple[AgentTrace, list[AgentTrace]]]:
        """The held conversations, in arrival order, and what was folded into each; empties it.

        Each conversation comes merged with those folded into it; they are returned too, for
        the accounting.
        """
        out = [(_merged(h.trace, h.folded), h.folded) for h in self._held]
        self._held = []
        return out

    @property
    def folded_count(self) -> int:
        """How many held conversations were folded into a later one so far."""
        return sum(len(h.folded) for h in self._held)


def _merged(trace: AgentTrace, folded: list[AgentTrace]) -> AgentTrace:
    if not folded:
        return trace
    usage: dict[str, ModelUsage] = {}
    for one in (*folded, trace):
        for u in one.usage:
            old = usage.get(u.model, ModelUsage(model=u.model))
            usage[u.model] = ModelUsage(
                model=u.model,
                input_tokens=old.input_tokens + u.input_tokens,
                output_tokens=old.output_tokens + u.output_tokens,
                calls=old.calls + u.calls,
            )
    trace_ids = tuple(dict.fromkeys(t for one in (*folded, trace) for t in one.trace_ids))
    note = (
        f"{len(folded)} earlier trace(s) folded in: each had no conversation id and its calls "
        f"are replayed whole by this conversation's input ({', '.join(trace_ids[:-1])})"
    )
    return trace.model_copy(
        update={
            "messages": _with_earlier_sightings(trace.messages, folded),
            "trace_ids": trace_ids,
            "usage": tuple(usage.values()),
            "errors": tuple(e for one in (*folded, trace) for e in one.errors),
            "notes": (*trace.notes, note),
        }
    )


def _with_earlier_sightings(
    messages: tuple[Message, ...], folded: list[AgentTrace]
) -> tuple[Message, ...]:
    """``messages`` with the sightings of the folded traces (in arrival order) merged in.

    Each folded trace's messages are a prefix of ``messages`` (that is why it was folded), so
    its message ``i`` is ``messages[i]``: the span ids it was seen on come first, in the order
    the traces arrived, and an assistant message without an agent takes the first one named.
    """
    out: list[Message] = []
    for i, message in enumerate(messages):
        earlier = [one.messages[i] for one in folded if i < len(one.messages)]
        if not earlier:
            out.extend(messages[i:])
            break
        update: dict[str, object] = {}
        span_ids = tuple(dict.fromkeys(s for m in (*earlier, message) for s in m.span_ids))
        if span_ids != message.span_ids:
            update["span_ids"] = span_ids
        if isinstance(message, AssistantMessage) and message.agent_name is None:
            agent = next((m.agent_name for m in earlier
                          if isinstance(m, AssistantMessage) and m.agent_name), None)  # fmt: skip
            if agent is not None:
                update["agent_name"] = agent
        out.append(message.model_copy(update=update) if update else message)
    return tuple(out)
