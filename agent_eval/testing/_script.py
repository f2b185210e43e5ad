"""JSON scripts for the fake model server (``--script FILE.json``).

A script is a JSON object (or just its ``rules`` list)::

    {
      "default": {"text": "Sure."},
      "rules": [
        {"schema": "OutcomeComparison", "times": 1, "reply": {"invalid_verdict": "yes"}},
        {"schema": "GoalAndOutcome", "reply": {"structured": {"user_goal": "g", "end_state": "e"}}},
        {"contains": "weather", "latency_ms": 250,
         "reply": {"tool_calls": [{"name": "get_weather", "arguments": {"city": "Paris"}}]}},
        {"model": "slow-model", "reply": {"hang": 30}},
        {"reply": {"error": 429, "retry_after": 1}, "times": 2}
      ]
    }

Rule keys (all optional except ``reply``): ``contains`` (substring of the message text),
``schema`` (response schema name), ``model``, ``times`` (omit for always), ``latency_ms``.
Reply objects, one kind each:

* ``{"text": "...", "usage": {"prompt_tokens": 10, "completion_tokens": 2}}``
* ``{"tool_calls": [{"name": "f", "arguments": {...}, "id": "call_1"}], "content": null}``
* ``{"structured": {...}}``: in the request's structured-output mode
* ``{"error": 503, "retry_after": 0.5, "message": "..."}``
* ``{"hang": 30, "then": {reply}}``: wait 30 s, then the ``then`` reply (a 504 when absent)
* ``{"malformed": true}``: a truncated JSON body
* ``{"invalid_verdict": "yes"}`` or ``{"invalid_verdict": null, "missing": true}``

``usage`` is accepted on text, tool_calls and structured replies.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

import orjson

from agent_eval.errors import ConfigError
from agent_eval.testing._replies import (
    Hang,
    HttpError,
    InvalidVerdict,
    MalformedJSON,
    Reply,
    Structured,
    Text,
    ToolCall,
    ToolCalls,
    Usage,
)

if TYPE_CHECKING:
    from agent_eval.testing._server import FakeModelServer

__all__ = ["load_script", "parse_reply"]

_RULE_KEYS = {"contains", "schema", "model", "times", "latency_ms", "reply"}


def load_script(path: str | Path, server: FakeModelServer) -> int:
    """Add the rules (and default reply) of the script at ``path`` to ``server``.

    Returns:
        The number of rules added.

    Raises:
        ConfigError: the file is missing, not JSON, or a rule or reply is malformed (the
            message names the file and the rule's index).

    """
    try:
        script = orjson.loads(Path(path).read_bytes())
    except (OSError, orjson.JSONDecodeError) as exc:
        raise ConfigError(f"{path}: cannot read the fake-server script: {exc}") from exc
    if isinstance(script, list):
        script = {"rules": script}
    if not isinstance(script, dict) or not isinstance(script.get("rules", []), list):
        raise ConfigError(f"{path}: a script is an object with a 'rules' list, or that list")
    if "default" in script:
        server.default = _at(path, "default", script["default"])
    for index, rule in enumerate(script.get("rules", [])):
        _add_rule(path, index, rule, server)
    return len(script.get("rules", []))


def _add_rule(path: str | Path, index: int, rule: Any, server: FakeModelServer) -> None:
    where = f"rules[{index}]"
    if not isinstance(rule, dict) or "reply" not in rule or set(rule) - _RULE_KEYS:
        raise ConfigError(
            f"{path}: {where} must be an object with 'reply' and only the keys "
            f"{sorted(_RULE_KEYS)}; got {rule!r}"
        )
    latency = rule.get("latency_ms")
    server.add_rule(
        _at(path, where, rule["reply"]),
        contains=rule.get("contains"),
        schema=rule.get("schema"),
        model=rule.get("model"),
        times=rule.get("times"),
        latency=None if latency is None else latency / 1000,
    )


def _at(path: str | Path, where: str, data: Any) -> Reply:
    try:
        return parse_reply(data)
    except (KeyError, TypeError, ValueError) as exc:
        raise ConfigError(f"{path}: {where}: bad reply {data!r}: {exc}") from exc


def parse_reply(data: dict[str, Any]) -> Reply:
    """One reply object of the script format (see the module docstring).

    Raises:
        ValueError: the object names no known reply kind.
        KeyError / TypeError: a field is missing or of the wrong type.

    """
    for key, parse in _PARSERS.items():
        if key in data:
            return parse(data)
    raise ValueError(f"expected one of {', '.join(_PARSERS)}")


def _usage(data: dict[str, Any]) -> Usage | None:
    return Usage(**data["usage"]) if data.get("usage") else None


def _tool_calls(data: dict[str, Any]) -> ToolCalls:
    calls = (ToolCall(c["name"], c.get("arguments", {}), c.get("id")) for c in data["tool_calls"])
    return ToolCalls(tuple(calls), data.get("content"), _usage(data))


def _hang(data: dict[str, Any]) -> Hang:
    then = parse_reply(data["then"]) if data.get("then") else None
    if isinstance(then, Hang | MalformedJSON | InvalidVerdict):
        raise ValueError("'then' must be a text, tool_calls, structured or error reply")
    return Hang(float(data["hang"]), then)


_PARSERS: dict[str, Callable[[dict[str, Any]], Reply]] = {
    "text": lambda d: Text(str(d["text"]), _usage(d)),
    "tool_calls": _tool_calls,
    "structured": lambda d: Structured(dict(d["structured"]), _usage(d)),
    "error": lambda d: HttpError(
        int(d["error"]), d.get("retry_after"), d.get("message", "fake server: scripted error")
    ),
    "hang": _hang,
    "malformed": lambda d: MalformedJSON(),
    "invalid_verdict": lambda d: InvalidVerdict(
        d["invalid_verdict"], missing=bool(d.get("missing"))
    ),
}
