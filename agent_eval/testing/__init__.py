"""Test helpers shipped with the package: a fake OpenAI-compatible model server.

:class:`FakeModelServer` is the server (in process; ``python -m agent_eval.testing`` runs it as
a process), :class:`Rule` and the reply kinds (:class:`Structured`, :class:`Text`,
:class:`ToolCalls`...) and faults (:class:`HttpError`, :class:`Hang`, :class:`MalformedJSON`...)
script its answers, :class:`RecordedRequest` is what it received, and :class:`ClaimScript` is a
scripted claim-level judge. The JSON script format is in docs/testing.md.
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
