"""Test helpers shipped with the package: a fake OpenAI-compatible model server.

See :mod:`agent_eval.testing._server` for the server, :mod:`agent_eval.testing._fake_server` to
run it as a process, :mod:`agent_eval.testing._replies` for reply and fault kinds, and
:mod:`agent_eval.testing._script` for the JSON script format, and
:mod:`agent_eval.testing._claims` for a scripted claim-level judge.
"""

from agent_eval.testing._claims import ClaimScript
from agent_eval.testing._recording import RecordedRequest
from agent_eval.testing._replies import (
    DEFAULT_FAULTS,
    INVALID_VERDICTS,
    NO_USAGE,
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
from agent_eval.testing._rules import Rule
from agent_eval.testing._server import FakeModelServer

__all__ = [
    "DEFAULT_FAULTS",
    "INVALID_VERDICTS",
    "NO_USAGE",
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
