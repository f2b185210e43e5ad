"""The transcript's shortcuts change nothing: the same calls give the same transcript without them.

:class:`~agent_eval.ingest._transcript.Transcript` looks slots up by key and by call id instead of
scanning, takes an in-order replay of the very objects a slot holds as a fast path, and replays
the start of a history that repeats the last call's run of sightings in one pass. The reference
here has all of that off: linear scans, no run, and every message copied before it is added (so
no identity test ever holds). Both are fed the same random conversations (replayed histories
that grow, edit earlier messages, drop some, branch, repeat span ids, interleave tool runs), and
must give equal messages (span ids included), notes and return values.
"""

from __future__ import annotations

from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from agent_eval._trace import (
    AssistantMessage,
    Message,
    SystemMessage,
    ToolCall,
    ToolMessage,
    UserMessage,
)
from agent_eval.ingest._extraction import ToolExecution
from agent_eval.ingest._message_identity import MessageKey
from agent_eval.ingest._transcript import Transcript


class _Reference(Transcript):
    """The transcript with its lookups done by scanning and no replayed run."""

    def _find(self, key: MessageKey, start: int) -> int | None:
        for i in range(start, len(self.slots)):
            if self.slots[i].key == key:
                return i
        return None

    def _find_call(self, tool: ToolExecution) -> tuple[int, int] | None:
        if tool.call_id is None:
            return super()._find_call(tool)
        for i, slot in enumerate(self.slots):
            message = slot.message
            if isinstance(message, AssistantMessage) and message.tool_calls:
                for j, call in enumerate(message.tool_calls):
                    if call.id == tool.call_id:
                        return i, j
        return None

    def _replay_run(self, history: tuple[Message, ...], span_id: str) -> int:
        self._run.cut(0)
        return 0


def _copy(message: Message) -> Message:
    return message.model_copy(deep=True)


# A small pool of messages, so that keys repeat (equal texts, shared call ids) and calls replay.
SYSTEM = SystemMessage(content="you are a travel agent")
OTHER_SYSTEM = SystemMessage(content="you are the refund sub-agent")
USERS = [UserMessage(content=t) for t in ("hi", "yes", "book it", "yes", "")]
CALL_A = AssistantMessage(tool_calls=(ToolCall(id="a", name="lookup", arguments={"q": 1}),))
CALL_B = AssistantMessage(tool_calls=(ToolCall(id="b", name="lookup", arguments={"q": 2}),))
CALL_NOID = AssistantMessage(tool_calls=(ToolCall(name="refund", arguments=None),))
CALL_C_ONLY = AssistantMessage(tool_calls=(ToolCall(id="c", name="lookup", arguments={}),))
CALL_PARALLEL = AssistantMessage(
    tool_calls=(ToolCall(id="d", name="lookup", arguments={"q": 4}), ToolCall(id="b", name="x"))
)
RESULTS = [
    ToolMessage(content="found", tool_call_id="a"),
    ToolMessage(content="found", tool_call_id="a", tool_name="lookup"),
    ToolMessage(content="none", tool_call_id="b"),
    ToolMessage(content="ok"),
    ToolMessage(content="", tool_call_id="c"),
]
REPLIES = [
    AssistantMessage(content="done"),
    AssistantMessage(content="done", model="gpt-4o"),
    AssistantMessage(content=""),
    AssistantMessage(content="which date?"),
]
POOL: list[Message] = [
    SYSTEM, OTHER_SYSTEM, *USERS, CALL_A, CALL_B, CALL_NOID, CALL_C_ONLY, *RESULTS, *REPLIES,
    CALL_PARALLEL,
]  # fmt: skip
TOOLS = [
    ToolExecution(name="lookup", call_id="a", arguments={"q": 1}, result="found"),
    ToolExecution(name="lookup", call_id="b", arguments=None, result='{"r": "none"}'),
    ToolExecution(name="refund", call_id=None, arguments={"amount": 3}, result="ok"),
    ToolExecution(name="lookup", call_id="c", arguments=None, result=None),
    ToolExecution(name="search", call_id=None, arguments=None, result="nothing"),
    ToolExecution(name="x", call_id="b", arguments={"y": 1}, result="x done"),
]

picks = st.integers(0, len(POOL) - 1)
step = st.one_of(
    # the next call: the last input (kept whole or edited), its output, and a new tail
    st.tuples(
        st.just("call"),
        st.sampled_from(["grow", "grow", "grow", "drop", "edit", "fresh"]),
        st.integers(0, 30),
        st.lists(picks, max_size=3),
        st.lists(picks, min_size=0, max_size=2),
        st.sampled_from([None, "support", "refunds", "unlabelled"]),
        st.booleans(),
    ),
    st.tuples(st.just("tool"), st.integers(0, len(TOOLS) - 1)),
)


def _feed(steps: list[tuple[Any, ...]], transcript: Transcript, *, copy: bool) -> list[Any]:
    """Add the steps' calls and tool runs; return what each returned and the final state."""
    history: list[Message] = [SYSTEM]
    shared: dict[tuple[int, ...], tuple[Message, ...]] = {}
    returned: list[Any] = []
    for n, item in enumerate(steps):
        if item[0] == "tool":
            transcript.add_tool_run(TOOLS[item[1]], f"tool{n}", "support")
            returned.append(None)
            continue
        _, how, at, tail, outputs, agent, same_span = item
        if how == "drop" and history:
            del history[at % len(history)]
        elif how == "edit" and history:
            history[at % len(history)] = POOL[at % len(POOL)]
        elif how == "fresh":
            history = [SYSTEM]
        history += [POOL[i] for i in tail]
        # the history cache shares the objects of a replayed prefix: same tuple contents
        inputs = shared.setdefault(tuple(id(m) for m in history), tuple(history))
        out = tuple(POOL[i] for i in outputs)
        if copy:
            inputs, out = tuple(map(_copy, inputs)), tuple(map(_copy, out))
        span_id = "span0" if same_span else f"span{n}"
        label = (None, None) if agent == "unlabelled" else (agent, "m")  # outputs kept as is
        returned.append(
            transcript.add_call(inputs, out, span_id, agent_name=label[0], model=label[1])
        )
        returned.append(transcript.inputs_end)
        history += list(out)
    return [returned, transcript.messages(), transcript.notes]


@settings(max_examples=500, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(st.lists(step, max_size=25))
def test_shortcuts_give_the_transcript_the_reference_gives(steps: list[tuple[Any, ...]]) -> None:
    assert _feed(steps, Transcript(), copy=False) == _feed(steps, _Reference(), copy=True)


def _turns(n: int) -> list[tuple[Any, ...]]:
    """``n`` turns of user, call, tool run, each call replaying the whole history."""
    steps: list[tuple[Any, ...]] = []
    for turn in range(n):
        steps.append(("call", "grow", 0, [2 + turn % 4], [6 + turn % 2], "support", False))
        steps.append(("tool", turn % 2))
    return steps


def test_a_long_replayed_conversation_is_the_same_and_replays_its_run() -> None:
    steps = _turns(40)
    fast = Transcript()
    assert _feed(steps, fast, copy=False) == _feed(steps, _Reference(), copy=True)
    messages = fast.messages()
    assert messages[0].span_ids == tuple(f"span{n}" for n in range(0, 80, 2))  # every call
    assert len(fast._run.messages) > 40  # the history start is replayed as a run


def test_a_slot_changed_after_the_run_was_recorded_cuts_the_run_there() -> None:
    # the call without id is in the run; the tool run then fills its arguments (a new key), so
    # the next replay of the argument-less call no longer matches that slot
    noid, yes, reply = POOL.index(CALL_NOID), POOL.index(USERS[1]), POOL.index(REPLIES[0])
    steps = [
        ("call", "grow", 0, [2], [noid], "unlabelled", False),
        ("call", "grow", 0, [yes], [reply], "unlabelled", False),
        ("tool", 2),
        ("call", "grow", 0, [yes], [reply], "unlabelled", False),
        ("call", "grow", 0, [2], [reply], "unlabelled", False),
    ]
    fast = Transcript()
    assert _feed(steps, fast, copy=False) == _feed(steps, _Reference(), copy=True)
    assert [m.role for m in fast.messages()].count("assistant") == 5  # the call kept twice


def test_an_edit_of_an_early_message_after_a_long_run_still_matches_the_reference() -> None:
    steps = [
        *_turns(12),
        ("call", "edit", 1, [3], [14], None, False),  # the first user message replaced
        ("call", "drop", 2, [], [15], None, False),
        ("call", "grow", 0, [0, 1], [6], "refunds", False),  # a sub-agent's instructions
        ("call", "grow", 0, [], [14], None, True),  # a span id used before
        ("tool", 2),
        ("call", "fresh", 0, [5], [17], None, False),  # a branch from the start
    ]
    assert _feed(steps, Transcript(), copy=False) == _feed(steps, _Reference(), copy=True)
