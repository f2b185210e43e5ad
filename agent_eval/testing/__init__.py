"""Test helpers shipped with the package: a fake OpenAI-compatible model server.

See :mod:`agent_eval.testing.server` for the server, :mod:`agent_eval.testing.fake_server` to
run it as a process, :mod:`agent_eval.testing.replies` for reply and fault kinds, and
:mod:`agent_eval.testing.script` for the JSON script format, and
:mod:`agent_eval.testing.claims` for a scripted claim-level judge.
"""

from agent_eval.testing.claims import ClaimScript
from agent_eval.testing.recording import RecordedRequest
from agent_eval.testing.replies import (
    DEFAULT_FAULTS,
    INVALID_VERDICTS,
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Structured,
    Text,
    ToolCall,
    ToolCalls,
    Usage,
)
from agent_eval.testing.rules import Rule
from agent_eval.testing.server import FakeModelServer

__all__ = [
    "DEFAULT_FAULTS",
    "INVALID_VERDICTS",
    "ClaimScript",
    "FakeModelServer",
    "Hang",
    "HttpError",
    "InvalidVerdict",
    "MalformedJSON",
    "RecordedRequest",
    "Rule",
    "Structured",
    "Text",
    "ToolCall",
    "ToolCalls",
    "Usage",
]
