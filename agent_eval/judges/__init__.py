"""Judges: a model that answers chat messages with a pydantic-typed object.

The protocol is :class:`Judge` (``ask(request) -> JudgeReply``) with :class:`JudgeRequest` and
:class:`JudgeReply`; ``judges`` is the ``agent_eval.judges`` entry-point registry. The built-in
adapters: :class:`OpenAIJudge` (``openai``: any OpenAI-compatible endpoint, through its own
aiohttp transport or your openai client), :class:`OpenAIClientJudge` (``openai-client``: that
client from a factory), :class:`InstructorJudge` (``instructor``, an extra),
:class:`LangChainJudge` (``langchain``) and :class:`LlamaCppJudge` (``llama-cpp``, an extra).
The adapters are imported on first use.
"""

from __future__ import annotations

from importlib import import_module
from typing import TYPE_CHECKING, Any

from agent_eval.judges._base import Judge, JudgeReply, JudgeRequest, judges

if TYPE_CHECKING:
    from agent_eval.judges._instructor_judge import InstructorJudge
    from agent_eval.judges._langchain_judge import LangChainJudge
    from agent_eval.judges._llama_cpp_judge import LlamaCppJudge
    from agent_eval.judges._openai_client_judge import OpenAIClientJudge
    from agent_eval.judges._openai_judge import OpenAIJudge

__all__ = [
    "InstructorJudge",
    "Judge",
    "JudgeReply",
    "JudgeRequest",
    "LangChainJudge",
    "LlamaCppJudge",
    "OpenAIClientJudge",
    "OpenAIJudge",
    "judges",
]

_LAZY = {
    "InstructorJudge": "agent_eval.judges._instructor_judge",
    "LangChainJudge": "agent_eval.judges._langchain_judge",
    "LlamaCppJudge": "agent_eval.judges._llama_cpp_judge",
    "OpenAIClientJudge": "agent_eval.judges._openai_client_judge",
    "OpenAIJudge": "agent_eval.judges._openai_judge",
}


def __getattr__(name: str) -> Any:
    """Import an adapter's module on first use (PEP 562)."""
    if name not in _LAZY:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    return getattr(import_module(_LAZY[name]), name)
