"""One plugin mechanism for every extension point.

Formatters, metrics, judges, conventions and containers are each a :class:`Registry` bound to an
entry-point group (``agent_eval.formatters``, ``agent_eval.metrics``, ``agent_eval.judges``,
``agent_eval.conventions``, ``agent_eval.containers``). Built-in plugins are declared in this
project's ``pyproject.toml`` under the same groups third-party packages use, so they are found the
same way. Entry points are loaded lazily: a lookup by name (:meth:`Registry.get`, ``in``) imports
only the plugin asked for, while listing (``names``, iteration) imports the whole group;
:meth:`Registry.declared_names` lists names from the entry points' metadata alone. A plugin can
also be added at run time with :meth:`Registry.register` (tests, notebooks, ``--formatter-path``).
Where the whole group must be loaded to be ordered (containers, for ``--format auto``), an entry
point can name a light declaration whose implementation is imported on first use
(:class:`~agent_eval.ingest.containers._base.DeferredContainer`); the built-in containers do.
"""

from __future__ import annotations

import itertools
import sys
from collections.abc import Callable, Iterator
from importlib.metadata import EntryPoint, EntryPoints, entry_points
from threading import Lock
from typing import Any, Generic, TypeVar

from agent_eval.errors import ConfigError, UnknownPluginError

__all__ = ["Registry", "public_path"]

T = TypeVar("T")

_scanned: dict[tuple[str, ...], Any] = {}
"""The last scan, keyed by the ``sys.path`` it was made with (at most one entry)."""
_scan_lock = Lock()


def declared_entry_points(group: str) -> EntryPoints:
    """The entry points of ``group`` in every installed distribution, importing none of them.

    :func:`importlib.metadata.entry_points` reads the metadata of every distribution on
    ``sys.path`` (about 20 ms for a hundred distributions) whichever group is asked for, so
    the scan is made once and shared by every registry; it is made again when ``sys.path``
    changes (a distribution added at run time, as the plugin tests do).
    """
    with _scan_lock:
        key = tuple(sys.path)
        if key not in _scanned:
            _scanned.clear()
            _scanned[key] = entry_points()
        return EntryPoints(_scanned[key].select(group=group))


class Registry(Generic[T]):
    """A name -> plugin mapping filled from an entry-point group and explicit registration.

    Args:
        kind: Human name of the plugin kind, used in error messages (``"formatter"``).
        group: The entry-point group, e.g. ``"agent_eval.formatters"``.

    Each entry point's object is loaded with ``EntryPoint.load()``; when it is a callable that
    is not an instance of the plugin type (a factory or class), the registry stores whatever
    the entry point yields: interpreting it is the owner's job, via ``adapt``.

    """

    def __init__(self, kind: str, group: str, adapt: Callable[[str, object], T]) -> None:
        self.kind = kind
        self.group = group
        self._adapt = adapt
        self._items: dict[str, T] = {}
        self._loaded = False
        self._entry_points: dict[str, EntryPoint] | None = None
        self._lock = Lock()
        self._removed: set[str] = set()
        self.broken: dict[str, str] = {}
        """Entry points that failed to load: name -> the error, reported on lookup."""

    def _declared(self) -> dict[str, EntryPoint]:
        """The group's entry points by name (the first one of a name wins), read once."""
        if self._entry_points is None:
            found: dict[str, EntryPoint] = {}
            for ep in declared_entry_points(self.group):
                found.setdefault(ep.name, ep)
            self._entry_points = found
        return self._entry_points

    def _load(self, ep: EntryPoint) -> None:
        """Import ``ep`` unless its name is taken; an import failure is kept in ``broken``."""
        if ep.name in self._items or ep.name in self.broken or ep.name in self._removed:
            return
        try:
            self._items[ep.name] = self._adapt(ep.name, ep.load())
        except Exception as exc:  # a broken plugin must not take the others down
            self.broken[ep.name] = f"{ep.value}: {type(exc).__name__}: {exc}"

    def _load_entry_points(self) -> None:
        with self._lock:
            if self._loaded:
                return
            for ep in self._declared().values():
                self._load(ep)
            self._loaded = True

    def _load_one(self, name: str) -> None:
        """Import only the entry point called ``name``, if there is one."""
        with self._lock:
            ep = self._declared().get(name)
            if ep is not None:
                self._load(ep)

    def register(self, name: str, plugin: object, *, replace: bool = False) -> None:
        """Add ``plugin`` under ``name``.

        Raises:
            ValueError: ``name`` is taken and ``replace`` is false.

        """
        self._load_entry_points()
        if name in self._items and not replace:
            raise ValueError(f"{self.kind} {name!r} is already registered")
        self._items[name] = self._adapt(name, plugin)
        self._removed.discard(name)

    def unregister(self, name: str) -> None:
        """Remove ``name`` if present (used by tests that register temporary plugins).

        An entry point of that name is not loaded again later (entry points load lazily), until
        :meth:`register` adds the name back.
        """
        self._items.pop(name, None)
        self._removed.add(name)

    def get(self, name: str) -> T:
        """Return the plugin registered as ``name``.

        Raises:
            UnknownPluginError: nothing is registered under ``name``; lists what is.
            ConfigError: an entry point named ``name`` exists but failed to import.

        """
        if name not in self._items:
            self._load_one(name)
        if name not in self._items and name not in self.broken:
            self._load_entry_points()  # to list what there is
        try:
            return self._items[name]
        except KeyError:
            if name in self.broken:
                raise ConfigError(
                    f"{self.kind} {name!r} is installed but failed to load ({self.broken[name]}); "
                    "reinstall the package that provides it"
                ) from None
            raise UnknownPluginError(self.kind, name, list(self._items)) from None

    def declared_names(self) -> list[str]:
        """The names of the group's entry points and of registered plugins, sorted.

        Unlike :meth:`names` this imports no plugin (help texts use it), so an entry point that
        would fail to load is listed too; :meth:`get` then says why it cannot be used.
        """
        return sorted(set(self._declared()) | set(self._items))

    def names(self) -> list[str]:
        """All registered names, sorted."""
        self._load_entry_points()
        return sorted(self._items)

    def __iter__(self) -> Iterator[tuple[str, T]]:
        self._load_entry_points()
        return iter(sorted(self._items.items()))

    def __contains__(self, name: object) -> bool:
        """Whether ``name`` is registered and loads; imports only that plugin, if any."""
        if isinstance(name, str) and name not in self._items:
            self._load_one(name)
        return name in self._items


def public_path(cls: type) -> str:
    """``MODULE:QUALNAME`` of ``cls`` by the public face it is imported from.

    Implementation modules are private (``agent_eval.judges._openai_judge``); the public path
    is the longest prefix of ``cls.__module__`` without a ``_``-part whose module exports
    ``cls`` under its own name (``agent_eval.judges:OpenAIJudge``). A class no face exports
    (a third-party plugin, or one kept private) is named by its own module.

    Args:
        cls: A class.

    Returns:
        ``"agent_eval.judges:OpenAIJudge"``-style text, for listings and messages.
    """
    parts = cls.__module__.split(".")
    public = list(itertools.takewhile(lambda part: not part.startswith("_"), parts))
    if len(public) < len(parts):
        for end in range(len(public), 0, -1):
            module = sys.modules.get(".".join(public[:end]))
            if module is not None and getattr(module, cls.__qualname__, None) is cls:
                return f"{module.__name__}:{cls.__qualname__}"
    return f"{cls.__module__}:{cls.__qualname__}"
