"""Scripts the fake server as a goal-accuracy judge whose verdicts depend on the rendering.

Stage 1 (``GoalAndOutcome``): the end state is ``goal reached`` when the conversation holds
``DONE``, except that a conversation holding ``FLIP`` rendered as JSON (``"role": "user"``) reads
as ``nothing done``; so ``FLIP`` conversations pass under text formatters and fail under json@1.
``DRIFT`` conversations infer a different user goal on every call (stage-1 variation).
Stage 2 (``OutcomeComparison``): verdict 1 when the arrived outcome is ``goal reached``, except
that ``WOBBLE`` and ``DRIFT`` conversations alternate 1, 0, 1, ... per call (judge variance).
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

from agent_eval._trace import AgentTrace, AssistantMessage, UserMessage
from agent_eval.testing import FakeModelServer, RecordedRequest, Structured, Usage

_calls: Counter[str] = Counter()


def _conversation_id(text: str) -> str:
    found = re.search(r"CONV-(\w+)", text)
    return found.group(1) if found else "?"


def _infer(request: RecordedRequest) -> Structured:
    text = request.text.rsplit("Now the conversation to review.", 1)[-1]
    cid = _conversation_id(text)
    done = "DONE" in text and not ("FLIP" in text and '"role": "user"' in text)
    goal = f"goal of CONV-{cid}"
    if "DRIFT" in text:
        _calls[f"goal:{cid}"] += 1
        goal += f" take {_calls[f'goal:{cid}']}"
    end = "goal reached" if done else "nothing done"
    return Structured({"user_goal": goal, "end_state": end}, usage=Usage(100, 20))


def _compare(request: RecordedRequest) -> Structured:
    case = request.text.rsplit("Now the case to decide.", 1)[-1]
    cid = _conversation_id(case)
    verdict = "Arrived outcome: goal reached" in case
    if "WOBBLE" in cid or "DRIFT" in cid:
        _calls[f"verdict:{cid}"] += 1
        verdict = _calls[f"verdict:{cid}"] % 2 == 1
    return Structured(
        {"reason": f"decided CONV-{cid}", "verdict": "1" if verdict else "0"}, usage=Usage(50, 10)
    )


def script(server: FakeModelServer) -> None:
    """Add both stage rules; resets the per-conversation call counters."""
    _calls.clear()
    server.add_rule(_infer, schema="GoalAndOutcome")
    server.add_rule(_compare, schema="OutcomeComparison")


def write_traces(path: Path, specs: dict[str, str], labels: dict[str, int] | None = None) -> Path:
    """Write AgentTrace JSONL: ``{conversation_id: markers}`` (``DONE``, ``FLIP``, ...)."""
    lines = []
    for cid, markers in specs.items():
        trace = AgentTrace(
            conversation_id=cid,
            trace_ids=(f"{abs(hash(cid)) % 16**32:032x}",),
            messages=(
                UserMessage(content=f"Please help. CONV-{cid}"),
                AssistantMessage(content=f"Working on it. {markers}"),
            ),
            labels={"success": labels[cid]} if labels and cid in labels else {},
        )
        lines.append(trace.model_dump_json())
    path.write_text("\n".join(lines) + "\n")
    return path
