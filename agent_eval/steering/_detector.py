"""The judge-free steering detector: a pure function from an AgentTrace to its flags.

Every message's content and tool-call arguments, and every retrieved document, is read as a
judge would read it (:mod:`~agent_eval.steering._normalize`) and matched against the four
classes (:data:`~agent_eval.steering._flag.SteeringKind`): turn syntax
(:mod:`~agent_eval.steering._patterns`, on the visible text), an addressed evaluator and a
verdict request (on the de-obfuscated text), hidden instructions
(:mod:`~agent_eval.steering._hidden`, on the raw text). A location (message or document) gets at
most one flag per class: the first match, as its excerpt.

:func:`unit_flags` cuts a conversation's flags down to one unit's messages: all of them for the
conversation unit, the messages of turn K (its user message up to the next one) and the
retrievals attached inside it for ``turn:K``.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

import orjson

from agent_eval._trace import AgentTrace, AssistantMessage, Message, UserMessage
from agent_eval.steering._flag import EXCERPT_CHARS, SteeringFlag, SteeringKind
from agent_eval.steering._hidden import find_hidden
from agent_eval.steering._normalize import deobfuscated, visible
from agent_eval.steering._patterns import find, own_label_removed

__all__ = ["detect", "detect_text", "unit_flags"]

_SPACE = re.compile(r"\s+")
_TURN = re.compile(r"turn:(\d+)")


def detect_text(text: str, role: str = "") -> list[tuple[SteeringKind, str]]:
    """``(kind, excerpt)`` of each class found in ``text``, in :data:`STEERING_KINDS` order.

    At most one per class. The excerpt is the matched text, trimmed (:func:`excerpt`).
    ``role`` is the speaker of ``text`` (``assistant``...): a label naming that speaker at its
    very start is not a forged turn.
    """
    if not text:
        return []
    found: list[tuple[SteeringKind, str]] = []
    seen = visible(text)
    turn = find("turn_syntax", own_label_removed(seen, role))
    if turn is not None:
        found.append(("turn_syntax", excerpt(turn)))
    plain = deobfuscated(seen)
    for kind in ("addresses_evaluator", "asks_verdict"):
        match = find(kind, plain)
        if match is not None:
            found.append((kind, excerpt(match)))
    hidden = find_hidden(text)
    if hidden is not None:
        found.append(("hidden_instruction", excerpt(hidden)))
    return found


def excerpt(text: str) -> str:
    """``text`` with whitespace collapsed, control characters shown, cut to EXCERPT_CHARS."""
    shown = "".join(c if c.isprintable() or c.isspace() else f"<U+{ord(c):04X}>" for c in text)
    flat = _SPACE.sub(" ", shown).strip()
    return flat if len(flat) <= EXCERPT_CHARS else flat[: EXCERPT_CHARS - 1] + "…"


def _message_text(message: Message) -> str:
    """The content and the tool-call arguments of ``message``, as one text."""
    parts = [message.content]
    if isinstance(message, AssistantMessage) and message.tool_calls:
        for call in message.tool_calls:
            if call.raw_arguments is not None:
                parts.append(call.raw_arguments)
            elif call.arguments is not None:
                parts.append(orjson.dumps(call.arguments).decode())
    return "\n".join(part for part in parts if part)


def _message_flags(index: int, message: Message) -> Iterator[SteeringFlag]:
    span_id = message.span_ids[0] if message.span_ids else None
    for kind, text in detect_text(_message_text(message), message.role):
        yield SteeringFlag(
            kind=kind, message_index=index, role=message.role, span_id=span_id, excerpt=text
        )


def _document_flags(trace: AgentTrace) -> Iterator[SteeringFlag]:
    for r, retrieval in enumerate(trace.retrievals):
        for d, document in enumerate(retrieval.documents):
            for kind, text in detect_text(document.content):
                yield SteeringFlag(
                    kind=kind, role="retrieval", span_id=retrieval.span_id,
                    document=f"{r}.{d}", excerpt=text,
                )  # fmt: skip


def detect(trace: AgentTrace) -> tuple[SteeringFlag, ...]:
    """Every steering flag of ``trace``: its messages in order, then its retrieved documents.

    Pure: the same trace always gives the same flags. ``()`` when nothing was found.
    """
    flags = [flag for i, m in enumerate(trace.messages) for flag in _message_flags(i, m)]
    flags.extend(_document_flags(trace))
    return tuple(flags)


def _turn_bounds(trace: AgentTrace, turn: int) -> tuple[int, int] | None:
    """``[start, end)`` message indices of 1-based user turn ``turn``; ``None`` if none."""
    starts = [i for i, m in enumerate(trace.messages) if isinstance(m, UserMessage)]
    if not 1 <= turn <= len(starts):
        return None
    end = starts[turn] if turn < len(starts) else len(trace.messages)
    return starts[turn - 1], end


def unit_flags(
    trace: AgentTrace, unit_id: str, flags: Sequence[SteeringFlag] | None = None
) -> tuple[SteeringFlag, ...]:
    """The flags (``detect(trace)`` unless given) that fall inside unit ``unit_id``.

    ``conversation`` (and any unit id this module does not know) keeps them all; ``turn:K``
    keeps the flags of the turn's messages and of the retrievals attached inside the turn
    (``start < after_message <= end``, as :func:`agent_eval.metrics._units.answer_units` does).
    """
    found = detect(trace) if flags is None else tuple(flags)
    turn = _TURN.fullmatch(unit_id)
    if not found or turn is None:
        return found
    bounds = _turn_bounds(trace, int(turn.group(1)))
    if bounds is None:
        return ()
    start, end = bounds
    return tuple(flag for flag in found if _inside(trace, flag, start, end))


def _inside(trace: AgentTrace, flag: SteeringFlag, start: int, end: int) -> bool:
    if flag.message_index is not None:
        return start <= flag.message_index < end
    assert flag.document is not None  # a flag is either a message's or a document's
    after = trace.retrievals[int(flag.document.split(".")[0])].after_message
    return start < after <= end
