"""Load formatters from a directory, a ``.py`` file or a dotted module path (``--formatter-path``).

Every concrete :class:`Formatter` subclass *defined* in the loaded modules (not merely imported
there) is registered under its ``name@version``, exactly as if it came from an entry point. A
directory loads each ``*.py`` in it whose name does not start with ``_``, in sorted order.
"""

from __future__ import annotations

import hashlib
import importlib
import importlib.util
import inspect
import sys
from pathlib import Path
from types import ModuleType

from agent_eval.errors import ConfigError
from agent_eval.formatting._base import Formatter
from agent_eval.formatting._registry import FormatterClass, formatters

__all__ = ["USER_FORMATTERS_PACKAGE", "load_formatters"]


USER_FORMATTERS_PACKAGE = "agent_eval_user_formatters"
"""The package name under which formatter files (``--formatter-path``) are imported: no
other process can import them by that name (a Ray worker gets their code by value)."""


def _import_file(path: Path) -> ModuleType:
    digest = hashlib.sha256(str(path.resolve()).encode()).hexdigest()[:12]
    module_name = f"{USER_FORMATTERS_PACKAGE}.{path.stem}_{digest}"
    if module_name in sys.modules:
        return sys.modules[module_name]
    spec = importlib.util.spec_from_file_location(module_name, path)
    if spec is None or spec.loader is None:
        raise ConfigError(f"{path}: cannot be imported as a Python module")
    module = importlib.util.module_from_spec(spec)
    sys.modules[module_name] = module
    try:
        spec.loader.exec_module(module)
    except Exception as exc:
        del sys.modules[module_name]
        raise ConfigError(f"{path}: importing it failed: {type(exc).__name__}: {exc}") from exc
    return module


def _modules(location: str) -> list[ModuleType]:
    path = Path(location)
    if path.is_dir():
        return [_import_file(p) for p in sorted(path.glob("*.py")) if not p.name.startswith("_")]
    if path.suffix == ".py":
        if not path.is_file():
            raise ConfigError(f"formatter path {location!r} does not exist")
        return [_import_file(path)]
    try:
        return [importlib.import_module(location)]
    except ImportError as exc:
        raise ConfigError(
            f"formatter path {location!r} is neither a directory, a .py file nor an importable "
            f"module ({exc})"
        ) from None


def _defined_formatters(module: ModuleType) -> list[FormatterClass]:
    return [
        obj
        for _, obj in inspect.getmembers(module, inspect.isclass)
        if issubclass(obj, Formatter)
        and obj.__module__ == module.__name__
        and not inspect.isabstract(obj)
    ]


def load_formatters(location: str | Path) -> list[FormatterClass]:
    """Import ``location`` and register the formatters it defines.

    Args:
        location: A directory, a ``.py`` file, or a dotted module path (``my_pkg.formatters``).

    Returns:
        The formatter classes registered, in module then name order.

    Raises:
        ConfigError: the location cannot be imported, defines no formatter, or defines a
            release that another class already holds.

    """
    found = [cls for module in _modules(str(location)) for cls in _defined_formatters(module)]
    if not found:
        raise ConfigError(f"no Formatter subclass is defined in {str(location)!r}")
    for cls in found:
        taken = formatters.get(cls.release()) if cls.release() in formatters else cls
        if taken is not cls:
            raise ConfigError(
                f"{cls.__module__}.{cls.__qualname__} declares {cls.release()}, which "
                f"{taken.__module__}.{taken.__qualname__} already provides; give it a new "
                "name or version"
            )
        formatters.register(cls.release(), cls, replace=True)
    return found
