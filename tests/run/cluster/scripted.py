"""A goal-accuracy judge on the fake server whose every request is distinct per conversation.

Stage 1 answers ``user_goal = "goal #N#"`` (the conversation's marker), so stage 2's request
differs for every conversation too: each request of a run is asked once unless it is paid
twice. Each arrival records how many requests the server holds unanswered (its own included):
the peak of calls in flight, measured where it counts.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import orjson

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured, Usage

DONE = "ZEBRA-DONE"
_MARKER = re.compile(r"#\d+#")


def traces(count: int) -> list[AgentTrace]:
    """``count`` two-message conversations ``c000``...; the even ones reach their goal."""
    return [
        AgentTrace(
            conversation_id=f"c{i:03d}",
            trace_ids=(f"{i + 1:032x}",),
            messages=(
                UserMessage(content=f"Please do the thing #{i}#."),
                AssistantMessage(content=f"All set. {DONE}" if i % 2 == 0 else "Sorry, no."),
            ),
        )
        for i in range(count)
    ]


def write_traces(path: Path, count: int) -> Path:
    """The conversations as agent-trace JSON Lines at ``path``."""
    lines = (orjson.dumps(t.model_dump(mode="json")) + b"\n" for t in traces(count))
    path.write_bytes(b"".join(lines))
    return path


class ScriptedJudge:
    """The rules, and the calls in flight seen at each arrival (``peaks``)."""

    def __init__(self, server: FakeModelServer) -> None:
        self.server = server
        self.in_flight: list[int] = []
        server.add_rule(self._infer, schema="GoalAndOutcome")
        server.add_rule(self._compare, schema="OutcomeComparison")

    def _arrived(self) -> None:
        self.in_flight.append(sum(1 for r in self.server.requests if r.status == 0))

    def _infer(self, request: RecordedRequest) -> Structured:
        self._arrived()
        text = request.text
        marker = _MARKER.findall(text)[-1]
        end = "goal reached" if DONE in text.rsplit("conversation to review", 1)[-1] else "nothing"
        return Structured({"user_goal": f"goal {marker}", "end_state": end}, usage=Usage(100, 20))

    def _compare(self, request: RecordedRequest) -> Structured:
        self._arrived()
        ok = "Arrived outcome: goal reached" in request.text
        verdict = "1" if ok else "0"
        return Structured({"reason": "compared", "verdict": verdict}, usage=Usage(50, 10))


def answered_twice(server: FakeModelServer) -> int:
    """Requests answered (HTTP 200) more than once for the same body: calls paid twice."""
    bodies = Counter(orjson.dumps(r.body, option=orjson.OPT_SORT_KEYS) for r in server.requests
                     if r.status == 200)  # fmt: skip
    return sum(n - 1 for n in bodies.values())
