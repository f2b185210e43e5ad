"""Scripts the fake server as a criteria judge, and the shipped example files.

A criteria call (schema ``CriteriaVerdict``) passes exactly when the unit to judge (after the
prompt's ``Now the ... to judge.``) holds the marker ``ZEBRA-DONE`` (:data:`DONE`), so each
verdict follows from the trace's own text, as in :mod:`tests.run.goal_script`.
"""

from __future__ import annotations

from pathlib import Path

from agent_eval.testing import FakeModelServer, RecordedRequest, Structured, Usage

from ..run.goal_script import DONE

EXAMPLES = Path(__file__).resolve().parents[2] / "examples" / "criteria"
POLICY = EXAMPLES / "stayed-within-policy.toml"
CONFIRM = EXAMPLES / "asked-confirmation-before-irreversible-action.yaml"


def _verdict(request: RecordedRequest) -> Structured:
    judged = request.text.rsplit(" to judge.", 1)[-1]
    verdict = "1" if DONE in judged else "0"
    return Structured({"reason": f"scripted {verdict}", "verdict": verdict}, usage=Usage(80, 12))


def script_criteria_judge(server: FakeModelServer) -> None:
    """Add the criteria rule (after any rules already added, which take precedence)."""
    server.add_rule(_verdict, schema="CriteriaVerdict")
