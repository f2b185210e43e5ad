"""Scripted replies: rules matched against requests, in order, with a use budget.

A :class:`Rule` matches a request when every condition it sets holds (a predicate on the JSON
body, a substring of the message text, the response schema name, the model). The first rule in
``add_rule`` order that matches and has uses left answers; a rule made with ``times=2`` answers
twice and then stands aside, so "first reply invalid, second valid" is two rules in order.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_eval.testing._recording import RecordedRequest
from agent_eval.testing._replies import Reply, ReplySpec

__all__ = ["Rule", "RuleBook"]


@dataclass(slots=True, kw_only=True)
class Rule:
    """One scripted reply and the conditions under which it is sent.

    Attributes:
        reply: The reply, or a callable ``(RecordedRequest) -> Reply``.
        match: A predicate on the request's JSON body.
        contains: A substring that must occur in the messages' text.
        schema: The response schema name (the function name in tools mode, the
            ``json_schema.name`` in json_schema mode); ``Partial<schema>``, the name
            instructor's partial streaming gives the model, matches too.
        model: The requested model name.
        times: How many requests it answers; ``None`` for always.
        latency: Seconds to wait before answering; the server's latency when ``None``.

    """

    reply: ReplySpec
    match: Callable[[Any], bool] | None = None
    contains: str | None = None
    schema: str | None = None
    model: str | None = None
    times: int | None = None
    latency: float | None = None
    used: int = 0

    def matches(self, request: RecordedRequest) -> bool:
        """Whether every condition the rule sets holds for ``request``."""
        return (
            (self.contains is None or self.contains in request.text)
            and (
                self.schema is None or request.schema_name in (self.schema, f"Partial{self.schema}")
            )
            and (self.model is None or self.model == request.model)
            and (self.match is None or bool(self.match(request.body)))
        )

    @property
    def exhausted(self) -> bool:
        """Whether the rule has answered ``times`` requests already."""
        return self.times is not None and self.used >= self.times

    def build(self, request: RecordedRequest) -> Reply:
        """The reply for ``request`` (calls a dynamic reply)."""
        return self.reply(request) if callable(self.reply) else self.reply


class RuleBook:
    """The ordered rules of one server, safe to use from several threads."""

    def __init__(self) -> None:
        self._rules: list[Rule] = []
        self._lock = threading.Lock()

    def add(self, rule: Rule) -> int:
        """Append ``rule``; returns its index."""
        with self._lock:
            self._rules.append(rule)
            return len(self._rules) - 1

    def clear(self) -> None:
        """Remove every rule."""
        with self._lock:
            self._rules.clear()

    def find(self, request: RecordedRequest) -> tuple[int, Rule] | None:
        """The first matching rule with uses left, or ``None`` (does not use it up)."""
        with self._lock:
            for index, rule in enumerate(self._rules):
                if not rule.exhausted and rule.matches(request):
                    return index, rule
        return None

    def take(self, request: RecordedRequest) -> tuple[int, Rule] | None:
        """Like :meth:`find`, and counts one use of the rule found (atomically)."""
        with self._lock:
            for index, rule in enumerate(self._rules):
                if not rule.exhausted and rule.matches(request):
                    rule.used += 1
                    return index, rule
        return None

    @property
    def rules(self) -> list[Rule]:
        """A snapshot of the rules, in order."""
        with self._lock:
            return list(self._rules)
