"""The formatter registry (entry-point group ``agent_eval.formatters``) and :func:`get_formatter`.

Entry point names are releases (``"transcript@1"``) and their objects are :class:`Formatter`
subclasses; the built-ins in the top-level ``formatters`` package are declared in this
project's ``pyproject.toml`` exactly the way a third-party package declares its own::

    [project.entry-points."agent_eval.formatters"]
    "my-format@1" = "my_package.my_format_v1:MyFormatV1"
"""

from __future__ import annotations

from typing import Any

from agent_eval._plugins import Registry
from agent_eval.errors import ConfigError, UnknownPluginError
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._identity import build_params, parse_identity

__all__ = [
    "ENTRY_POINT_GROUP",
    "formatter_class",
    "formatters",
    "get_formatter",
    "new_registry",
    "register",
]

ENTRY_POINT_GROUP = "agent_eval.formatters"
"""The entry-point group formatters register in (``"name@version" = "module:Class"``)."""

FormatterClass = type[Formatter[Any]]


def _adapt(name: str, obj: object) -> FormatterClass:
    if not (isinstance(obj, type) and issubclass(obj, Formatter)):
        raise TypeError(f"formatter {name!r} must be a Formatter subclass, got {obj!r}")
    if obj.release() != name:
        raise ValueError(f"formatter registered as {name!r} declares itself {obj.release()!r}")
    spec = parse_identity(name)
    if spec.version is None or spec.params or not isinstance(obj.version, int):
        raise ValueError(f"formatter {name!r} must be named NAME@VERSION (VERSION an integer)")
    return obj


def new_registry() -> Registry[FormatterClass]:
    """A fresh registry over the entry-point group (the installed plugins as of now)."""
    return Registry("formatter", ENTRY_POINT_GROUP, _adapt)


formatters: Registry[FormatterClass] = new_registry()
"""Every formatter release, by ``name@version``; the one :func:`get_formatter` reads."""


def register(cls: FormatterClass, *, replace: bool = False) -> None:
    """Register ``cls`` under its own ``name@version`` (run time; tests, ``--formatter-path``).

    Raises:
        ValueError: the release is taken by another class and ``replace`` is false.

    """
    if not replace and cls.release() in formatters and formatters.get(cls.release()) is cls:
        return
    formatters.register(cls.release(), cls, replace=replace)


def formatter_class(release: str) -> FormatterClass:
    """The class registered as ``release`` (``name@version``, no parameters).

    Raises:
        ConfigError: no version given; lists the versions of that name.
        UnknownPluginError: nothing is registered under ``release``; lists what is.

    """
    spec = parse_identity(release)
    if spec.version is None:
        versions = [name for name in formatters.names() if name.split("@")[0] == spec.name]
        raise ConfigError(
            f"formatter {spec.name!r} needs a version (NAME@VERSION); "
            f"available: {', '.join(versions or formatters.names())}"
        )
    try:
        return formatters.get(spec.release)
    except UnknownPluginError:
        raise UnknownPluginError("formatter", release, formatters.names()) from None


def get_formatter(identity: str) -> Formatter[Any]:
    """Build the formatter an identity names, e.g. ``"transcript@1[max_tool_chars=2000]"``.

    Raises:
        ConfigError: a malformed identity, a missing version, an unknown parameter or a value of
            the wrong type (the message lists the parameters that exist).
        UnknownPluginError: an unknown name or version (the message lists the registered ones).

    """
    spec = parse_identity(identity)
    cls = formatter_class(spec.release)
    return cls(build_params(spec.release, cls.Params, dict(spec.params)))
