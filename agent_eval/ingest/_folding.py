"""Fold the calls of a bare instrumented client into the conversation they belong to.

An OpenAI client instrumented on its own (no agent span above it, no conversation id) records
every LLM call as a trace of its own, so grouping by trace makes one "conversation" per call.
When a later call's input replays an earlier call's whole transcript, the earlier one is only a
prefix of the later: scoring both would score the same conversation several times, cut short.
:class:`PrefixFolder` holds such single-trace, id-less conversations until the input ends and
folds every one whose messages are a prefix of a later one's into that later one (its trace ids,
usage, errors, retrievals and notes kept, with a note), so each conversation is emitted once,
whole. The messages the earlier ones share keep what the earlier traces saw of them: their span
ids first (the LLM span that produced a message comes first), and what the later replay lacks
(an assistant message's agent, response model and reasoning, a tool result's name). Only
conversations read from the same file are folded: two files recording the same calls (two
instrumentations, or two exports) stay two conversations.

Each earlier trace is folded into one conversation only. Two users of one client whose first
turns are identical (same question, same answer) record identical traces; the later calls of
both replay them. A trace therefore continues only a call whose transcript it strictly extends
(an identical trace is another call, not a continuation), and when several held conversations
are equally good candidates, they are matched to the calls continuing them one to one in time
order, with a note: each user keeps as many calls as they made, never the other's.

A bare call whose reply was not recorded (a user message and no assistant one: Traceloop's
openai instrumentation in events mode with ``stream=True`` writes the reply's ``gen_ai.choice``
without span context) is not a conversation on its own, but it is the first call of the one
that continues it: it is held too, never extends another, and when a later call replays its
transcript it is folded in like any other (its usage, cost and trace id counted there; the
reply is the next message of the replay). Nobody continuing it, it is skipped
``no_message_content`` as before.

The rule is one function pair, used by offline ingest (:class:`PrefixFolder`) and by the live
receiver (``agent-eval serve``, which sees the calls one closed batch at a time):
:func:`continues` (does a call continue a conversation, by their transcripts) and
:func:`choose_continued` (which of several held conversations a call continues). Both take
:data:`~agent_eval.ingest._message_identity.MessageKey` tuples, or any keys that keep their
first element (the role) and compare equal exactly when the messages do (the receiver keeps
digests of them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from operator import attrgetter
from typing import TypeVar

from agent_eval._trace import AgentTrace, Message, ModelUsage
from agent_eval.ingest._conversation import final_reply_note_prefix
from agent_eval.ingest._message_identity import MessageKey, fill_from, message_key

__all__ = ["PrefixFolder", "choose_continued", "continues", "is_bare_call_trace"]

_AFTER_MESSAGE = attrgetter("after_message")
_K = TypeVar("_K")


def continues(later: Sequence[MessageKey], earlier: Sequence[MessageKey]) -> bool:
    """Whether a call (transcript ``later``) continues a conversation (latest call ``earlier``).

    It must strictly extend it: every message of ``earlier`` replayed in place (a system
    message may change its text, :func:`_replays`) and at least one more. An identical
    transcript is another call (a second run of the same agent, another user asking the same
    first question, or a retry), never a continuation.
    """
    return len(earlier) < len(later) and _replays(tuple(later), tuple(earlier))


def choose_continued(
    keys: Sequence[MessageKey], held: Sequence[tuple[_K, Sequence[MessageKey]]]
) -> tuple[_K | None, list[_K]]:
    """The held conversation a call (transcript ``keys``) continues, and the tied ones.

    Args:
        keys: The call's transcript keys.
        held: ``(name, latest call's transcript keys)`` of the conversations it may continue,
            in order of their latest call's arrival (oldest first).

    Returns:
        ``(name or None, tied names)``: among those it :func:`continues`, the longest (the
        call just before it); of equally long ones, those whose system messages it replays
        unchanged, and of those the first in ``held`` (earlier calls matched one to one in
        time order). ``tied`` lists every equally good candidate when there are several
        (identical transcripts so far: noted by the caller), else is empty.

    """
    candidates = [(name, tuple(prefix)) for name, prefix in held if continues(keys, prefix)]
    if not candidates:
        return None, []
    longest = max(len(prefix) for _, prefix in candidates)
    tied = [(name, prefix) for name, prefix in candidates if len(prefix) == longest]
    exact = [(name, prefix) for name, prefix in tied if tuple(keys[:longest]) == prefix]
    tied = exact or tied  # the system messages kept first
    return tied[0][0], [name for name, _ in tied] if len(tied) > 1 else []


def is_bare_call_trace(trace: AgentTrace) -> bool:
    """A conversation named after its only trace: it had no conversation id to group by."""
    return trace.trace_ids == (trace.conversation_id,)


@dataclass
class _Chain:
    """One conversation being folded: its latest call (``trace``) and the earlier ones."""

    trace: AgentTrace
    keys: tuple[MessageKey, ...]
    folded: list[AgentTrace] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    system_changed: dict[str, set[int]] = field(default_factory=dict)
    """Its traces continued by a call with another system message -> those messages' places."""
    ambiguous: list[str] = field(default_factory=list)
    """Its traces that had a twin in another conversation when a later call chose one."""
    unanswered: bool = False
    """Its only call recorded no reply (a conversation only once a later call continues it)."""

    def all_notes(self) -> list[str]:
        """Its notes, with the one-to-one matching of identical traces when there was any."""
        notes = [*self.notes, *_system_change_note(self.system_changed)]
        if not self.ambiguous:
            return notes
        return [
            *notes,
            f"trace(s) {', '.join(dict.fromkeys(self.ambiguous))} have transcripts identical to "
            "those of another conversation of this file and no conversation id tells them "
            "apart: the calls continuing them were matched one to one in time order, so each "
            "earlier trace is credited to one conversation only",
        ]

    def has_call(self, keys: tuple[MessageKey, ...]) -> bool:
        """Whether the chain already holds a call whose transcript is ``keys`` (system aside)."""
        return _same_call(keys, self.keys) or any(
            _same_call(keys, tuple(message_key(m) for m in one.messages)) for one in self.folded
        )


class PrefixFolder:
    """Collects bare-call conversations; :meth:`drain` returns them folded, in arrival order.

    Each earlier trace goes to one conversation only. A trace extends the held conversation
    whose latest call its transcript strictly extends (the longest such prefix: the call just
    before it); a trace whose transcript equals a held one's is the same call made again (a
    second user asking the same first question, or a retry) and starts a conversation of its
    own. When several held conversations have that same longest prefix (two users whose turns
    so far are identical), the one whose latest call arrived first is taken, so they are matched
    one to one in time order, with a note. At the end, a conversation nobody extended whose
    transcript one later conversation replays whole is folded into it, unless that one already
    holds an identical call (then which user made it is unknown: it is kept apart, noted).

    A replay may differ from the call it replays in its system messages only (:func:`_replays`):
    a chat engine that puts each turn's retrieved passages in the system prompt (LlamaIndex's
    ``CondensePlusContextChatEngine``, a RAG app over a bare client) sends a new one with every
    call, each call a trace of its own (under a framework root span) when no session id groups
    them. Such a call continues the earlier one when its input replays every other message
    (user, assistant, tool) whole and in place, noted with the traces whose system message
    differed; a continuation that replays the system messages too is preferred. The transcript
    shows the last call's system message, each earlier trace's retrievals stay at their own
    turn (:func:`_merged`) and the earlier system messages keep their own span ids
    (:func:`_with_system_span_ids`).
    """

    def __init__(self) -> None:
        self._held: list[_Chain] = []
        """Conversations being folded, in order of their latest call's arrival."""
        self.unanswered_left: list[AgentTrace] = []
        """After :meth:`drain`: the unanswered calls no later conversation continued."""

    def add(self, trace: AgentTrace, *, unanswered: bool = False) -> None:
        """Hold ``trace``; it extends the held conversation whose latest call it continues.

        An ``unanswered`` trace (a user message, no reply recorded: its spans not yet counted)
        never extends another; it becomes part of the conversation of a later call that
        continues it, or is left in :attr:`unanswered_left` by :meth:`drain`.
        """
        keys = tuple(message_key(m) for m in trace.messages)
        same_files = [c for c in self._held if c.trace.source.files == trace.source.files]
        chosen, tied = (
            (None, []) if unanswered else choose_continued(keys, [(c, c.keys) for c in same_files])
        )
        if chosen is None:
            self._held.append(_Chain(trace, keys, unanswered=unanswered))
            return
        chain = chosen
        _note_system_change(chain, chain.trace, chain.keys, keys)
        for one in tied:  # identical transcripts so far: noted on each of them
            one.ambiguous.append(one.trace.trace_ids[-1])
        self._held.remove(chain)
        chain.folded.append(chain.trace)
        chain.trace, chain.keys, chain.unanswered = trace, keys, False
        self._held.append(chain)

    def drain(self) -> list[tuple[AgentTrace, list[AgentTrace]]]:
        """The held conversations, in arrival order, and what was folded into each; empties it.

        Each conversation comes merged with those folded into it; they are returned too, for
        the accounting. Unanswered calls nobody continued are not conversations: they are
        left in :attr:`unanswered_left`, in arrival order.
        """
        kept: list[_Chain] = []
        self.unanswered_left = []
        for n, chain in enumerate(self._held):
            later = [c for c in self._held[n + 1 :] if _extends(c.keys, c.trace, chain)]
            if len(later) == 1 and not later[0].has_call(chain.keys):
                _note_system_change(later[0], chain.trace, chain.keys, later[0].keys)
                later[0].system_changed = {**chain.system_changed, **later[0].system_changed}
                chain.system_changed = {}
                later[0].folded[:0] = [*chain.folded, chain.trace]
                later[0].notes[:0] = chain.all_notes()
                continue
            if later:
                chain.notes.append(
                    "its transcript is replayed whole by later conversation(s) "
                    f"{', '.join(c.trace.conversation_id for c in later)}, which already hold "
                    "an identical call of their own or are several: it is not folded into one "
                    "(another user's identical call, or a retry; no conversation id tells)"
                )
            if chain.unanswered:
                self.unanswered_left.append(chain.trace)
            else:
                kept.append(chain)
        self._held = []
        return [
            (
                _with_system_span_ids(_merged(c.trace, c.folded, c.all_notes()), c.trace, c.folded),
                c.folded,
            )
            for c in kept
        ]

    @property
    def folded_count(self) -> int:
        """How many held conversations were folded into a later one so far."""
        return sum(len(c.folded) for c in self._held)


def _extends(keys: tuple[MessageKey, ...], trace: AgentTrace, chain: _Chain) -> bool:
    """Whether ``trace`` (transcript ``keys``) strictly extends ``chain``'s latest call."""
    return chain.trace.source.files == trace.source.files and continues(keys, chain.keys)


def _is_system(key: MessageKey) -> bool:
    """Whether ``key`` is a system message's (:func:`message_key`: role first)."""
    return bool(key[0] == "system")


def _same_message(a: MessageKey, b: MessageKey) -> bool:
    """Whether ``b`` at ``a``'s place continues it: the same message, or both system messages."""
    return a == b or (_is_system(a) and _is_system(b))


def _replays(keys: tuple[MessageKey, ...], prefix: tuple[MessageKey, ...]) -> bool:
    """Whether ``keys`` starts with ``prefix``, each system message allowed to differ.

    Every other message (user, assistant, tool) must be replayed whole and in place; a system
    message must stay a system message, its text may change (a RAG chat engine's system prompt
    carries each turn's passages).
    """
    return len(prefix) <= len(keys) and all(map(_same_message, prefix, keys))


def _same_call(a: tuple[MessageKey, ...], b: tuple[MessageKey, ...]) -> bool:
    """Whether two calls' transcripts are the same, system messages aside."""
    return len(a) == len(b) and _replays(a, b)


def _note_system_change(
    chain: _Chain,
    earlier: AgentTrace,
    earlier_keys: tuple[MessageKey, ...],
    later_keys: tuple[MessageKey, ...],
) -> None:
    """Record on ``chain`` that ``earlier`` was continued with other system messages, if so."""
    changed = {i for i, (a, b) in enumerate(zip(earlier_keys, later_keys, strict=False)) if a != b}
    if changed:
        chain.system_changed[earlier.trace_ids[-1]] = changed


def _system_change_note(changed: dict[str, set[int]]) -> list[str]:
    """The note for traces continued with another system message, or nothing when none was."""
    if not changed:
        return []
    places = ", ".join(str(i + 1) for i in sorted(set().union(*changed.values())))
    return [
        f"trace(s) {', '.join(changed)} were continued by a call whose input replays their "
        f"messages whole except the system message (message {places}), which changed: no "
        "session or conversation id groups these calls, each a trace of its own (a chat engine "
        "whose system prompt carries each turn's retrieved passages, such as LlamaIndex's "
        "CondensePlusContextChatEngine), so they were folded by their replayed messages. The "
        "transcript shows the last call's system message; each turn keeps its own retrievals. "
        "Set a session id (openinference `using_session`, or `gen_ai.conversation.id`) to "
        "group the calls exactly"
    ]


def _merged_spans(trace: AgentTrace, traces: tuple[AgentTrace, ...]) -> dict[str, object]:
    """The ``spans`` update of a folded trace: every trace's timed spans, earlier traces first."""
    spans = {s.span_id: s for one in traces for s in one.spans}
    return {"spans": tuple(spans.values())} if len(spans) != len(trace.spans) else {}


def _merged(trace: AgentTrace, folded: list[AgentTrace], notes: list[str]) -> AgentTrace:
    """``trace`` with the traces folded into it (in arrival order) merged in.

    Nothing an earlier trace knew is lost: its trace ids, root spans, response ids, usage
    (summed per model), errors, retrievals (each at its own position: the earlier transcript
    is a prefix of this one), conventions, reference tool calls (the first span carrying them
    wins, as within one trace), labels and metadata (keys this trace lacks), notes, and what it
    saw of each shared message (:func:`_with_earlier_sightings`). A folded trace's
    ``final_reply_missing`` note is dropped: the reply it lacked is the next message of this
    transcript, read from the replay.
    """
    if not folded:
        return trace.model_copy(update={"notes": (*trace.notes, *notes)}) if notes else trace
    traces = (*folded, trace)
    usage: dict[str, ModelUsage] = {}
    for one in traces:
        for u in one.usage:
            old = usage.get(u.model, ModelUsage(model=u.model))
            usage[u.model] = ModelUsage(
                model=u.model,
                input_tokens=old.input_tokens + u.input_tokens,
                output_tokens=old.output_tokens + u.output_tokens,
                calls=old.calls + u.calls,
            )
    trace_ids = tuple(dict.fromkeys(t for one in traces for t in one.trace_ids))
    note = (
        f"{len(folded)} earlier trace(s) folded in: each had no conversation id and its calls "
        f"are replayed whole by this conversation's input ({', '.join(trace_ids[:-1])})"
    )
    own = (*trace.notes, note, *notes)
    earlier_notes = dict.fromkeys(n for one in folded for n in _kept_notes(one) if n not in own)
    update: dict[str, object] = {
        "messages": _with_earlier_sightings(trace.messages, folded),
        "trace_ids": trace_ids,
        "usage": tuple(usage.values()),
        "errors": tuple(e for one in traces for e in one.errors),
        "notes": (*own, *earlier_notes),
    }
    roots = {root.span_id: root for one in traces for root in one.root_spans}
    if len(roots) != len(trace.root_spans):
        update["root_spans"] = tuple(roots.values())
    update.update(_merged_spans(trace, traces))
    response_ids = {k: v for one in traces for k, v in one.response_ids.items()}
    if len(response_ids) != len(trace.response_ids):
        update["response_ids"] = response_ids
    retrievals = [r for one in traces for r in one.retrievals]
    if len(retrievals) != len(trace.retrievals):  # stable: arrival order at one position
        update["retrievals"] = tuple(sorted(retrievals, key=_AFTER_MESSAGE))
    conventions = tuple(sorted({c for one in traces for c in one.source.conventions}))
    if conventions != trace.source.conventions:
        update["source"] = trace.source.model_copy(update={"conventions": conventions})
    reference = next(
        (one.reference_tool_calls for one in traces if one.reference_tool_calls is not None), None
    )
    if reference != trace.reference_tool_calls:
        update["reference_tool_calls"] = reference
    for name in ("labels", "metadata"):
        merged = dict(getattr(trace, name))
        for one in folded:
            for key, value in getattr(one, name).items():
                merged.setdefault(key, value)
        if merged != getattr(trace, name):
            update[name] = merged
    return trace.model_copy(update=update)


def _kept_notes(folded: AgentTrace) -> list[str]:
    """A folded trace's notes, without the one saying its final reply is missing."""
    if folded.final_reply_missing is None:
        return list(folded.notes)
    cut_short = final_reply_note_prefix(folded.final_reply_missing, folded.trace_ids[-1])
    return [n for n in folded.notes if not n.startswith(cut_short)]


def _with_earlier_sightings(
    messages: tuple[Message, ...], folded: list[AgentTrace]
) -> tuple[Message, ...]:
    """``messages`` with the sightings of the folded traces (in arrival order) merged in.

    Each folded trace's messages are a prefix of ``messages`` (that is why it was folded), so
    its message ``i`` is ``messages[i]``: the span ids it was seen on come first, in the order
    the traces arrived, and what the later replay lacks is filled from the first earlier
    sighting that has it (:func:`fill_from`): an assistant message's agent, model, reasoning
    and tool-call list (a replay rarely carries the response model or the reasoning the call
    that produced it recorded), a tool result's name and error flag, text and opaque parts.
    """
    out: list[Message] = []
    for i, message in enumerate(messages):
        earlier = [one.messages[i] for one in folded if i < len(one.messages)]
        if not earlier:
            out.extend(messages[i:])
            break
        merged = message
        for seen in earlier:
            merged = fill_from(merged, seen)
        span_ids = tuple(dict.fromkeys(s for m in (*earlier, message) for s in m.span_ids))
        if span_ids != merged.span_ids:
            merged = merged.model_copy(update={"span_ids": span_ids})
        out.append(merged)
    return tuple(out)


def _with_system_span_ids(
    merged: AgentTrace, last: AgentTrace, folded: list[AgentTrace]
) -> AgentTrace:
    """``merged`` (``last`` with ``folded`` merged in) with each system message's own span ids.

    A folded trace's transcript is a prefix of ``last``'s, system messages aside (their text
    may change per turn; each turn's retrievals are kept by :func:`_merged`). A system message
    keeps only the span ids of the calls that sent that same text: an earlier call that sent
    another system message did not see this one.
    """
    update: dict[str, object] = {}
    messages = list(merged.messages)
    for i, message in enumerate(last.messages):
        if message.role != "system" or i >= len(messages):
            continue
        key = message_key(message)
        same = [one.messages[i] for one in folded if i < len(one.messages)]
        seen = [s for m in same if message_key(m) == key for s in m.span_ids]
        span_ids = tuple(dict.fromkeys((*seen, *message.span_ids)))
        if span_ids != messages[i].span_ids:
            messages[i] = messages[i].model_copy(update={"span_ids": span_ids})
            update["messages"] = tuple(messages)
    return merged.model_copy(update=update) if update else merged
