"""Scripts the fake server as a goal-accuracy judge, and builds small AgentTraces.

Stage 1 (schema ``GoalAndOutcome``) reports the end state ``goal reached`` when the conversation
contains the marker ``ZEBRA-DONE``, else ``nothing done``. Stage 2 (``OutcomeComparison``) says
``"1"`` exactly when the arrived outcome is ``goal reached`` and the desired outcome does not
contain ``IMPOSSIBLE``. So each trace's expected verdict follows from its own text.
"""

from __future__ import annotations

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured, Usage

DONE = "ZEBRA-DONE"
REVIEW_MARKER = "Now the conversation to review."
"""What stage 1's prompt says before the conversation (its few-shot example comes before it)."""


def _infer(request: RecordedRequest) -> Structured:
    conversation = request.text.rsplit(REVIEW_MARKER, 1)[-1]
    end_state = "goal reached" if DONE in conversation else "nothing done"
    return Structured(
        {"user_goal": "get the thing done", "end_state": end_state}, usage=Usage(100, 20)
    )


def _compare(request: RecordedRequest) -> Structured:
    case = request.text.rsplit("Now the case to decide.", 1)[-1]
    ok = "Arrived outcome: goal reached" in case and "IMPOSSIBLE" not in case
    return Structured({"reason": "compared", "verdict": "1" if ok else "0"}, usage=Usage(50, 10))


def script_goal_judge(server: FakeModelServer) -> None:
    """Add the two stage rules (after any rules already added, which take precedence)."""
    server.add_rule(_infer, schema="GoalAndOutcome")
    server.add_rule(_compare, schema="OutcomeComparison")


def trace(
    conversation_id: str, *, done: bool, reference: str | None = None, extra: str = ""
) -> AgentTrace:
    """A two-message conversation that reaches its goal when ``done``."""
    reply = f"All set. {DONE}" if done else "Sorry, I could not do it."
    return AgentTrace(
        conversation_id=conversation_id,
        trace_ids=(f"{len(conversation_id):032x}",),
        messages=(
            UserMessage(content=f"Please do the thing. {extra}"),
            AssistantMessage(content=reply),
        ),
        reference=reference,
    )


def stage_requests(server: FakeModelServer, conversation_marker: str) -> list[RecordedRequest]:
    """The requests whose text contains ``conversation_marker``, in arrival order."""
    return [r for r in server.requests if conversation_marker in r.text]
