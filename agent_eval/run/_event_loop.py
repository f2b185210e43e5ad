"""The event loop every asyncio entry point of agent-eval runs on: :func:`run`.

agent-eval's judge client is CPU-bound at high concurrency (issue 15: the client's CPU per judge
call decides the calls per second of one core), and the event loop is part of that cost. So
commands run their coroutine on `uvloop <https://github.com/MagicStack/uvloop>`_ (libuv, the
loop written in Cython) when it is installed and supported, and on asyncio's own loop
otherwise. uvloop is a dependency on CPython outside Windows (``pyproject.toml`` marker); it
has no Windows build.

Choose with the environment variable :data:`LOOP_ENV` (``AGENT_EVAL_EVENT_LOOP``):

- ``auto`` (default, also when unset or empty): uvloop when it can be imported, else asyncio;
- ``asyncio``: asyncio's default loop (the opt-out);
- ``uvloop``: uvloop, and an error when it is not installed.

Results do not depend on the loop (the golden tests run under both). The loop is built through
public API only: ``asyncio.Runner(loop_factory=uvloop.new_event_loop)``, which is what
``uvloop.run`` does on Python >= 3.11.
"""

from __future__ import annotations

import asyncio
import os
import sys
from collections.abc import Callable, Coroutine
from typing import Any, Literal, TypeVar

from agent_eval.errors import ConfigError

__all__ = ["LOOPS", "LOOP_ENV", "LoopName", "loop_factory", "loop_name", "run"]

T = TypeVar("T")

LoopName = Literal["asyncio", "uvloop"]
LOOP_ENV = "AGENT_EVAL_EVENT_LOOP"
"""Environment variable choosing the event loop: ``auto`` (default), ``asyncio`` or ``uvloop``."""
LOOPS = ("auto", "asyncio", "uvloop")
"""The values :data:`LOOP_ENV` takes."""


def _choice() -> str:
    value = os.environ.get(LOOP_ENV, "").strip().lower() or "auto"
    if value not in LOOPS:
        raise ConfigError(
            f"{LOOP_ENV}={os.environ[LOOP_ENV]!r} is not an event loop agent-eval knows; "
            f"set it to one of {', '.join(LOOPS)} (or unset it for auto)"
        )
    return value


def loop_factory() -> Callable[[], asyncio.AbstractEventLoop] | None:
    """The factory of the loop :data:`LOOP_ENV` asks for; ``None`` for asyncio's default loop.

    Raises:
        ConfigError: :data:`LOOP_ENV` has an unknown value, or says ``uvloop`` and uvloop
            cannot be imported.

    """
    choice = _choice()
    if choice == "asyncio":
        return None
    try:
        import uvloop
    except ImportError:
        if choice == "uvloop":
            where = " (it has no Windows build)" if sys.platform == "win32" else ""
            raise ConfigError(
                f"{LOOP_ENV}=uvloop but uvloop is not installed{where}: "
                f"pip install uvloop, or set {LOOP_ENV}=asyncio"
            ) from None
        return None
    factory: Callable[[], asyncio.AbstractEventLoop] = uvloop.new_event_loop
    return factory


def loop_name() -> LoopName:
    """The loop :func:`run` uses in this environment: ``uvloop`` or ``asyncio``.

    Raises:
        ConfigError: as :func:`loop_factory`.

    """
    return "asyncio" if loop_factory() is None else "uvloop"


def run(coro: Coroutine[Any, Any, T]) -> T:
    """Run ``coro`` to completion on a new event loop (see the module doc); its result.

    Like :func:`asyncio.run`: the loop is closed afterwards, Ctrl-C cancels the coroutine and
    raises :class:`KeyboardInterrupt`, and calling it from a running loop raises
    :class:`RuntimeError`.

    Raises:
        ConfigError: :data:`LOOP_ENV` is invalid (the coroutine is closed unrun).

    """
    try:
        asyncio.get_running_loop()
    except RuntimeError:
        pass
    else:  # as asyncio.run: before a loop is made (closing it would fail inside this one)
        coro.close()
        raise RuntimeError("event_loop.run() cannot be called from a running event loop")
    try:
        factory = loop_factory()
    except ConfigError:
        coro.close()
        raise
    with asyncio.Runner(loop_factory=factory) as runner:
        return runner.run(coro)
