"""Structured output on the chat-completions wire: the request fields and the reply's verdict.

Three modes, the shapes every OpenAI-compatible server (OpenAI, Azure, vLLM, Ollama, llama.cpp
server, LM Studio) understands, as OpenAI documents them for the Chat Completions API:

- ``tools``: one function tool whose ``parameters`` are the response model's JSON schema, and a
  ``tool_choice`` forcing it; the reply is the tool call's ``arguments``;
- ``json_schema``: ``response_format = {"type": "json_schema", "json_schema": {"name",
  "schema"}}``; the reply is the message ``content``;
- ``json``: ``response_format = {"type": "json_object"}`` plus a system instruction carrying the
  schema; the reply is the message ``content``.

The schema is pydantic's ``model_json_schema()`` of the response model; the function and
schema name is the model's title. All of it is computed once per (model, mode) and kept
pre-serialized (:func:`structured_output`).

Replies are validated strictly (:func:`parse_reply`): a verdict is ``"0"`` or ``"1"`` and
nothing else. Reasoning models often put something before the JSON (a ``<think>...</think>``
block, a fenced ```` ```json ```` block, a sentence); when the reply as a whole does not
validate, exactly one such leading part is removed and the rest validated strictly again. The
raw reply is always kept by the caller.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from typing import Any, Literal

import orjson
from pydantic import BaseModel, ValidationError

from agent_eval.judges._base import response_schema

__all__ = [
    "MODES",
    "StructuredMode",
    "StructuredOutput",
    "parse_reply",
    "reply_text",
    "structured_output",
]

StructuredMode = Literal["tools", "json_schema", "json"]
MODES: tuple[StructuredMode, ...] = ("tools", "json_schema", "json")
"""Structured-output modes: function/tool calling, ``response_format`` JSON schema, JSON mode."""

_REASONING = re.compile(r"\A\s*<(think|thinking|reasoning)>.*?</\1>\s*", re.DOTALL | re.IGNORECASE)
_FENCE = re.compile(r"\A\s*```[A-Za-z0-9_-]*[ \t]*\n(.*?)\n?```\s*\Z", re.DOTALL)


@dataclass(frozen=True)
class StructuredOutput:
    """The structured-output part of a request for one response model and mode.

    Attributes:
        mode: ``tools``, ``json_schema`` or ``json``.
        response_model: The pydantic model replies must validate as.
        fields: What the mode adds to the request body (``tools`` and ``tool_choice``, or
            ``response_format``); shared, never mutate.
        instruction: JSON mode's system instruction (the schema in words), else ``None``.

    """

    mode: StructuredMode
    response_model: type[BaseModel]
    fields: dict[str, Any]
    instruction: str | None
    fragments: dict[str, orjson.Fragment]

    def messages(self, messages: Sequence[dict[str, str]]) -> list[dict[str, Any]]:
        """The request's messages (fresh dicts), with JSON mode's instruction in the system one.

        The instruction is appended to a leading system message, or sent as one first.
        """
        sent: list[dict[str, Any]] = [dict(message) for message in messages]
        if self.instruction is None:
            return sent
        if sent and sent[0].get("role") == "system" and isinstance(sent[0].get("content"), str):
            sent[0]["content"] = f"{sent[0]['content']}\n\n{self.instruction}"
        else:
            sent.insert(0, {"role": "system", "content": self.instruction})
        return sent

    def body(self, model: str, messages: list[dict[str, Any]], sampling: dict[str, Any]) -> bytes:
        """The JSON request body: model, messages, sampling parameters and the mode's fields."""
        return orjson.dumps({"model": model, "messages": messages, **sampling, **self.fragments})

    def request(
        self, model: str, messages: list[dict[str, Any]], sampling: dict[str, Any]
    ) -> dict[str, Any]:
        """The same request as a dict (for clients that route on the body, e.g. Azure)."""
        return {"model": model, "messages": messages, **sampling, **self.fields}


@lru_cache(maxsize=128)
def structured_output(response_model: type[BaseModel], mode: StructuredMode) -> StructuredOutput:
    """The request fields for ``response_model`` in ``mode``, built once and kept.

    Raises:
        ValueError: ``mode`` is not one of :data:`MODES`.

    """
    schema = response_schema(response_model)
    name = str(schema.get("title") or response_model.__name__)
    description = (response_model.__doc__ or "").strip() or f"Correctly extracted `{name}`."
    fields: dict[str, Any]
    instruction: str | None = None
    if mode == "tools":
        function = {"name": name, "description": description, "parameters": schema}
        fields = {
            "tools": [{"type": "function", "function": function}],
            "tool_choice": {"type": "function", "function": {"name": name}},
        }
    elif mode == "json_schema":
        json_schema = {"name": name, "schema": schema}
        fields = {"response_format": {"type": "json_schema", "json_schema": json_schema}}
    elif mode == "json":
        fields = {"response_format": {"type": "json_object"}}
        instruction = (
            "Answer with one JSON object, an instance of this JSON schema (not the schema "
            "itself), and nothing else:\n\n"
            + orjson.dumps(schema, option=orjson.OPT_INDENT_2).decode()
        )
    else:
        raise ValueError(f"unknown structured-output mode {mode!r}; choose one of {MODES}")
    fragments = {key: orjson.Fragment(orjson.dumps(value)) for key, value in fields.items()}
    return StructuredOutput(mode, response_model, fields, instruction, fragments)


def reply_text(mode: StructuredMode, message: dict[str, Any]) -> str | None:
    """The text carrying the answer in a reply ``message`` (a chat-completions choice message).

    In ``tools`` mode, the first tool call's ``arguments`` (or the content when the model
    answered in text); otherwise the ``content``. ``None`` when there is neither.
    """
    if mode == "tools":
        calls = message.get("tool_calls")
        if isinstance(calls, list) and calls and isinstance(calls[0], dict):
            function = calls[0].get("function")
            arguments = function.get("arguments") if isinstance(function, dict) else None
            if isinstance(arguments, str):
                return arguments
    content = message.get("content")
    return content if isinstance(content, str) else None


def parse_reply(text: str, response_model: type[BaseModel]) -> BaseModel:
    """``text`` validated strictly as ``response_model``, after one leading extra if need be.

    First the whole text is validated (``model_validate_json(strict=True)``). When that fails,
    one leading reasoning block (``<think>``, ``<thinking>``, ``<reasoning>``) is removed, then
    a fence around the rest (```` ```json ... ``` ````), or else any text before the first
    ``{`` and after the matching last ``}``; what remains is validated strictly once more.

    Raises:
        ValidationError: neither the text nor its salvaged JSON validates; the error is the
            one for the text as sent when nothing could be salvaged, else the salvaged JSON's
            (so a re-ask names the field that is wrong, not the leading reasoning).

    """
    try:
        return response_model.model_validate_json(text, strict=True)
    except ValidationError:
        salvaged = _salvage(text)
        if salvaged is None or salvaged == text:
            raise
        return response_model.model_validate_json(salvaged, strict=True)


def _salvage(text: str) -> str | None:
    rest = _REASONING.sub("", text, count=1)
    fenced = _FENCE.match(rest)
    if fenced is not None:
        return fenced.group(1).strip()
    start, end = rest.find("{"), rest.rfind("}")
    if start < 0 or end < start:
        return None
    return rest[start : end + 1]
