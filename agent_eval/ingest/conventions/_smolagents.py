r"""smolagents as openinference-instrumentation-smolagents records it (read by ``openinference``).

smolagents keeps its memory in its own roles and replays it to the model as text
(smolagents ``memory.py`` / ``models.py``): a step's tool calls are a ``tool-call`` message whose
text is ``"Calling tools:\n"`` plus the Python ``repr`` of the call list (``[{'id', 'type',
'function': {'name', 'arguments'}}]``), their results one ``tool-response`` message
``"Observation:\n"`` plus the results joined by newlines. A ``ToolCallingAgent`` ends each run by
calling its ``final_answer`` tool with ``{"answer": ...}``: that call is the turn's answer.
TOOL spans record ``input.value`` as the tool's Python call, ``{"args": [...], "kwargs": {...},
"sanitize_inputs_outputs": ...}``, not the arguments the model sent.

:func:`smolagents_message` reads the two roles, :func:`answer_turns` turns ``final_answer`` calls
into the assistant's answer (and drops the observation that echoes it), and
:func:`call_arguments` unwraps a TOOL span's arguments.
"""

from __future__ import annotations

import ast
from collections.abc import Mapping, Sequence
from typing import Any

from agent_eval._trace import AssistantMessage, Message, ToolCall, ToolMessage, UserMessage
from agent_eval.ingest.conventions._messages import tool_call

__all__ = [
    "FINAL_ANSWER_TOOL",
    "SCOPE",
    "TOOL_CALL_ROLE",
    "TOOL_RESPONSE_ROLE",
    "answer_turns",
    "call_arguments",
    "smolagents_message",
]

SCOPE = "openinference.instrumentation.smolagents"
"""The instrumentation scope of openinference-instrumentation-smolagents."""
TOOL_CALL_ROLE = "tool-call"
TOOL_RESPONSE_ROLE = "tool-response"
FINAL_ANSWER_TOOL = "final_answer"
FINAL_ANSWER_ARGUMENT = "answer"
_CALLING_TOOLS = "Calling tools:"
_OBSERVATION = "Observation:"
_NEW_TASK = "New task:\n"
_WRAPPER_KEYS = frozenset({"args", "kwargs", "sanitize_inputs_outputs"})


def smolagents_message(role: str, text: str) -> Message | None:
    """A ``tool-call`` / ``tool-response`` message as ours; ``None`` for any other role."""
    if role == TOOL_CALL_ROLE:
        content = "" if text.startswith(_CALLING_TOOLS) else text
        return AssistantMessage(tool_calls=tuple(_calls(text)) or None, content=content)
    if role == TOOL_RESPONSE_ROLE:
        return ToolMessage(content=text.removeprefix(_OBSERVATION).strip("\n"))
    return None


def _calls(text: str) -> list[ToolCall]:
    if not text.startswith(_CALLING_TOOLS):
        return []
    try:
        listed = ast.literal_eval(text.removeprefix(_CALLING_TOOLS).strip())
    except (ValueError, SyntaxError, MemoryError, RecursionError):
        return []
    calls = []
    for item in listed if isinstance(listed, list) else ():
        function = item.get("function") if isinstance(item, Mapping) else None
        if isinstance(function, Mapping):
            calls.append(tool_call(function.get("name"), function.get("arguments"), item.get("id")))
    return calls


def answer_turns(messages: Sequence[Message]) -> list[Message]:
    r"""The conversation smolagents' memory replay stands for.

    - a ``final_answer`` call is the assistant's answer text, and the observation that echoes
      it is dropped;
    - an observation answering a single call takes that call's id (one answering parallel calls
      holds all their results in one text and keeps no id);
    - the ``"New task:\n"`` framing smolagents puts before each user task is removed.
    """
    out: list[Message] = []
    answered = False
    last_calls: tuple[ToolCall, ...] = ()
    for recorded in messages:
        message = recorded
        if isinstance(message, ToolMessage) and message.tool_call_id is None:
            if answered:
                answered = False
                continue  # "Observation: <the answer>", smolagents' echo of its final_answer
            if len(last_calls) == 1 and last_calls[0].id:
                message = message.model_copy(update={"tool_call_id": last_calls[0].id})
        answered = False
        if isinstance(message, UserMessage) and message.content.startswith(_NEW_TASK):
            message = message.model_copy(update={"content": message.content[len(_NEW_TASK) :]})
        if isinstance(message, AssistantMessage) and message.tool_calls:
            last_calls = message.tool_calls
            if len(last_calls) == 1 and last_calls[0].name == FINAL_ANSWER_TOOL:
                answer = _answer(last_calls[0])
                if answer is not None:
                    message = message.model_copy(update={"tool_calls": (), "content": answer})
                    answered = True
        out.append(message)
    return out


def _answer(call: ToolCall) -> str | None:
    arguments = call.arguments
    if isinstance(arguments, Mapping) and FINAL_ANSWER_ARGUMENT in arguments:
        answer = arguments[FINAL_ANSWER_ARGUMENT]
        return answer if isinstance(answer, str) else str(answer)
    return None


def call_arguments(value: Any) -> Any:
    """A TOOL span's parsed ``input.value`` with smolagents' call wrapper removed."""
    if isinstance(value, Mapping) and set(value) == _WRAPPER_KEYS and not value.get("args"):
        kwargs = value.get("kwargs")
        return dict(kwargs) if isinstance(kwargs, Mapping) else value
    return value
