"""Each conversation rendered once per formatter in a run: :class:`RenderCache`.

``score`` needs a conversation's rendering three times: for the plan (its prompt tokens), for
``renderings.jsonl`` (what the judge saw, for ``agent-eval report``), and for the judge
requests. Formatters are pure (the same trace gives the same text), so the first rendering is
kept and handed to the others. The cache holds each rendering with a weak reference to the
trace it came from and gives it back only for that same trace object, so two traces that share
a conversation id never share a rendering; an entry goes when its trace is no longer used
(a rendering of a dead trace can never be asked for again). Memory: one text per
(conversation, formatter) of the traces alive, so a run that streams its conversations
(:class:`~agent_eval.run._spool.TraceSpool`) holds the renderings of those in flight only.
"""

from __future__ import annotations

import weakref
from collections.abc import Iterable
from typing import Any

from agent_eval._trace import AgentTrace
from agent_eval.formatting._base import Formatter

__all__ = ["RenderCache", "RenderingKey"]

RenderingKey = tuple[str, str]
"""``(conversation_id, formatter identity)``, as in ``renderings.jsonl``."""


class RenderCache:
    """Renderings by ``(conversation_id, formatter identity)``, made on first use.

    Attributes:
        renders: How many times a formatter was called (for tests and benchmarks).

    """

    def __init__(self) -> None:
        self._entries: dict[RenderingKey, tuple[weakref.ref[AgentTrace], str]] = {}
        self._identities: set[str] = set()
        self.renders = 0

    def render(self, trace: AgentTrace, formatter: Formatter[Any]) -> str:
        """``formatter.render(trace)``, called at most once per trace and formatter.

        Raises:
            Exception: whatever the formatter raises (nothing is kept then, so the next caller
                sees the same error).

        """
        key = (trace.conversation_id, formatter.identity)
        found = self._entries.get(key)
        if found is not None and found[0]() is trace:
            return found[1]
        self.renders += 1
        text = formatter.render(trace)
        self._keep(key, trace, text)
        return text

    def seed(self, trace: AgentTrace, identity: str, text: str) -> None:
        """Hand ``trace`` the rendering ``text`` it was given earlier by the formatter ``identity``.

        For a caller that keeps renderings elsewhere while the traces are not in memory (the
        :class:`~agent_eval.run._spool.TraceSpool`): the text must be what that formatter
        rendered for an equal trace (formatters are pure).
        """
        self._keep((trace.conversation_id, identity), trace, text)

    def held(self, trace: AgentTrace) -> dict[str, str]:
        """The renderings the cache holds for this very ``trace``, by formatter identity."""
        held = {}
        for identity in self._identities:
            found = self._entries.get((trace.conversation_id, identity))
            if found is not None and found[0]() is trace:
                held[identity] = found[1]
        return held

    def _keep(self, key: RenderingKey, trace: AgentTrace, text: str) -> None:
        def drop(ref: weakref.ref[AgentTrace]) -> None:  # the trace is gone: so is its text
            found = self._entries.get(key)
            if found is not None and found[0] is ref:
                del self._entries[key]

        self._identities.add(key[1])
        self._entries[key] = (weakref.ref(trace, drop), text)

    def __len__(self) -> int:
        """How many renderings the cache holds."""
        return len(self._entries)

    def forget(self, trace: AgentTrace, formatter: Formatter[Any]) -> None:
        """Drop the rendering of this very ``trace`` with ``formatter``, if the cache holds it.

        For a long-lived caller (``serve``): once a conversation's rows are written its
        rendering is dead weight, and a later revision is a new trace, rendered anew anyway.
        An entry for another trace of the same conversation (a newer revision being scored
        meanwhile) is kept.
        """
        key = (trace.conversation_id, formatter.identity)
        found = self._entries.get(key)
        if found is not None and found[0]() is trace:
            del self._entries[key]

    def render_all(
        self, traces: Iterable[AgentTrace], formatters: Iterable[Formatter[Any]]
    ) -> dict[RenderingKey, str]:
        """Every trace rendered with every formatter, by key (what ``renderings.jsonl`` holds).

        Raises:
            Exception: whatever a formatter raises.

        """
        built = list(formatters)
        return {
            (trace.conversation_id, formatter.identity): self.render(trace, formatter)
            for trace in traces
            for formatter in built
        }
