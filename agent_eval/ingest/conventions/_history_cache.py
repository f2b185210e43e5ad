"""Replayed message histories read incrementally: each LLM call's input extends the last one's.

Instrumentations record the whole conversation so far as one JSON array string on every LLM
call (GenAI ``gen_ai.input.messages``, ``gen_ai.prompt``), so call ``n + 1``'s string is call
``n``'s with its closing bracket replaced by ``, <new messages>]``. :func:`read_history`
remembers the last few arrays it read (their text up to the closing bracket and their messages)
and, when a new array extends one of them, parses and reads only the new elements.

This is exact, not a heuristic: when ``prev`` is a valid non-empty JSON array and
``text == prev_body + "," + rest`` where ``"[" + rest`` parses as a non-empty array ``S``, then
``text`` parses as ``prev`` followed by ``S`` (JSON elements parse the same in any array), and
reading an array's messages is element by element. Anything else (no remembered prefix, a
suffix that does not parse) is read whole, as before.

Which arrays are searched: a busy Collector interleaves many conversations, so a cache of the
last few arrays misses as soon as more conversations are in flight than it holds (issue 15:
CPU x2.2 beyond 32). The caller names the conversation a span belongs to with
:func:`history_scope` (its conversation id, else its trace id); arrays are remembered per scope
(the last :data:`HISTORY_PER_SCOPE` of each, least recently used scopes forgotten first) and a
lookup searches its scope's few arrays before the :data:`HISTORY_CACHE_SIZE` most recent ones
of any scope. The scope only decides where to look first: a match is always checked on the text
itself, so a wrong or missing scope costs speed, never correctness. Memory is bounded: arrays
longer than :data:`HISTORY_MAX_CHARS` are not kept, and the per-scope arrays total at most
:data:`HISTORY_BUDGET_CHARS` characters over at most :data:`HISTORY_SCOPES` scopes.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Callable, Iterable
from contextvars import ContextVar, Token
from typing import Any

import orjson

from agent_eval._trace import Message
from agent_eval.ingest._safe_text import REPLACEMENTS, replaced_so_far
from agent_eval.ingest._safe_text import loads as safe_json_loads

__all__ = [
    "HISTORY_BUDGET_CHARS",
    "HISTORY_CACHE_SIZE",
    "HISTORY_MAX_CHARS",
    "HISTORY_MIN_CHARS",
    "HISTORY_PER_SCOPE",
    "HISTORY_SCOPES",
    "clear_history_cache",
    "forget_history_scopes",
    "history_scope",
    "read_history",
]

HISTORY_CACHE_SIZE = 32
"""How many recently read message arrays of any scope are searched after the scope's own."""
HISTORY_PER_SCOPE = 4
"""Arrays remembered per scope (a conversation's agents each replay their own history)."""
HISTORY_SCOPES = 1024
"""Scopes (conversations in flight) remembered at most; the least recently used go first."""
HISTORY_BUDGET_CHARS = 32 << 20
"""Characters of array text the per-scope arrays may hold in total (~32 MiB of ASCII)."""
HISTORY_MIN_CHARS = 512
"""Shorter arrays are read whole (nothing worth remembering)."""
HISTORY_MAX_CHARS = 1 << 20
"""Longer arrays are read but not remembered, so the cache stays under ~32 MiB of text."""

ReadItems = Callable[[list[Any], str | None], list[Message]]
"""Reads the messages of a parsed JSON array (element by element)."""


class _Entry:
    """A remembered array (compared by identity; a plain slotted class, one is built per call)."""

    __slots__ = ("body", "default_role", "messages", "replaced", "tail")

    def __init__(
        self,
        body: str,
        tail: str,
        default_role: str | None,
        messages: tuple[Message, ...],
        replaced: int,
    ) -> None:
        self.body = body
        """The array text up to (not including) its closing bracket and trailing whitespace."""
        self.tail = tail
        """The closing bracket and trailing whitespace."""
        self.default_role = default_role
        self.messages = messages
        self.replaced = replaced
        """Code points (lone surrogates) that reading the whole array replaced: counted again
        when it is reused, so the count does not depend on what the cache held."""


_entries: list[_Entry] = []
"""Most recent first, any scope."""
_scoped: OrderedDict[str, list[_Entry]] = OrderedDict()
"""Scope -> its arrays, most recent first; scopes least recently used first."""
_scoped_chars = [0]
"""Characters held in ``_scoped`` (a one-item list)."""
_lock = threading.Lock()
_scope: ContextVar[str | None] = ContextVar("agent_eval_history_scope", default=None)


class history_scope:  # lower case: used like the function it replaced
    """Read the histories of the block as part of ``scope`` (a conversation or trace id).

    A context manager (nested scopes restore the outer one on exit; safe across threads and
    tasks, a :class:`ContextVar`), a plain class rather than ``@contextmanager`` because assembly
    enters one per span.
    """

    __slots__ = ("_scope", "_token")

    def __init__(self, scope: str | None) -> None:
        self._scope = scope
        self._token: Token[str | None] | None = None

    def __enter__(self) -> None:
        self._token = _scope.set(self._scope)

    def __exit__(self, *exc: object) -> None:
        if self._token is not None:
            _scope.reset(self._token)
            self._token = None


def read_history(
    text: str, default_role: str | None, read_items: ReadItems
) -> list[Message] | None:
    """The messages of ``text``, a JSON array of messages, reading only what is new.

    Args:
        text: An attribute value (leading whitespace allowed).
        default_role: The role of messages that record none (passed to ``read_items``).
        read_items: Reads the messages of a parsed array; its errors propagate.

    Returns:
        The messages, or ``None`` when ``text`` is not a JSON array (the caller reads it).

    """
    stripped = text.lstrip()
    if not stripped.startswith("["):
        return None
    prev = _find(stripped, default_role)
    if prev is not None:
        rest = stripped[len(prev.body) :]
        if rest == prev.tail:
            REPLACEMENTS[0] += prev.replaced  # counted as when read whole
            return list(prev.messages)
        start = replaced_so_far()
        new = _suffix(rest)
        if new is not None:
            messages = prev.messages + tuple(read_items(new, default_role))
            replaced = prev.replaced + replaced_so_far() - start
            REPLACEMENTS[0] += prev.replaced
            _remember(stripped, default_role, messages, replaced, replaces=prev)
            return list(messages)
    start = replaced_so_far()
    try:
        parsed = safe_json_loads(stripped)
    except orjson.JSONDecodeError:
        return None
    if type(parsed) is not list:
        return None
    messages = tuple(read_items(parsed, default_role))
    if parsed:
        _remember(stripped, default_role, messages, replaced_so_far() - start, replaces=None)
    return list(messages)


def _find(text: str, default_role: str | None) -> _Entry | None:
    """The remembered array ``text`` extends: its scope's first, then the most recent ones."""
    scope = _scope.get()
    with _lock:
        own = _scoped.get(scope) if scope is not None else None
        for entries in (own, _entries) if own else (_entries,):
            for entry in entries:
                if entry.default_role == default_role and text.startswith(entry.body):
                    return entry
    return None


def _suffix(rest: str) -> list[Any] | None:
    """The elements after a remembered array's body: ``rest`` is ``, e1, e2...]``."""
    rest = rest.lstrip()
    if not rest.startswith(","):
        return None
    try:
        parsed = safe_json_loads("[" + rest[1:])
    except orjson.JSONDecodeError:
        return None
    return parsed if type(parsed) is list and parsed else None


def _remember(
    text: str,
    default_role: str | None,
    messages: tuple[Message, ...],
    replaced: int,
    replaces: _Entry | None,
) -> None:
    if len(text) > HISTORY_MAX_CHARS:
        return
    trimmed = text.rstrip()
    entry = _Entry(trimmed[:-1], text[len(trimmed) - 1 :], default_role, messages, replaced)
    scope = _scope.get()
    with _lock:
        if replaces is not None and replaces in _entries:
            _entries.remove(replaces)
        _entries.insert(0, entry)
        del _entries[HISTORY_CACHE_SIZE:]
        if scope is not None:
            _remember_scoped(scope, entry, replaces)


def _remember_scoped(scope: str, entry: _Entry, replaces: _Entry | None) -> None:
    """Keep ``entry`` first in its scope's arrays; forget old scopes over the bounds."""
    own = _scoped.pop(scope, [])
    if replaces is not None and replaces in own:
        own.remove(replaces)
        _scoped_chars[0] -= len(replaces.body)
    own.insert(0, entry)
    _scoped_chars[0] += len(entry.body)
    for dropped in own[HISTORY_PER_SCOPE:]:
        _scoped_chars[0] -= len(dropped.body)
    del own[HISTORY_PER_SCOPE:]
    _scoped[scope] = own  # most recently used last
    while _scoped and (len(_scoped) > HISTORY_SCOPES or _scoped_chars[0] > HISTORY_BUDGET_CHARS):
        _, oldest = _scoped.popitem(last=False)
        _scoped_chars[0] -= sum(len(e.body) for e in oldest)


def forget_history_scopes(scopes: Iterable[str], *, everything: bool = False) -> int:
    """Forget the arrays remembered for ``scopes``; returns how many scopes were forgotten.

    ``scopes`` are conversations that will not be read again (``agent-eval serve`` calls it
    when it closes them); with ``everything`` the most recent arrays of any scope go too.
    """
    forgotten = 0
    with _lock:
        for scope in scopes:
            gone = _scoped.pop(scope, None)
            if gone is not None:
                _scoped_chars[0] -= sum(len(e.body) for e in gone)
                forgotten += 1
        if everything:
            _entries.clear()
    return forgotten


def clear_history_cache() -> None:
    """Forget every remembered array (for tests and benchmarks)."""
    with _lock:
        _entries.clear()
        _scoped.clear()
        _scoped_chars[0] = 0
